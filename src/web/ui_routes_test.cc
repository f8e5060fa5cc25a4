#include "src/web/ui_routes.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/web/assets.h"

namespace chime::web {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

const Asset kFakeAssets[] = {
    {"/ui/index.html", "text/html; charset=utf-8", "\"aaaa\"",
     "<!doctype html>"},
    {"/ui/js/app.js", "text/javascript; charset=utf-8", "\"bbbb\"",
     "export {};"},
};

http::Response Get(const http::Router& router, const std::string& target,
                   http::Headers headers = {}) {
  http::Request request;
  request.method = "GET";
  request.target = target;
  request.path = target;
  request.headers = std::move(headers);
  return router.Route(request);
}

std::string HeaderOf(const http::Response& r, absl::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (absl::EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

class UiRoutesTest : public ::testing::Test {
 protected:
  UiRoutesTest() { RegisterUiAssets(router_, kFakeAssets); }
  http::Router router_;
};

TEST_F(UiRoutesTest, RootServesTheIndexPageAsHtml) {
  http::Response r = Get(router_, "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, "<!doctype html>");
  EXPECT_EQ(HeaderOf(r, "ETag"), "\"aaaa\"");
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache");
}

TEST_F(UiRoutesTest, AssetsCarryTheirContentTypeAndSecurityHeaders) {
  http::Response r = Get(router_, "/ui/js/app.js");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(r.body, "export {};");
  EXPECT_THAT(HeaderOf(r, "Content-Security-Policy"),
              HasSubstr("default-src 'self'"));
  EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff");
}

TEST_F(UiRoutesTest, MatchingIfNoneMatchGets304WithoutABody) {
  http::Response r =
      Get(router_, "/ui/js/app.js", {{"If-None-Match", "\"bbbb\""}});
  EXPECT_EQ(r.status, 304);
  EXPECT_THAT(r.body, IsEmpty());
  EXPECT_EQ(HeaderOf(r, "ETag"), "\"bbbb\"");
  // In a list, and weak: still a match.
  EXPECT_EQ(
      Get(router_, "/ui/js/app.js", {{"If-None-Match", "\"zzzz\", W/\"bbbb\""}})
          .status,
      304);
}

TEST_F(UiRoutesTest, StaleIfNoneMatchGetsTheContent) {
  http::Response r =
      Get(router_, "/ui/js/app.js", {{"If-None-Match", "\"old\""}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "export {};");
}

TEST_F(UiRoutesTest, UnknownAssetIs404) {
  EXPECT_EQ(Get(router_, "/ui/js/missing.js").status, 404);
  EXPECT_EQ(Get(router_, "/ui/").status, 404);
  EXPECT_EQ(Get(router_, "/ui/../index.html").status, 404);
}

TEST(EmbeddedUi, HoldsTheIndexPageAndItsModules) {
  http::Router router;
  RegisterUi(router);
  http::Response index = Get(router, "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_THAT(index.body, HasSubstr("/ui/js/app.js"));
  http::Response app = Get(router, "/ui/js/app.js");
  EXPECT_EQ(app.status, 200);
  EXPECT_EQ(app.content_type, "text/javascript; charset=utf-8");
  http::Response css = Get(router, "/ui/style.css");
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.content_type, "text/css; charset=utf-8");
}

}  // namespace
}  // namespace chime::web
