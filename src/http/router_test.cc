#include "src/http/router.h"

#include <stdexcept>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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
