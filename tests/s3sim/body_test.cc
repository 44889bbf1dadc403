#include "tests/s3sim/body.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "tests/s3sim/http_message.h"
#include "tests/s3sim/response_writer.h"
#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

BufferPtr Buf(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

TEST(Body, ChunksReadAsOneSequence) {
  Body b({Buf("abc"), Buf(""), Buf("defg"), Buf("h")});
  EXPECT_EQ(b.size(), 8u);
  EXPECT_EQ(b.chunk_count(), 3u);  // the empty one is skipped
  EXPECT_EQ(b, "abcdefgh");
  EXPECT_FALSE(b == "abcdefgx");
  EXPECT_FALSE(b == "abcdefg");
  EXPECT_EQ(b.Piece(0), "abc");
  EXPECT_EQ(b.Piece(2), "c");
  EXPECT_EQ(b.Piece(3), "defg");
  EXPECT_EQ(b.Piece(6), "g");
  EXPECT_EQ(b.Piece(7), "h");
  EXPECT_EQ(b.Piece(8), "");
  EXPECT_EQ(b.Substr(2, 4), "cdef");
  EXPECT_EQ(b.Substr(5, 100), "fgh");
  EXPECT_EQ(b.Substr(9, 1), "");
  EXPECT_EQ(b.Str(), "abcdefgh");
  EXPECT_EQ(b.Md5(), Md5("abcdefgh"));
  EXPECT_EQ(Body().Md5(), Md5(""));
  EXPECT_EQ(Body(std::string("xyz")), "xyz");
}

// What the client reads from WriteResponse on the other end of a socket pair.
std::string Send(const HttpResponse& resp) {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = read(sv[1], buf, sizeof buf)) > 0;)
      got.append(buf, static_cast<size_t>(n));
  });
  WriteResponse(sv[0], resp, false, WriteOptions{});
  close(sv[0]);
  reader.join();
  close(sv[1]);
  return got.substr(got.find("\r\n\r\n") + 4);
}

TEST(Body, ResponsesSendRangesAcrossChunks) {
  // Chunks larger than a send slice and smaller, so slices end at both.
  std::string a(3 << 20, 'a'), b = "0123456789", c(1 << 20, 'c');
  for (size_t i = 0; i < a.size(); i += 4093) a[i] = static_cast<char>('A' + i % 26);
  auto body = std::make_shared<const Body>(std::vector<BufferPtr>{Buf(a), Buf(b), Buf(c)});
  const std::string all = a + b + c;
  HttpResponse resp;
  resp.data = body;
  resp.data_offset = 0;
  resp.data_length = body->size();
  EXPECT_TRUE(Send(resp) == all);
  resp.data_offset = a.size() - 5;  // from the end of the first chunk into the third
  resp.data_length = 5 + b.size() + 7;
  EXPECT_EQ(Send(resp), all.substr(a.size() - 5, 22));
  resp.data_offset = a.size() + 3;  // inside the middle chunk
  resp.data_length = 4;
  EXPECT_EQ(Send(resp), "3456");
}

}  // namespace
}  // namespace s3sim
