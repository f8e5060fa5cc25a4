// HttpServer over TLS, on 127.0.0.1 port 0, with certificates made at test
// time, talked to with libcurl verifying the server against the certificate.
// Every wait is bounded by curl's or the test's own timeouts (seconds).
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/http/server.h"
#include "src/http/test_certificate.h"
#include "testing/status_matchers.h"

namespace chime::http {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct CurlResult {
  CURLcode code = CURLE_OK;
  std::string error;  // curl's message when code != CURLE_OK
  long status = 0;
  std::string body;
  long new_connections = 0;  // connections this transfer opened
  long local_port = 0;
};

// One curl easy handle: transfers on it reuse its connection when the server
// keeps it alive. Verifies the server against `ca_file` (its self-signed
// certificate), for "127.0.0.1" (the certificate's subjectAltName).
class Curl {
 public:
  explicit Curl(std::string ca_file)
      : curl_(curl_easy_init()), ca_file_(std::move(ca_file)) {}
  ~Curl() { curl_easy_cleanup(curl_); }
  Curl(const Curl&) = delete;
  Curl& operator=(const Curl&) = delete;

  // For options beyond the ones Do() sets.
  CURL* handle() { return curl_; }

  // GET, or POST of `body` when given, to `url`, within 5 s, with `header`
  // ("Name: value") when given.
  CurlResult Do(const std::string& url, const std::string* body = nullptr,
                const char* header = nullptr) {
    CurlResult r;
    char error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    if (body != nullptr) {
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE,
                       static_cast<long>(body->size()));
    } else {
      curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
    }
    // No "Expect: 100-continue" (the server does not answer it).
    curl_slist* headers = curl_slist_append(nullptr, "Expect:");
    if (header != nullptr) headers = curl_slist_append(headers, header);
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &Append);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_CAINFO, ca_file_.c_str());
    curl_easy_setopt(curl_, CURLOPT_CAPATH, nullptr);
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYHOST, 2L);
    r.code = curl_easy_perform(curl_);
    r.error = error[0] != '\0' ? error : curl_easy_strerror(r.code);
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_getinfo(curl_, CURLINFO_NUM_CONNECTS, &r.new_connections);
    curl_easy_getinfo(curl_, CURLINFO_LOCAL_PORT, &r.local_port);
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, nullptr);
    curl_slist_free_all(headers);
    return r;
  }

 private:
  CURL* curl_;
  std::string ca_file_;
};

std::string Url(const char* scheme, uint16_t port, const char* path) {
  return absl::StrCat(scheme, "://127.0.0.1:", port, path);
}

// A TCP connection that sends nothing (or `bytes`) and waits for the server to
// close it.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << errno;
  }
  ~RawClient() { close(fd_); }

  // True when the server closes the connection within `limit`, reading and
  // dropping whatever it sends first.
  bool ClosedByServer(absl::Duration limit) {
    const absl::Time deadline = absl::Now() + limit;
    for (;;) {
      const int wait_ms =
          static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (wait_ms <= 0) return false;
      pollfd p{.fd = fd_, .events = POLLIN};
      if (poll(&p, 1, wait_ms) != 1) return false;
      char buffer[512];
      const ssize_t n = read(fd_, buffer, sizeof(buffer));
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;
    }
  }

 private:
  int fd_;
};

class HttpsServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  void SetUp() override {
    absl::StatusOr<TestCertificateFiles> files = WriteTestCertificate(
        ::testing::TempDir(), UniqueName("server_tls_test"));
    ASSERT_THAT(files, IsOk());
    files_ = *std::move(files);
  }

  // Starts a TLS server with files_ and `options`.
  std::unique_ptr<HttpServer> StartServer(HttpServer::Options options = {}) {
    options.tls_cert_file = files_.cert_file;
    options.tls_key_file = files_.key_file;
    options.router.Handle("GET", "/healthz", [](const Request&) {
      return Response{.body = "ok\n"};
    });
    options.router.Handle("POST", "/echo", [](const Request& request) {
      return Response{.body = request.body};
    });
    auto server = HttpServer::Start(std::move(options));
    EXPECT_THAT(server, IsOk());
    return server.ok() ? *std::move(server) : nullptr;
  }

  TestCertificateFiles files_;
};

TEST_F(HttpsServerTest, ServesGetAndPostOverHttps) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Curl curl(files_.cert_file);
  CurlResult get = curl.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(get.code, CURLE_OK) << get.error;
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "ok\n");
  const std::string payload = "over tls";
  CurlResult post = curl.Do(Url("https", server->port(), "/echo"), &payload);
  ASSERT_EQ(post.code, CURLE_OK) << post.error;
  EXPECT_EQ(post.body, "over tls");
}

TEST_F(HttpsServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Curl curl(files_.cert_file);
  CurlResult first = curl.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(first.code, CURLE_OK) << first.error;
  CurlResult second = curl.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(second.code, CURLE_OK) << second.error;
  EXPECT_EQ(second.body, "ok\n");
  EXPECT_EQ(first.new_connections, 1);
  EXPECT_EQ(second.new_connections, 0);  // the first one, reused
  EXPECT_EQ(second.local_port, first.local_port);

  // The server ends the connection after this answer (close_notify, then
  // the TCP close), and the answer arrives whole first.
  CurlResult last = curl.Do(Url("https", server->port(), "/healthz"), nullptr,
                            "Connection: close");
  ASSERT_EQ(last.code, CURLE_OK) << last.error;
  EXPECT_EQ(last.body, "ok\n");
  EXPECT_EQ(last.new_connections, 0);
  CurlResult again = curl.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(again.code, CURLE_OK) << again.error;
  EXPECT_EQ(again.new_connections, 1);
}

TEST_F(HttpsServerTest, ServesTheConfiguredCertificate) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  absl::StatusOr<TestCertificateFiles> other = WriteTestCertificate(
      ::testing::TempDir(), UniqueName("server_tls_test_other"));
  ASSERT_THAT(other, IsOk());
  Curl curl(other->cert_file);
  CurlResult r = curl.Do(Url("https", server->port(), "/healthz"));
  EXPECT_EQ(r.code, CURLE_PEER_FAILED_VERIFICATION) << r.error;
}

TEST_F(HttpsServerTest, PlainHttpIsClosedAndTheServerGoesOn) {
  auto server = StartServer({.threads = 1});
  ASSERT_NE(server, nullptr);
  Curl plain(files_.cert_file);
  const absl::Time before = absl::Now();
  CurlResult r = plain.Do(Url("http", server->port(), "/healthz"));
  EXPECT_NE(r.code, CURLE_OK);
  EXPECT_NE(r.code, CURLE_OPERATION_TIMEDOUT) << r.error;
  EXPECT_EQ(r.status, 0);                             // no HTTP answer
  EXPECT_LT(absl::Now() - before, absl::Seconds(2));  // closed, not timed out

  Curl tls(files_.cert_file);
  CurlResult next = tls.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(next.code, CURLE_OK) << next.error;
  EXPECT_EQ(next.body, "ok\n");
}

TEST_F(HttpsServerTest, RefusesTlsBelow12) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Curl old(files_.cert_file);
  // The client offers TLS 1.1 at most, at the lowest security level (which
  // allows it): the server must refuse.
  curl_easy_setopt(
      old.handle(), CURLOPT_SSLVERSION,
      long{CURL_SSLVERSION_TLSv1_1} | long{CURL_SSLVERSION_MAX_TLSv1_1});
  curl_easy_setopt(old.handle(), CURLOPT_SSL_CIPHER_LIST,
                   "DEFAULT:@SECLEVEL=0");
  CurlResult r = old.Do(Url("https", server->port(), "/healthz"));
  EXPECT_EQ(r.code, CURLE_SSL_CONNECT_ERROR) << r.error;

  Curl tls12(files_.cert_file);
  curl_easy_setopt(
      tls12.handle(), CURLOPT_SSLVERSION,
      long{CURL_SSLVERSION_TLSv1_2} | long{CURL_SSLVERSION_MAX_TLSv1_2});
  CurlResult ok = tls12.Do(Url("https", server->port(), "/healthz"));
  EXPECT_EQ(ok.code, CURLE_OK) << ok.error;
}

// One pool thread: a client stalled in the handshake holds no thread, and is
// closed after read_timeout.
TEST_F(HttpsServerTest, HandshakeIsBoundedByTheReadTimeout) {
  auto server =
      StartServer({.threads = 1, .read_timeout = absl::Milliseconds(1500)});
  ASSERT_NE(server, nullptr);
  RawClient silent(server->port());
  const absl::Time connected = absl::Now();

  Curl other(files_.cert_file);
  CurlResult r = other.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(r.code, CURLE_OK) << r.error;
  EXPECT_LT(absl::Now() - connected, absl::Milliseconds(1500));

  EXPECT_TRUE(silent.ClosedByServer(absl::Seconds(5)));
  EXPECT_GE(absl::Now() - connected, absl::Milliseconds(1400));
}

TEST_F(HttpsServerTest, LimitsHoldInsideTls) {
  auto server = StartServer({.max_body_bytes = 1024, .max_connections = 1});
  ASSERT_NE(server, nullptr);
  Curl first(files_.cert_file);
  const std::string small(1024, 'x');
  CurlResult ok = first.Do(Url("https", server->port(), "/echo"), &small);
  ASSERT_EQ(ok.code, CURLE_OK) << ok.error;
  EXPECT_EQ(ok.body, small);

  // `first` keeps its connection: a second one is over the limit, answered
  // 503 after the handshake.
  Curl second(files_.cert_file);
  CurlResult refused = second.Do(Url("https", server->port(), "/healthz"));
  ASSERT_EQ(refused.code, CURLE_OK) << refused.error;
  EXPECT_EQ(refused.status, 503);

  const std::string big(5000, 'x');
  CurlResult too_big = first.Do(Url("https", server->port(), "/echo"), &big);
  ASSERT_EQ(too_big.code, CURLE_OK) << too_big.error;
  EXPECT_EQ(too_big.status, 413);
  EXPECT_EQ(too_big.new_connections, 0);
}

TEST_F(HttpsServerTest, StopWithOpenTlsConnectionsReturnsPromptly) {
  auto server = StartServer({.read_timeout = absl::Seconds(60)});
  ASSERT_NE(server, nullptr);
  Curl kept_alive(files_.cert_file);
  ASSERT_EQ(kept_alive.Do(Url("https", server->port(), "/healthz")).code,
            CURLE_OK);
  RawClient in_handshake(server->port());
  const absl::Time before = absl::Now();
  server->Stop();
  EXPECT_LT(absl::Now() - before, absl::Seconds(2));
  EXPECT_TRUE(in_handshake.ClosedByServer(absl::Seconds(2)));
}

TEST_F(HttpsServerTest, StartFailsNamingTheFile) {
  const std::string missing = ::testing::TempDir() + "/server_tls_test.none";
  EXPECT_THAT(
      HttpServer::Start(
          {.tls_cert_file = missing, .tls_key_file = files_.key_file}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(absl::StrCat("TLS certificate file \"", missing,
                                      "\" cannot be read: No such file"))));
  EXPECT_THAT(HttpServer::Start(
                  {.tls_cert_file = files_.cert_file, .tls_key_file = missing}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("TLS private key file \"",
                                              missing, "\" cannot be read"))));

  absl::StatusOr<TestCertificateFiles> other = WriteTestCertificate(
      ::testing::TempDir(), UniqueName("server_tls_test_other"));
  ASSERT_THAT(other, IsOk());
  EXPECT_THAT(HttpServer::Start({.tls_cert_file = files_.cert_file,
                                 .tls_key_file = other->key_file}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(
                           "TLS private key file \"", other->key_file,
                           "\" is not the key of the certificate in \"",
                           files_.cert_file, "\""))));
  // The files swapped: no certificate in the one, no key in the other.
  EXPECT_THAT(HttpServer::Start({.tls_cert_file = files_.key_file,
                                 .tls_key_file = files_.key_file}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("TLS certificate file \"",
                                              files_.key_file,
                                              "\" holds no PEM certificate"))));
  EXPECT_THAT(HttpServer::Start({.tls_cert_file = files_.cert_file,
                                 .tls_key_file = files_.cert_file}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("TLS private key file \"",
                                              files_.cert_file,
                                              "\" holds no PEM private key"))));
  EXPECT_THAT(HttpServer::Start({.tls_cert_file = files_.cert_file}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tls_cert_file is set but tls_key_file is "
                                 "not")));
  EXPECT_THAT(HttpServer::Start({.tls_key_file = files_.key_file}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tls_key_file is set but tls_cert_file is "
                                 "not")));
}

}  // namespace
}  // namespace chime::http
