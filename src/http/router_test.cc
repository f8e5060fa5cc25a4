#include "src/http/router.h"

#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/http/deferred_response.h"

namespace chime::http {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

Handler Says(std::string body) {
  return [body](const Request&) { return Response{.body = body}; };
}

Request Make(std::string method, std::string path) {
  return Request{.method = std::move(method), .target = path, .path = path};
}

TEST(Router, ExactPathBeatsPrefixAndLongestPrefixWins) {
  Router router;
  router.HandlePrefix("GET", "/api/", Says("api"));
  router.HandlePrefix("GET", "/api/v1/jobs/", Says("job"));
  router.Handle("GET", "/api/v1/jobs/special", Says("special"));
  EXPECT_EQ(router.Route(Make("GET", "/api/v1/jobs/42")).body, "job");
  EXPECT_EQ(router.Route(Make("GET", "/api/v1/runs")).body, "api");
  EXPECT_EQ(router.Route(Make("GET", "/api/v1/jobs/special")).body, "special");
}

TEST(Router, UnknownPathIs404) {
  Router router;
  router.Handle("GET", "/healthz", Says("ok"));
  const Response response = router.Route(Make("GET", "/healthz/extra"));
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.body, "404 Not Found\n");
}

TEST(Router, WrongMethodIs405ListingTheAllowedOnes) {
  Router router;
  router.Handle("POST", "/jobs", Says("created"));
  router.Handle("GET", "/jobs", Says("list"));
  const Response response = router.Route(Make("DELETE", "/jobs"));
  EXPECT_EQ(response.status, 405);
  EXPECT_THAT(response.headers, ElementsAre(Pair("Allow", "GET, HEAD, POST")));
}

TEST(Router, HeadFallsBackToGet) {
  Router router;
  router.Handle("GET", "/metrics", Says("m"));
  EXPECT_EQ(router.Route(Make("HEAD", "/metrics")).body, "m");
}

TEST(Router, LaterRegistrationReplacesEarlier) {
  Router router;
  router.Handle("GET", "/x", Says("old"));
  router.Handle("GET", "/x", Says("new"));
  EXPECT_EQ(router.Route(Make("GET", "/x")).body, "new");
}

TEST(Router, ThrowingHandlerIs500) {
  Router router;
  router.Handle("GET", "/boom", [](const Request&) -> Response {
    throw std::runtime_error("boom");
  });
  router.Handle("GET", "/int", [](const Request&) -> Response { throw 7; });
  EXPECT_EQ(router.Route(Make("GET", "/boom")).status, 500);
  EXPECT_EQ(router.Route(Make("GET", "/int")).status, 500);
}

TEST(Router, HandlersGoToTheBlockingRunnerUnlessTheyRunInline) {
  Router router;
  router.Handle("GET", "/pool", Says("pool"));
  router.Handle("GET", "/inline", Says("inline"), {.run_inline = AlwaysInline});
  router.Handle("POST", "/maybe", Says("maybe"),
                {.run_inline = [](const Request& r) {
                  return r.Header("X-Wait").empty();
                }});
  router.Handle("GET", "/throws", [](const Request&) -> Response {
    throw std::runtime_error("boom");
  });
  std::vector<std::function<void()>> tasks;
  const BlockingRunner runner = [&tasks](std::function<void()> task) {
    tasks.push_back(std::move(task));
  };

  EXPECT_EQ(router.Route(Make("GET", "/inline"), &runner).body, "inline");
  EXPECT_EQ(router.Route(Make("POST", "/maybe"), &runner).body, "maybe");
  EXPECT_TRUE(tasks.empty());

  Response pool = router.Route(Make("GET", "/pool"), &runner);
  Request waits = Make("POST", "/maybe");
  waits.headers.emplace_back("X-Wait", "1");
  Response maybe = router.Route(waits, &runner);
  Response throws = router.Route(Make("GET", "/throws"), &runner);
  ASSERT_NE(pool.deferred, nullptr);
  ASSERT_NE(maybe.deferred, nullptr);
  ASSERT_NE(throws.deferred, nullptr);
  ASSERT_EQ(tasks.size(), 3u);
  for (const auto& task : tasks) task();
  EXPECT_EQ(pool.deferred->Wait().body, "pool");
  EXPECT_EQ(maybe.deferred->Wait().body, "maybe");
  EXPECT_EQ(throws.deferred->Wait().status, 500);

  // Without a runner every handler answers here.
  EXPECT_EQ(router.Route(Make("GET", "/pool")).body, "pool");
}

TEST(Router, TargetNotStartingWithSlashIs400) {
  Router router;
  router.HandlePrefix("GET", "", Says("anything"));
  EXPECT_EQ(router.Route(Make("GET", "*")).status, 400);
  EXPECT_EQ(router.Route(Make("GET", "http://host/")).status, 400);
}

TEST(Request, HeaderLookupIgnoresCaseAndTakesTheFirst) {
  const Request request{
      .headers = {{"X-Trace", "a"}, {"x-trace", "b"}, {"Host", "h"}}};
  EXPECT_EQ(request.Header("x-TRACE"), "a");
  EXPECT_EQ(request.Header("Missing"), "");
}

}  // namespace
}  // namespace chime::http
