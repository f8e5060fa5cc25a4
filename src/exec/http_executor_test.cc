#include "src/exec/http_executor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/exec/attempt_identity.h"
#include "testing/attempt_context.h"
#include "testing/http_test_server.h"
#include "testing/status_matchers.h"

namespace chime::exec {
namespace {

using ::chime::testing::HttpTestServer;
using ::chime::testing::IsOk;
using ::chime::testing::RecordedRequest;
using ::chime::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::SizeIs;

// A loopback port with nothing listening: the socket is bound, so no one else
// gets the port, but connects to it are refused.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~RefusingPort() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class HttpExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = HttpTestServer::Start();
    ASSERT_THAT(server, IsOk());
    server_ = std::move(*server);
    ctx_ = ::chime::testing::TestAttemptContext("hook");
    ctx_.cancelled = &cancelled_;
    ctx_.killed = &killed_;
    ctx_.output = &output_;
    ctx_.exit_code = &exit_code_;
  }

  HttpExecutorSpec Spec(const std::string& method, const std::string& path) {
    HttpExecutorSpec spec;
    spec.method = method;
    spec.url = server_->Url(path);
    spec.connect_timeout = absl::Seconds(5);
    return spec;
  }

  // RunHttp, bounded: a watchdog kills the attempt after 10 s.
  absl::Status Run(const HttpExecutorSpec& spec) {
    absl::Notification done;
    std::thread watchdog([&] {
      if (!done.WaitForNotificationWithTimeout(absl::Seconds(10))) {
        killed_.store(true);
      }
    });
    absl::Status status = RunHttp(spec, ctx_);
    done.Notify();
    watchdog.join();
    return status;
  }

  // The one request the server got.
  RecordedRequest OnlyRequest() {
    std::vector<RecordedRequest> requests = server_->Requests();
    EXPECT_THAT(requests, SizeIs(1));
    return requests.empty() ? RecordedRequest{} : requests[0];
  }

  std::unique_ptr<HttpTestServer> server_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> killed_{false};
  std::string output_;
  int32_t exit_code_ = 0;
  AttemptContext ctx_;
};

TEST_F(HttpExecutorTest, GetSendsTargetAndHeadersExactly) {
  HttpExecutorSpec spec = Spec("GET", "/status?deep=1&x=%20y");
  spec.headers = {{"X-Token", "a b, c;d"}, {"X-Empty", ""}};
  ASSERT_THAT(Run(spec), IsOk());
  RecordedRequest request = OnlyRequest();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/status?deep=1&x=%20y");
  EXPECT_THAT(request.Header("X-Token"), Optional(std::string("a b, c;d")));
  EXPECT_THAT(request.Header("X-Empty"), Optional(std::string("")));
  EXPECT_EQ(request.body, "");
}

TEST_F(HttpExecutorTest, PostSendsBodyAndOnlyTheUsersContentType) {
  HttpExecutorSpec spec = Spec("POST", "/hook");
  spec.body = std::string(5000, 'b') + "{\"a\": 1}";  // large enough for Expect
  ASSERT_THAT(Run(spec), IsOk());
  RecordedRequest request = OnlyRequest();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.body, spec.body);
  EXPECT_EQ(request.Header("Content-Type"), std::nullopt);
  EXPECT_EQ(request.Header("Expect"), std::nullopt);

  spec.headers = {{"Content-Type", "application/json"}};
  ASSERT_THAT(Run(spec), IsOk());
  ASSERT_TRUE(server_->WaitForRequests(2, absl::Seconds(5)));
  EXPECT_THAT(server_->Requests()[1].Header("content-type"),
              Optional(std::string("application/json")));
}

TEST_F(HttpExecutorTest, EveryMethodCarriesItsBody) {
  struct Row {
    std::string method;
    std::string body;
    std::string content_length;  // "" = no header
  };
  const Row rows[] = {{"PUT", "put-body", "8"}, {"PATCH", "", "0"},
                      {"POST", "", "0"},        {"DELETE", "", ""},
                      {"DELETE", "why", "3"},   {"OPTIONS", "", ""}};
  for (const Row& row : rows) {
    SCOPED_TRACE(row.method + " with body \"" + row.body + "\"");
    HttpExecutorSpec spec = Spec(row.method, "/m");
    spec.body = row.body;
    const size_t before = server_->Requests().size();
    ASSERT_THAT(Run(spec), IsOk());
    ASSERT_TRUE(server_->WaitForRequests(before + 1, absl::Seconds(5)));
    RecordedRequest request = server_->Requests().back();
    EXPECT_EQ(request.method, row.method);
    EXPECT_EQ(request.body, row.body);
    EXPECT_EQ(request.Header("Content-Length").value_or(""),
              row.content_length);
  }
}

TEST_F(HttpExecutorTest, SendsIdentityHeadersAndTraceparent) {
  ASSERT_THAT(Run(Spec("POST", "/hook")), IsOk());
  RecordedRequest request = OnlyRequest();
  EXPECT_THAT(request.Header("Idempotency-Key"),
              Optional(std::string("ops/hook:3:2026-11-18T11:06:40Z")));
  EXPECT_THAT(request.Header("Chime-Fire-Id"), Optional(ctx_.fire_id()));
  EXPECT_THAT(request.Header("Chime-Attempt"), Optional(std::string("2")));
  EXPECT_THAT(request.Header("Chime-Fencing-Token"),
              Optional(std::string("17")));
  for (const auto& [suffix, value] : IdentityFields(ctx_)) {
    EXPECT_THAT(request.Header("Chime-" + HeaderName(suffix)), Optional(value))
        << suffix;
  }
  EXPECT_THAT(request.Header("traceparent"), Optional(Traceparent(ctx_)));
}

TEST_F(HttpExecutorTest, UserHeadersCannotOverrideIdentity) {
  HttpExecutorSpec spec = Spec("POST", "/hook");
  spec.headers = {{"idempotency-key", "mine"},
                  {"CHIME-ATTEMPT", "99"},
                  {"Traceparent", "00-x"},
                  {"Chime-Custom", "kept"}};
  ASSERT_THAT(Run(spec), IsOk());
  RecordedRequest request = OnlyRequest();
  EXPECT_EQ(request.HeaderCount("Idempotency-Key"), 1);
  EXPECT_THAT(request.Header("Idempotency-Key"), Optional(ctx_.fire_id()));
  EXPECT_EQ(request.HeaderCount("Chime-Attempt"), 1);
  EXPECT_THAT(request.Header("Chime-Attempt"), Optional(std::string("2")));
  EXPECT_EQ(request.HeaderCount("traceparent"), 1);
  EXPECT_THAT(request.Header("traceparent"), Optional(Traceparent(ctx_)));
  EXPECT_THAT(request.Header("Chime-Custom"), Optional(std::string("kept")));
}

TEST_F(HttpExecutorTest, TwoHundredSucceedsAndRecordsTheBody) {
  server_->SetResponse({.status = 201, .body = "created"});
  EXPECT_THAT(Run(Spec("POST", "/hook")), IsOk());
  EXPECT_EQ(output_, "HTTP 201\ncreated");
}

TEST_F(HttpExecutorTest, ServiceUnavailableFailsWithTheBodyRecorded) {
  server_->SetResponse({.status = 503, .body = "busy, try later"});
  EXPECT_THAT(
      Run(Spec("POST", "/hook")),
      StatusIs(absl::StatusCode::kUnknown,
               HasSubstr("HTTP 503 is not a success status (200-299)")));
  EXPECT_EQ(output_, "HTTP 503\nbusy, try later");
  EXPECT_EQ(exit_code_, 503);
}

TEST_F(HttpExecutorTest, CustomSuccessStatusesDecide) {
  HttpExecutorSpec spec = Spec("PUT", "/lock");
  spec.success_statuses = {{200, 299}, {409, 409}};
  server_->SetResponse({.status = 409, .body = "already done"});
  EXPECT_THAT(Run(spec), IsOk());
  EXPECT_EQ(output_, "HTTP 409\nalready done");

  spec.success_statuses = {{409, 409}, {500, 502}};
  server_->SetResponse({.status = 204});
  EXPECT_THAT(
      Run(spec),
      StatusIs(absl::StatusCode::kUnknown,
               HasSubstr("HTTP 204 is not a success status (409, 500-502)")));
  EXPECT_EQ(output_, "HTTP 204");
}

TEST_F(HttpExecutorTest, RedirectsAreNotFollowed) {
  server_->SetResponse(
      {.status = 302, .headers = {{"Location", server_->Url("/elsewhere")}}});
  EXPECT_THAT(Run(Spec("GET", "/old")),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("HTTP 302")));
  EXPECT_EQ(OnlyRequest().target, "/old");
}

TEST_F(HttpExecutorTest, KeepsOnlyTheHeadOfALargeBody) {
  server_->SetResponse(
      {.status = 500, .body = std::string(100, 'h') + std::string(9900, 't')});
  HttpExecutorSpec spec = Spec("GET", "/big");
  spec.response_limit = 100;
  EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kUnknown));
  EXPECT_EQ(output_, "HTTP 500\n" + std::string(100, 'h') +
                         "\n[chime: 9900 more bytes not kept]");
}

TEST_F(HttpExecutorTest, ConnectionRefusedIsUnavailable) {
  RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  HttpExecutorSpec spec = Spec("POST", "/");
  spec.url = "http://127.0.0.1:" + std::to_string(refusing.port()) + "/hook";
  EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kUnavailable,
                                  AllOf(HasSubstr("POST " + spec.url),
                                        HasSubstr("CURLE_COULDNT_CONNECT"))));
  EXPECT_EQ(output_, "");  // no response, nothing recorded
}

// `.invalid` never resolves (RFC 6761), and glibc answers it from the local
// resolver configuration; the connect timeout bounds it should a resolver
// go to the network anyway.
TEST_F(HttpExecutorTest, UnresolvableHostIsUnavailable) {
  HttpExecutorSpec spec = Spec("GET", "/");
  spec.url = "http://nonexistent.invalid/";
  spec.connect_timeout = absl::Seconds(3);
  absl::Status status = Run(spec);
  if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    GTEST_SKIP() << "the resolver went to the network and timed out: "
                 << status;
  }
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable,
                               AllOf(HasSubstr("Could not resolve host: "
                                               "nonexistent.invalid"),
                                     HasSubstr("CURLE_COULDNT_RESOLVE_HOST"))));
}

TEST_F(HttpExecutorTest, HttpsToAPlainServerIsATlsError) {
  HttpExecutorSpec spec = Spec("GET", "/");
  spec.url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/";
  EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kUnavailable,
                                  AllOf(HasSubstr("TLS handshake failed"),
                                        HasSubstr("CURLE_SSL_CONNECT_ERROR"))));
  EXPECT_THAT(server_->Requests(), SizeIs(0));
}

TEST_F(HttpExecutorTest, BadUrlsAreInvalidArguments) {
  for (const char* url : {"http://", "ftp://127.0.0.1/file", "http://a b/"}) {
    HttpExecutorSpec spec = Spec("GET", "/");
    spec.url = url;
    EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kInvalidArgument)) << url;
  }
}

TEST_F(HttpExecutorTest, HeadersThatCouldSplitTheRequestAreRefused) {
  HttpExecutorSpec spec = Spec("POST", "/hook");
  spec.headers = {{"X-Evil", "a\r\nX-Injected: 1"}};
  EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("CR, LF or NUL")));
  spec.headers = {{"X Bad", "v"}};
  EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("not a token")));
  spec.headers = {};
  spec.method = "GET /x";
  EXPECT_THAT(Run(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("method")));
  EXPECT_THAT(server_->Requests(), SizeIs(0));
}

TEST_F(HttpExecutorTest, PasswordsInTheUrlAreNotShownInErrors) {
  RefusingPort refusing;
  HttpExecutorSpec spec = Spec("GET", "/");
  spec.url =
      "http://me:s3cret@127.0.0.1:" + std::to_string(refusing.port()) + "/";
  absl::Status status = Run(spec);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable,
                               HasSubstr("http://***@127.0.0.1:")));
  EXPECT_THAT(std::string(status.message()),
              ::testing::Not(HasSubstr("s3cret")));
}

// Sets `flag` once the server has the request, and checks that the attempt
// returns long before the server's delayed answer.
void ExpectAbortedPromptly(HttpTestServer* server, std::atomic<bool>* flag,
                           const std::function<absl::Status()>& run) {
  server->SetResponse({.status = 200, .delay = absl::Seconds(6)});
  std::thread canceller([&] {
    server->WaitForRequests(1, absl::Seconds(5));
    flag->store(true);
  });
  const absl::Time start = absl::Now();
  absl::Status status = run();
  const absl::Duration elapsed = absl::Now() - start;
  canceller.join();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("cancelled")));
  EXPECT_LT(elapsed, absl::Seconds(2));
  EXPECT_THAT(server->Requests(), SizeIs(1));
}

TEST_F(HttpExecutorTest, CancelAbortsAWaitingRequestPromptly) {
  ExpectAbortedPromptly(server_.get(), &cancelled_,
                        [&] { return Run(Spec("POST", "/slow")); });
  EXPECT_EQ(output_, "");
}

TEST_F(HttpExecutorTest, KillAbortsAWaitingRequestPromptly) {
  ExpectAbortedPromptly(server_.get(), &killed_,
                        [&] { return Run(Spec("POST", "/slow")); });
}

// A scheduler paused past its lease after the attempt started sends nothing
// (AttemptContext::LeaseHeld): another node may own the run by now.
TEST_F(HttpExecutorTest, ALeaseLostBeforeTheRequestSendsNothing) {
  class Lost : public LeaseCheck {
   public:
    bool LeaseHeld(uint32_t) const override { return false; }
  } lost;
  ctx_.lease = &lost;
  EXPECT_THAT(Run(Spec("POST", "/hook")),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("lease")));
  EXPECT_THAT(server_->Requests(), IsEmpty());
  ctx_.lease = nullptr;  // no lease to lose: sent
  EXPECT_THAT(Run(Spec("POST", "/hook")), IsOk());
  EXPECT_THAT(server_->Requests(), SizeIs(1));
}

TEST_F(HttpExecutorTest, MakeHttpFunctionKeepsItsOwnSpec) {
  JobFunction fn;
  {
    HttpExecutorSpec spec = Spec("PUT", "/from-function");
    spec.body = "payload";
    fn = MakeHttpFunction(spec);
  }  // the original spec is gone
  EXPECT_THAT(fn(ctx_), IsOk());
  RecordedRequest request = OnlyRequest();
  EXPECT_EQ(request.target, "/from-function");
  EXPECT_EQ(request.body, "payload");
}

TEST(FormatSuccessStatusesTest, ShowsRangesAndSingleStatuses) {
  EXPECT_EQ(FormatSuccessStatuses({}), "200-299");
  EXPECT_EQ(FormatSuccessStatuses({{200, 204}, {409, 409}}), "200-204, 409");
}

}  // namespace
}  // namespace chime::exec
