// SigV4 against AWS's published vectors (the generic SigV4 test suite, as
// kept by aws-c-auth, and the S3 API reference's worked examples), plus a
// cross-check against libcurl's CURLOPT_AWS_SIGV4 over a loopback socket.
#include "s3/sigv4_signer.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace bucketfs::s3 {
namespace {

std::chrono::system_clock::time_point ParseAmzDate(const std::string& s) {
  std::tm tm{};
  EXPECT_NE(strptime(s.c_str(), "%Y%m%dT%H%M%SZ", &tm), nullptr) << s;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

struct Vector {
  std::string name;
  SigningRequest request;
  Credentials credentials;
  std::string service;
  std::string amz_date;
  bool add_content_sha256 = false;
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;
};

const Credentials kSuiteCreds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", false};
const Credentials kS3Creds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "",
                           false};
const std::string kEmpty(kEmptyPayloadSha256);

std::string SuiteSts(const std::string& hash) {
  return "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n" + hash;
}
std::string S3Sts(const std::string& hash) {
  return "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n" + hash;
}

std::vector<Vector> Vectors() {
  std::vector<Vector> v;
  const HttpHeaders host = {{"Host", "example.amazonaws.com"}};
  // --- AWS SigV4 test suite (service "service"; no x-amz-content-sha256).
  v.push_back({"get-vanilla",
               {"GET", "/", {}, host, kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
               "host;x-amz-date\n" +
                   kEmpty,
               SuiteSts("bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"),
               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"});
  v.push_back({"get-vanilla-query-order-key-case",
               {"GET", "/", {{"Param2", "value2"}, {"Param1", "value1"}}, host, kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\n"
               "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" +
                   kEmpty,
               SuiteSts("816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0"),
               "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"});
  v.push_back({"get-header-value-trim",
               {"GET",
                "/",
                {},
                {{"Host", "example.amazonaws.com"},
                 {"My-Header1", " value1"},
                 {"My-Header2", " \"a   b   c\""}},
                kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\n"
               "x-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n" +
                   kEmpty,
               SuiteSts("a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7"),
               "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"});
  // aws-c-auth's variant signs the body hash as x-amz-content-sha256.
  const std::string form_hash = Sha256Hex(std::string_view("Param1=value1"));
  v.push_back({"post-x-www-form-urlencoded",
               {"POST",
                "/",
                {},
                {{"Content-Type", "application/x-www-form-urlencoded"},
                 {"Host", "example.amazonaws.com"},
                 {"Content-Length", "13"}},
                form_hash},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               true,
               "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-urlencoded\n"
               "host:example.amazonaws.com\nx-amz-content-sha256:" +
                   form_hash +
                   "\nx-amz-date:20150830T123600Z\n\n"
                   "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n" +
                   form_hash,
               SuiteSts("b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb"),
               "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"});
  Credentials with_token = kSuiteCreds;
  with_token.session_token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
  v.push_back({"get-vanilla-with-session-token",
               {"GET", "/", {}, host, kEmpty},
               with_token,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n"
               "x-amz-security-token:" +
                   with_token.session_token + "\n\nhost;x-amz-date;x-amz-security-token\n" + kEmpty,
               SuiteSts("067b36aa60031588cea4a4cde1f21215227a047690c72247f1d70b32fbbfad2b"),
               "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"});
  const std::string unreserved =
      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  v.push_back({"get-vanilla-query-unreserved",
               {"GET", "/", {{unreserved, unreserved}}, host, kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/\n" + unreserved + "=" + unreserved +
                   "\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
                   "host;x-amz-date\n" +
                   kEmpty,
               SuiteSts("c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177"),
               "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"});
  v.push_back({"get-vanilla-utf8-query",
               {"GET", "/", {{"\xE1\x88\xB4", "bar"}}, host, kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/\n%E1%88%B4=bar\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
               "host;x-amz-date\n" +
                   kEmpty,
               SuiteSts("eb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073"),
               "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"});
  v.push_back({"get-space (path given encoded)",
               {"GET", "/example%20space/", {}, host, kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "GET\n/example%20space/\n\nhost:example.amazonaws.com\n"
               "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" +
                   kEmpty,
               SuiteSts("63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86"),
               "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"});
  v.push_back({"post-vanilla-query",
               {"POST", "/", {{"Param1", "value1"}}, host, kEmpty},
               kSuiteCreds,
               "service",
               "20150830T123600Z",
               false,
               "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
               "host;x-amz-date\n" +
                   kEmpty,
               SuiteSts("9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd"),
               "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"});

  // --- S3 API reference examples (x-amz-content-sha256 signed).
  const HttpHeaders s3host = {{"Host", "examplebucket.s3.amazonaws.com"}};
  v.push_back({"s3-get-object-range",
               {"GET",
                "/test.txt",
                {},
                {{"Host", "examplebucket.s3.amazonaws.com"}, {"Range", "bytes=0-9"}},
                kEmpty},
               kS3Creds,
               "s3",
               "20130524T000000Z",
               true,
               "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
               "x-amz-content-sha256:" +
                   kEmpty +
                   "\nx-amz-date:20130524T000000Z\n\n"
                   "host;range;x-amz-content-sha256;x-amz-date\n" +
                   kEmpty,
               S3Sts("7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972"),
               "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"});
  const std::string put_hash = Sha256Hex(std::string_view("Welcome to Amazon S3."));
  v.push_back({"s3-put-object",
               {"PUT",
                "/" + UriEncode("test$file.text", false),
                {},
                {{"Host", "examplebucket.s3.amazonaws.com"},
                 {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                 {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                put_hash},
               kS3Creds,
               "s3",
               "20130524T000000Z",
               true,
               "PUT\n/test%24file.text\n\ndate:Fri, 24 May 2013 00:00:00 GMT\n"
               "host:examplebucket.s3.amazonaws.com\nx-amz-content-sha256:" +
                   put_hash +
                   "\nx-amz-date:20130524T000000Z\nx-amz-storage-class:REDUCED_REDUNDANCY\n\n"
                   "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n" +
                   put_hash,
               S3Sts("9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d"),
               "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"});
  v.push_back(
      {"s3-get-bucket-lifecycle",
       {"GET", "/", {{"lifecycle", ""}}, s3host, kEmpty},
       kS3Creds,
       "s3",
       "20130524T000000Z",
       true,
       "GET\n/\nlifecycle=\nhost:examplebucket.s3.amazonaws.com\nx-amz-content-sha256:" + kEmpty +
           "\nx-amz-date:20130524T000000Z\n\nhost;x-amz-content-sha256;x-amz-date\n" + kEmpty,
       S3Sts("9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca"),
       "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"});
  v.push_back({"s3-list-objects",
               {"GET", "/", {{"prefix", "J"}, {"max-keys", "2"}}, s3host, kEmpty},
               kS3Creds,
               "s3",
               "20130524T000000Z",
               true,
               "GET\n/\nmax-keys=2&prefix=J\nhost:examplebucket.s3.amazonaws.com\n"
               "x-amz-content-sha256:" +
                   kEmpty +
                   "\nx-amz-date:20130524T000000Z\n\nhost;x-amz-content-sha256;x-amz-date\n" +
                   kEmpty,
               S3Sts("df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7"),
               "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"});
  return v;
}

class SigV4VectorTest : public testing::TestWithParam<Vector> {};

TEST_P(SigV4VectorTest, MatchesPublishedVector) {
  const Vector& v = GetParam();
  SigningContext ctx;
  ctx.region = "us-east-1";
  ctx.service = v.service;
  ctx.now = ParseAmzDate(v.amz_date);
  ctx.add_content_sha256_header = v.add_content_sha256;
  const SignedRequestParts parts = SignV4(v.request, v.credentials, ctx);
  EXPECT_EQ(parts.amz_date, v.amz_date);
  EXPECT_EQ(parts.canonical_request, v.canonical_request);
  EXPECT_EQ(parts.string_to_sign, v.string_to_sign);
  EXPECT_EQ(parts.signature, v.signature);
  EXPECT_NE(parts.authorization.find("Signature=" + v.signature), std::string::npos);
  EXPECT_EQ(parts.authorization.rfind("AWS4-HMAC-SHA256 Credential=" + v.credentials.access_key_id +
                                          "/" + v.amz_date.substr(0, 8) + "/us-east-1/" +
                                          v.service + "/aws4_request, SignedHeaders=",
                                      0),
            0u);
}

INSTANTIATE_TEST_SUITE_P(SigV4Published, SigV4VectorTest, testing::ValuesIn(Vectors()),
                         [](const testing::TestParamInfo<Vector>& p) {
                           std::string name;
                           for (char c : p.param.name) {
                             if (std::isalnum(static_cast<unsigned char>(c)) != 0) name += c;
                           }
                           return name;
                         });

TEST(SigV4Signer, HeadersToAddCarryDateHashTokenAndAuthorization) {
  Credentials creds = kS3Creds;
  creds.session_token = "TOKEN";
  SigningContext ctx{"us-east-1", "s3", ParseAmzDate("20130524T000000Z")};
  SigningRequest req{
      "GET", "/k", {}, {{"host", "b.s3.amazonaws.com"}}, std::string(kUnsignedPayload)};
  const auto parts = SignV4(req, creds, ctx);
  ASSERT_EQ(parts.headers_to_add.size(), 4u);
  EXPECT_EQ(parts.headers_to_add[0],
            (std::pair<std::string, std::string>{"x-amz-date", "20130524T000000Z"}));
  EXPECT_EQ(parts.headers_to_add[1].first, "x-amz-content-sha256");
  EXPECT_EQ(parts.headers_to_add[1].second, "UNSIGNED-PAYLOAD");
  EXPECT_EQ(parts.headers_to_add[2].first, "x-amz-security-token");
  EXPECT_EQ(parts.headers_to_add[3].first, "Authorization");
  EXPECT_NE(parts.authorization.find("SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
                                     "x-amz-security-token,"),
            std::string::npos);
  EXPECT_EQ(parts.canonical_request.substr(parts.canonical_request.size() - 16),
            "UNSIGNED-PAYLOAD");
}

// Each thread keeps the last signing key it derived: a signature must still
// depend on its own inputs only, whatever the thread signed before, when any
// one of secret, day, region or service changes between two requests.
TEST(SigV4Signer, SignatureDoesNotDependOnWhatTheThreadSignedBefore) {
  struct Input {
    Credentials creds;
    SigningContext ctx;
  };
  const Input base{kS3Creds, {"us-east-1", "s3", ParseAmzDate("20130524T000000Z")}};
  std::vector<Input> inputs = {base, base, base, base, base};
  inputs[1].creds.secret_access_key += "X";
  inputs[2].ctx.now = ParseAmzDate("20130525T000000Z");  // the next day
  inputs[3].ctx.region = "eu-west-1";
  inputs[4].ctx.service = "service";
  const SigningRequest req{
      "GET", "/k", {}, {{"host", "b.s3.amazonaws.com"}}, std::string(kUnsignedPayload)};

  // On a fresh thread each: nothing signed before.
  std::vector<std::string> fresh;
  for (const auto& in : inputs) {
    std::thread([&] { fresh.push_back(SignV4(req, in.creds, in.ctx).signature); }).join();
  }
  for (size_t i = 1; i < fresh.size(); ++i) EXPECT_NE(fresh[i], fresh[0]) << i;
  // On one thread, alternating with the base input.
  for (size_t i = 1; i < inputs.size(); ++i) {
    EXPECT_EQ(SignV4(req, base.creds, base.ctx).signature, fresh[0]) << i;
    EXPECT_EQ(SignV4(req, inputs[i].creds, inputs[i].ctx).signature, fresh[i]) << i;
  }
  EXPECT_EQ(SignV4(req, base.creds, base.ctx).signature, fresh[0]);
}

TEST(SigV4Signer, CallerCopiesOfSignerHeadersAreReplacedAndDuplicatesJoined) {
  SigningContext ctx{"us-east-1", "s3", ParseAmzDate("20130524T000000Z")};
  SigningRequest req{"GET",
                     "/",
                     {},
                     {{"Host", "h"},
                      {"X-Amz-Date", "19990101T000000Z"},
                      {"x-amz-meta-a", "1"},
                      {"X-AMZ-META-A", "2"}},
                     kEmpty};
  const auto parts = SignV4(req, kS3Creds, ctx);
  EXPECT_NE(parts.canonical_request.find("x-amz-date:20130524T000000Z\n"), std::string::npos);
  EXPECT_EQ(parts.canonical_request.find("19990101"), std::string::npos);
  EXPECT_NE(parts.canonical_request.find("x-amz-meta-a:1,2\n"), std::string::npos);
}

TEST(SigV4Signer, UriEncode) {
  EXPECT_EQ(UriEncode("a b/c+d%e?f#g~h", false), "a%20b/c%2Bd%25e%3Ff%23g~h");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("\xC3\xA9", false), "%C3%A9");
  EXPECT_EQ(UriEncode("", true), "");
  EXPECT_EQ(UriEncode("AZaz09-_.~", true), "AZaz09-_.~");
}

TEST(SigV4Signer, CanonicalQuerySortsByEncodedKeyThenValue) {
  EXPECT_EQ(CanonicalQueryString({{"b", "2"}, {"a", "z"}, {"a", "y"}, {"a b", "/"}}),
            "a=y&a=z&a%20b=%2F&b=2");
  EXPECT_EQ(CanonicalQueryString({}), "");
}

TEST(SigV4Signer, DigestHelpers) {
  EXPECT_EQ(Sha256Hex(std::string_view("")), kEmptyPayloadSha256);
  const std::string abc = "abc";
  EXPECT_EQ(Sha256Hex(std::as_bytes(std::span<const char>(abc))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // RFC 1864 style: base64(md5("abc")).
  EXPECT_EQ(Md5Base64(std::as_bytes(std::span<const char>(abc))), "kAFQmDzST7DWlj99KOF/cg==");
  EXPECT_EQ(FormatAmzDate(ParseAmzDate("20150830T123600Z")), "20150830T123600Z");
  EXPECT_EQ(DeriveSigningKey("k", "20150830", "r", "s").size(), 32u);
}

// --- Cross-check with libcurl's own SigV4 implementation.

// Accepts one connection on a loopback port, records the request head and
// answers 200 with an empty body.
class OneShotServer {
 public:
  OneShotServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneShotServer() {
    // Wakes a still-blocked accept() when the client never connected.
    shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  // REQUIRES: the client finished.
  std::string head() {
    if (thread_.joinable()) thread_.join();
    return head_;
  }

 private:
  void Serve() {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    while (head_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = read(c, buf, sizeof(buf));
      if (n <= 0) break;
      head_.append(buf, static_cast<size_t>(n));
    }
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    EXPECT_EQ(write(c, reply.data(), reply.size()), static_cast<ssize_t>(reply.size()));
    close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string head_;
};

std::string HeaderValue(const std::string& head, const std::string& lower_name) {
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string::npos) {
    pos += 2;
    const size_t colon = head.find(':', pos);
    const size_t eol = head.find("\r\n", pos);
    if (colon == std::string::npos || eol == std::string::npos || colon > eol) continue;
    std::string name = head.substr(pos, colon - pos);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name == lower_name) {
      size_t start = colon + 1;
      while (start < eol && head[start] == ' ') ++start;
      return head.substr(start, eol - start);
    }
  }
  return "";
}

std::string Between(const std::string& s, const std::string& from, const std::string& to) {
  const size_t a = s.find(from);
  if (a == std::string::npos) return "";
  const size_t b = s.find(to, a + from.size());
  return s.substr(a + from.size(),
                  b == std::string::npos ? std::string::npos : b - a - from.size());
}

TEST(SigV4Signer, AgreesWithLibcurlForRequestWithoutQuery) {
  OneShotServer server;
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  const std::string path = "/bucket/dir/" + UriEncode("some key+1.txt", false);
  CURL* curl = curl_easy_init();
  ASSERT_NE(curl, nullptr);
  const std::string url = "http://" + host + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
  curl_easy_setopt(curl, CURLOPT_USERPWD,
                   "AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  ASSERT_EQ(rc, CURLE_OK) << curl_easy_strerror(rc);

  const std::string head = server.head();
  const std::string auth = HeaderValue(head, "authorization");
  const std::string date = HeaderValue(head, "x-amz-date");
  ASSERT_FALSE(auth.empty()) << head;
  ASSERT_EQ(date.size(), 16u) << head;
  const std::string curl_signed = Between(auth, "SignedHeaders=", ",");
  const std::string curl_signature = Between(auth, "Signature=", ",");
  ASSERT_EQ(curl_signed, "host;x-amz-date") << "curl signs a different header set: " << auth;

  SigningRequest req{"GET", path, {}, {{"Host", host}}, kEmpty};
  SigningContext ctx{"us-east-1", "s3", ParseAmzDate(date)};
  ctx.add_content_sha256_header = false;
  const auto parts = SignV4(req, kS3Creds, ctx);
  EXPECT_EQ(parts.amz_date, date);
  EXPECT_EQ(parts.signature, curl_signature) << parts.canonical_request;
  EXPECT_EQ(parts.authorization, auth);
}

}  // namespace
}  // namespace bucketfs::s3
