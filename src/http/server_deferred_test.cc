// Answers given later (deferred_response.h) and handlers on the blocking pool
// (RouteOptions), over real sockets on 127.0.0.1 with libcurl: a deferred
// answer arrives when it is given and the connection stays usable, one that
// does not come in time is 503, a handler that blocks does not hold up inline
// ones, and Stop with an answer still to come is safe. Every wait is bounded
// (seconds).
#include <curl/curl.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/http/deferred_response.h"
#include "src/http/server.h"
#include "testing/status_matchers.h"

namespace chime::http {
namespace {

using ::chime::testing::IsOk;

struct Got {
  long status = 0;  // 0: no answer (the connection failed or timed out)
  std::string body;
  long new_connections = -1;
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET `path` on `curl` (an easy handle: reused, it keeps its connection).
Got Get(CURL* curl, uint16_t port, const std::string& path,
        long timeout_ms = 5000) {
  Got got;
  const std::string url = absl::StrCat("http://127.0.0.1:", port, path);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &got.body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  if (curl_easy_perform(curl) == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &got.status);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &got.new_connections);
  }
  return got;
}

using Curl = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
Curl NewCurl() { return Curl(curl_easy_init(), &curl_easy_cleanup); }

// Hands the deferred answers the handler made to the test.
class Slot {
 public:
  void Put(std::shared_ptr<DeferredResponse> later) {
    absl::MutexLock lock(&mu_);
    later_ = std::move(later);
  }
  // The answer to give, once the handler made it (null after 5 s).
  std::shared_ptr<DeferredResponse> Wait() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(
        absl::Condition(
            +[](std::shared_ptr<DeferredResponse>* l) { return *l != nullptr; },
            &later_),
        absl::Seconds(5));
    return std::exchange(later_, nullptr);
  }

 private:
  absl::Mutex mu_;
  std::shared_ptr<DeferredResponse> later_ ABSL_GUARDED_BY(mu_);
};

// GET /later defers its answer to the test, GET /now answers at once.
HttpServer::Options Options(Slot& slot) {
  HttpServer::Options options;
  options.router.Handle("GET", "/later", [&slot](const Request&) {
    std::shared_ptr<DeferredResponse> later = DeferredResponse::Create();
    slot.Put(later);
    return later->Response();
  });
  options.router.Handle("GET", "/now",
                        [](const Request&) { return Response{.body = "now"}; });
  return options;
}

// The server, started (null if it did not start).
std::unique_ptr<HttpServer> StartServer(HttpServer::Options options) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(std::move(options));
  EXPECT_THAT(server.status(), IsOk());
  return server.ok() ? *std::move(server) : nullptr;
}

// A GET /later in flight on `curl`, and the answer it waits for (null if
// the handler did not run).
struct Asked {
  std::future<Got> got;
  std::shared_ptr<DeferredResponse> later;
};
Asked AskLater(Slot& slot, CURL* curl, uint16_t port) {
  Asked asked;
  asked.got = std::async(std::launch::async,
                         [curl, port] { return Get(curl, port, "/later"); });
  asked.later = slot.Wait();
  return asked;
}

TEST(ServerDeferredTest, AnAnswerGivenLaterIsSentAndTheConnectionGoesOn) {
  Slot slot;
  std::unique_ptr<HttpServer> server = StartServer(Options(slot));
  ASSERT_NE(server, nullptr);
  const uint16_t port = server->port();
  Curl curl = NewCurl();
  auto [got, later] = AskLater(slot, curl.get(), port);
  ASSERT_NE(later, nullptr);
  // Nothing is sent before the answer is given.
  EXPECT_EQ(got.wait_for(std::chrono::milliseconds(200)),
            std::future_status::timeout);
  later->Complete(Response{.status = 201, .body = "made"});
  const Got answer = got.get();
  EXPECT_EQ(answer.status, 201);
  EXPECT_EQ(answer.body, "made");
  // A second Complete changes nothing; the same connection serves the next.
  later->Complete(Response{.status = 500, .body = "again"});
  const Got next = Get(curl.get(), port, "/now");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "now");
  EXPECT_EQ(next.new_connections, 0);
}

TEST(ServerDeferredTest, AnAnswerGivenBeforeTheServerAsksIsSentToo) {
  HttpServer::Options options;
  options.router.Handle("GET", "/done", [](const Request&) {
    std::shared_ptr<DeferredResponse> later = DeferredResponse::Create();
    later->Complete(Response{.body = "already"});
    return later->Response();
  });
  std::unique_ptr<HttpServer> server = StartServer(std::move(options));
  ASSERT_NE(server, nullptr);
  Curl curl = NewCurl();
  const Got got = Get(curl.get(), server->port(), "/done");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "already");
}

TEST(ServerDeferredTest, AnAnswerThatDoesNotComeWithinTheWriteTimeoutIs503) {
  Slot slot;
  HttpServer::Options options = Options(slot);
  options.write_timeout = absl::Milliseconds(300);
  std::unique_ptr<HttpServer> server = StartServer(std::move(options));
  ASSERT_NE(server, nullptr);
  const uint16_t port = server->port();
  Curl curl = NewCurl();
  const absl::Time start = absl::Now();
  const Got got = Get(curl.get(), port, "/later");
  EXPECT_EQ(got.status, 503);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  // Given after the 503: dropped, and the server goes on.
  std::shared_ptr<DeferredResponse> later = slot.Wait();
  ASSERT_NE(later, nullptr);
  later->Complete(Response{.body = "too late"});
  Curl other = NewCurl();
  EXPECT_EQ(Get(other.get(), port, "/now").status, 200);
}

TEST(ServerDeferredTest, StopWithAnAnswerStillToComeDropsIt) {
  Slot slot;
  std::unique_ptr<HttpServer> server = StartServer(Options(slot));
  ASSERT_NE(server, nullptr);
  Curl curl = NewCurl();
  auto [got, later] = AskLater(slot, curl.get(), server->port());
  ASSERT_NE(later, nullptr);
  server->Stop();
  EXPECT_EQ(got.get().status, 0);                   // closed without an answer
  later->Complete(Response{.body = "after stop"});  // goes nowhere
  server.reset();
  later->Complete(Response{.body = "after the server"});
}

TEST(ServerDeferredTest, HandlersOnThePoolDoNotHoldUpInlineOnes) {
  absl::Notification release;
  HttpServer::Options options;
  options.threads = 1;
  options.blocking_threads = 2;
  // Blocks its pool thread until released.
  options.router.Handle("GET", "/slow", [&release](const Request&) {
    release.WaitForNotificationWithTimeout(absl::Seconds(10));
    return Response{.body = "slow"};
  });
  options.router.Handle("GET", "/fast",
                        [](const Request&) { return Response{.body = "fast"}; },
                        {.run_inline = AlwaysInline});
  // On the pool, answering later itself: the answer is its deferred one's.
  options.router.Handle("GET", "/pool-later", [](const Request&) {
    std::shared_ptr<DeferredResponse> later = DeferredResponse::Create();
    std::thread([later] {
      later->Complete(Response{.status = 202, .body = "from a thread"});
    }).detach();
    return later->Response();
  });
  std::unique_ptr<HttpServer> server = StartServer(std::move(options));
  ASSERT_NE(server, nullptr);
  const uint16_t port = server->port();

  Curl slow1 = NewCurl(), slow2 = NewCurl(), fast = NewCurl();
  std::future<Got> first = std::async(std::launch::async, [&] {
    return Get(slow1.get(), port, "/slow", 15000);
  });
  std::future<Got> second = std::async(std::launch::async, [&] {
    return Get(slow2.get(), port, "/slow", 15000);
  });
  // Both pool threads are taken; the I/O thread still answers.
  absl::SleepFor(absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  const Got quick = Get(fast.get(), port, "/fast");
  EXPECT_EQ(quick.status, 200);
  EXPECT_EQ(quick.body, "fast");
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(0)),
            std::future_status::timeout);
  release.Notify();
  EXPECT_EQ(first.get().body, "slow");
  EXPECT_EQ(second.get().body, "slow");

  const Got deferred = Get(fast.get(), port, "/pool-later");
  EXPECT_EQ(deferred.status, 202);
  EXPECT_EQ(deferred.body, "from a thread");
}

}  // namespace
}  // namespace chime::http
