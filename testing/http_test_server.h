// HttpTestServer: a small HTTP/1.1 server on 127.0.0.1 for tests of code that
// makes HTTP requests (the HTTP executor, webhooks).
//
//   auto server = chime::testing::HttpTestServer::Start();  // port 0
//   (*server)->SetResponse({.status = 503, .body = "busy"});
//   ... make a request to (*server)->Url("/hook") ...
//   ASSERT_TRUE((*server)->WaitForRequests(1, absl::Seconds(5)));
//   EXPECT_EQ((*server)->Requests()[0].body, "{}");
//
// It listens on an ephemeral loopback port, records every request it reads
// (method, target, headers in arrival order, body), and answers each with the
// response configured at the time the request arrived, after that response's
// delay. Every response closes its connection. A connection that does not
// speak HTTP (e.g. a TLS handshake) is closed without an answer. Requests are
// served concurrently on one internal thread, so a delayed response does not
// hold up others.
//
// Thread-safety: every method may be called from any thread. The destructor
// stops the server promptly, abandoning delayed responses, and joins its
// thread.
#ifndef CHIME_TESTING_HTTP_TEST_SERVER_H_
#define CHIME_TESTING_HTTP_TEST_SERVER_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace chime::testing {

struct RecordedRequest {
  std::string method;  // "GET"
  std::string target;  // "/path?query", as sent
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  std::string body;

  // The value of the first header called `name` (any case), if there is one.
  std::optional<std::string> Header(absl::string_view name) const;
  // How many headers are called `name` (any case).
  int HeaderCount(absl::string_view name) const;
};

struct CannedResponse {
  int status = 200;
  std::string body;
  // Sent besides Content-Length and Connection: close.
  std::vector<std::pair<std::string, std::string>> headers;
  // How long after reading the request the response is sent.
  absl::Duration delay = absl::ZeroDuration();
};

class HttpTestServer {
 public:
  // Listens on 127.0.0.1 on a port the kernel picks and starts serving.
  // Fails (Internal) when the socket cannot be set up.
  static absl::StatusOr<std::unique_ptr<HttpTestServer>> Start();
  ~HttpTestServer();
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  int port() const;
  // "http://127.0.0.1:<port>" + path; REQUIRES: path is empty or starts with
  // '/'.
  std::string Url(absl::string_view path = "/") const;

  // The response for requests that arrive from now on (default: 200, empty).
  void SetResponse(CannedResponse response);

  // The requests read so far, in the order they were read.
  std::vector<RecordedRequest> Requests() const;
  // Waits until at least `count` requests have been read; false if `timeout`
  // passes first.
  bool WaitForRequests(size_t count, absl::Duration timeout) const;

 private:
  class Impl;
  explicit HttpTestServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chime::testing

#endif  // CHIME_TESTING_HTTP_TEST_SERVER_H_
