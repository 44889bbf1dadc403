#include "s3/xml_util.h"

#include <gtest/gtest.h>

#include "s3/time_util.h"

namespace bucketfs::s3 {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

// 2009-10-12T17:50:30Z as seconds since the epoch (date -u -d ... +%s).
constexpr int64_t k20091012 = 1255369830;

SysTime At(int64_t secs, int ms = 0) {
  return SysTime(std::chrono::duration_cast<SysTime::duration>(seconds(secs) + milliseconds(ms)));
}

TEST(XmlTimeTest, ParsesIso8601WithAndWithoutMillis) {
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.000Z"), At(k20091012));
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30Z"), At(k20091012));
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.5Z"), At(k20091012, 500));
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.123456789Z"), At(k20091012, 123));
  EXPECT_EQ(ParseIso8601(" 2009-10-12T17:50:30.250Z\n"), At(k20091012, 250));
  EXPECT_EQ(ParseIso8601("2009-10-12T19:50:30+02:00"), At(k20091012));
  EXPECT_EQ(ParseIso8601("2009-10-12T16:50:30-0100"), At(k20091012));
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:00Z"), At(0));
}

TEST(XmlTimeTest, RejectsBadIso8601) {
  for (const char* bad : {"", "2009-10-12", "2009-10-12T17:50:30", "2009-13-12T17:50:30Z",
                          "2009-02-30T17:50:30Z", "2009-10-12T25:00:00Z", "2009-10-12T17:50:30.Z",
                          "2009-10-12T17:50:30Zjunk", "yesterday", "2009-1-12T17:50:30Z"}) {
    EXPECT_FALSE(ParseIso8601(bad)) << bad;
  }
}

TEST(XmlTimeTest, RefusesDatesTheClockCannotHold) {
  EXPECT_FALSE(ParseIso8601("1010-01-01T00:00:00Z"));
  EXPECT_FALSE(ParseIso8601("9999-12-31T23:59:59Z"));
  EXPECT_FALSE(ParseHttpDate("Mon, 01 Jan 0001 00:00:00 GMT"));
  EXPECT_TRUE(ParseIso8601("1678-01-01T00:00:00Z"));
  EXPECT_TRUE(ParseIso8601("2261-12-31T23:59:59Z"));
}

TEST(XmlTimeTest, ParsesHttpDates) {
  EXPECT_EQ(ParseHttpDate("Mon, 12 Oct 2009 17:50:30 GMT"), At(k20091012));
  EXPECT_EQ(ParseHttpDate("Monday, 12-Oct-09 17:50:30 GMT"), At(k20091012));
  EXPECT_EQ(ParseHttpDate("Mon Oct 12 17:50:30 2009"), At(k20091012));
  EXPECT_EQ(ParseHttpDate("Mon, 2 Nov 2009 00:00:00 GMT"), At(1257120000));
  EXPECT_FALSE(ParseHttpDate("Mon, 12 Oct 2009 17:50:30"));
  EXPECT_FALSE(ParseHttpDate("12 Oct 2009 17:50:30 GMT"));
  EXPECT_FALSE(ParseHttpDate(""));
  EXPECT_FALSE(ParseHttpDate("Mon, 32 Oct 2009 17:50:30 GMT"));
}

TEST(XmlTimeTest, FormatsRoundTrip) {
  EXPECT_EQ(FormatIso8601(At(k20091012, 7)), "2009-10-12T17:50:30.007Z");
  EXPECT_EQ(FormatHttpDate(At(k20091012)), "Mon, 12 Oct 2009 17:50:30 GMT");
  const SysTime now = std::chrono::time_point_cast<milliseconds>(system_clock::now());
  EXPECT_EQ(ParseIso8601(FormatIso8601(now)), now);
}

TEST(XmlUtilTest, TypedGettersReadValuesAndIgnoreUnknownElements) {
  pugi::xml_document doc;
  ASSERT_TRUE(xml::ParseXmlDocument(
                  "<?xml version=\"1.0\"?><R xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                  "<Fancy><Nested/></Fancy><Name>a &amp; b</Name><Size> 42 </Size>"
                  "<Neg>-7</Neg><Flag>TRUE</Flag><When>2009-10-12T17:50:30.000Z</When>"
                  "<C><![CDATA[x<y]]></C></R>",
                  "Test", doc)
                  .ok());
  auto root = xml::RootElement(doc, "R", "Test");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(xml::GetText(*root, "Name"), "a & b");
  EXPECT_EQ(xml::GetText(*root, "C"), "x<y");
  EXPECT_FALSE(xml::GetText(*root, "Missing"));
  EXPECT_EQ(xml::GetTextOr(*root, "Missing", "dflt"), "dflt");
  EXPECT_EQ(*xml::GetUint64(*root, "Size", "Test"), 42u);
  EXPECT_EQ(*xml::GetInt(*root, "Neg", "Test"), -7);
  EXPECT_TRUE(*xml::GetBool(*root, "Flag", "Test"));
  EXPECT_EQ(*xml::GetTimestamp(*root, "When", "Test"), At(k20091012));
  EXPECT_EQ(*xml::GetUint64(*root, "Missing", "Test", 9), 9u);
  auto missing = xml::GetUint64(*root, "Missing", "Test");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "MalformedResponse");
  EXPECT_EQ(missing.error().errno_value, EIO);
}

TEST(XmlUtilTest, MalformedValuesAreErrorsEvenWithFallback) {
  pugi::xml_document doc;
  ASSERT_TRUE(xml::ParseXmlDocument("<R><Size>12abc</Size><Neg>-1</Neg><Flag>yes</Flag>"
                                    "<When>last tuesday</When><Empty/></R>",
                                    "Op", doc)
                  .ok());
  pugi::xml_node r = doc.document_element();
  auto size = xml::GetUint64(r, "Size", "Op", 0);
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().message.find("Op"), std::string::npos);
  EXPECT_NE(size.error().message.find("Size"), std::string::npos);
  EXPECT_FALSE(xml::GetUint64(r, "Neg", "Op").ok());  // negative is not unsigned
  EXPECT_FALSE(xml::GetBool(r, "Flag", "Op", false).ok());
  EXPECT_FALSE(xml::GetTimestamp(r, "When", "Op").ok());
  EXPECT_FALSE(xml::GetUint64(r, "Empty", "Op", 0).ok());
  EXPECT_FALSE(xml::GetUint64(r, "Empty", "Op", 0).ok());
}

TEST(XmlUtilTest, UnsignedOverflowIsAnError) {
  pugi::xml_document doc;
  ASSERT_TRUE(xml::ParseXmlDocument("<R><Big>18446744073709551616</Big></R>", "Op", doc).ok());
  EXPECT_FALSE(xml::GetUint64(doc.document_element(), "Big", "Op").ok());
}

TEST(XmlUtilTest, PrefixedNamespacesMatchByLocalName) {
  pugi::xml_document doc;
  ASSERT_TRUE(
      xml::ParseXmlDocument("<s3:R xmlns:s3=\"urn:x\"><s3:Key>k</s3:Key></s3:R>", "Op", doc).ok());
  auto root = xml::RootElement(doc, "R", "Op");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(xml::GetText(*root, "Key"), "k");
}

TEST(XmlUtilTest, MalformedTruncatedEmptyAndHtmlBodiesAreClearErrors) {
  struct Case {
    const char* body;
    const char* expect;  // substring of the message
  } cases[] = {
      {"", "empty response body"},
      {"   \n", "empty response body"},
      {"<R><Key>abc</Key>", "malformed XML"},      // truncated
      {"<R><Key>abc</Kee></R>", "malformed XML"},  // mismatched
      {"not xml at all", "malformed XML"},
      {"<R attr=noquote/>", "malformed XML"},
  };
  for (const auto& c : cases) {
    pugi::xml_document doc;
    Status st = xml::ParseXmlDocument(c.body, "ListObjectsV2", doc);
    ASSERT_FALSE(st.ok()) << c.body;
    EXPECT_EQ(st.error().code, "MalformedResponse");
    EXPECT_EQ(st.error().errno_value, EIO);
    EXPECT_NE(st.error().message.find("ListObjectsV2"), std::string::npos) << st.error().message;
    EXPECT_NE(st.error().message.find(c.expect), std::string::npos) << st.error().message;
  }
  // Well-formed but not what was asked for: an HTML page.
  pugi::xml_document doc;
  ASSERT_TRUE(xml::ParseXmlDocument("<html><body><h1>502 Bad Gateway</h1></body></html>",
                                    "ListObjectsV2", doc)
                  .ok());
  auto root = xml::RootElement(doc, "ListBucketResult", "ListObjectsV2");
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.error().message.find("got <html>"), std::string::npos);
}

TEST(XmlUtilTest, SerializeEscapesText) {
  pugi::xml_document doc;
  pugi::xml_node r = doc.append_child("R");
  r.append_child("Key").append_child(pugi::node_pcdata).set_value("a<b>&c\"d");
  const std::string out = xml::Serialize(doc);
  EXPECT_EQ(out, "<?xml version=\"1.0\"?><R><Key>a&lt;b&gt;&amp;c\"d</Key></R>");
  pugi::xml_document back;
  ASSERT_TRUE(xml::ParseXmlDocument(out, "Op", back).ok());
  EXPECT_EQ(xml::GetText(back.document_element(), "Key"), "a<b>&c\"d");
}

TEST(XmlUtilTest, SerializeKeepsLineBreaksAndControlCharacters) {
  const std::string text = "a\r\nb\rc\nd\te\x01f";
  pugi::xml_document doc;
  doc.append_child("R").append_child("Key").append_child(pugi::node_pcdata).set_value(text.c_str());
  const std::string out = xml::Serialize(doc);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_NE(out.find("a&#13;&#10;b&#13;c&#10;d"), std::string::npos) << out;
  pugi::xml_document back;
  ASSERT_TRUE(xml::ParseXmlDocument(out, "Op", back).ok());
  EXPECT_EQ(xml::GetText(back.document_element(), "Key"), text);
}

}  // namespace
}  // namespace bucketfs::s3
