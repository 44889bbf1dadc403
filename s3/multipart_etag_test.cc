#include "s3/multipart_etag.h"

#include <gtest/gtest.h>

namespace bucketfs::s3 {
namespace {

// md5("a") and md5("b"); the object of the two parts "a" and "b" is named by
// md5(md5("a") || md5("b")) and the count, as AWS documents for multipart objects.
TEST(MultipartEtag, IsTheMd5OfThePartMd5sAndTheCount) {
  auto e = ExpectedMultipartEtag(
      {{1, "\"0cc175b9c0f1b6a831c399e269772661\""}, {2, "92EB5FFEE6AE2FEC3AD71C777531578F"}});
  ASSERT_TRUE(e.has_value());
  // printf '%s' $(printf a|md5sum|cut -c1-32)$(printf b|md5sum|cut -c1-32) | xxd -r -p | md5sum
  EXPECT_EQ(*e, "96e024ba2074fe77e8e965ba43a704be-2");
}

TEST(MultipartEtag, UnknownWhenAPartEtagIsNotAnMd5) {
  EXPECT_FALSE(ExpectedMultipartEtag({{1, "\"a\""}}).has_value());
  EXPECT_FALSE(ExpectedMultipartEtag({{1, ""}}).has_value());
  EXPECT_FALSE(ExpectedMultipartEtag({{1, "0cc175b9c0f1b6a831c399e26977266z"}}).has_value());
  EXPECT_FALSE(ExpectedMultipartEtag({}).has_value());
}

TEST(MultipartEtag, SameEtagIgnoresQuotesAndCaseOnly) {
  EXPECT_TRUE(SameEtag("\"abc-2\"", "ABC-2"));
  EXPECT_FALSE(SameEtag("abc-2", "abc-3"));
  EXPECT_FALSE(SameEtag("", ""));
}

}  // namespace
}  // namespace bucketfs::s3
