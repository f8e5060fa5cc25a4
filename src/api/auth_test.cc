#include "src/api/auth.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::api {
namespace {

using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;

http::Request WithAuthorization(const std::string& value) {
  http::Request r;
  r.method = "GET";
  r.path = "/v1/jobs";
  if (!value.empty()) r.headers.emplace_back("authorization", value);
  return r;
}

const std::vector<config::ApiToken> kTokens = {
    {"grafana", Role::kRead, "read-secret-0123456789"},
    {"ci", Role::kWrite, "write-secret-0123456789"},
    {"ops", Role::kAdmin, "admin-secret-0123456789"},
};

TEST(Authorizer, WithoutTokensEveryoneMayDoEverything) {
  const Authorizer auth({});
  EXPECT_THAT(auth.Check(WithAuthorization(""), Role::kAdmin),
              IsOkAndHolds(""));
}

TEST(Authorizer, ARoleAllowsItsOwnAndTheLowerOnes) {
  const Authorizer auth(kTokens);
  EXPECT_THAT(auth.Check(WithAuthorization("Bearer write-secret-0123456789"),
                         Role::kRead),
              IsOkAndHolds("ci"));
  EXPECT_THAT(auth.Check(WithAuthorization("bearer  admin-secret-0123456789 "),
                         Role::kAdmin),
              IsOkAndHolds("ops"));
  EXPECT_THAT(auth.Check(WithAuthorization("Bearer read-secret-0123456789"),
                         Role::kWrite),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       "token \"grafana\" has role read; this needs write"));
}

TEST(Authorizer, MissingMalformedOrUnknownTokensAreUnauthenticated) {
  const Authorizer auth(kTokens);
  EXPECT_THAT(auth.Check(WithAuthorization(""), Role::kRead),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       ::testing::HasSubstr("needs a token")));
  EXPECT_THAT(auth.Check(WithAuthorization("Basic Zm9vOmJhcg=="), Role::kRead),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       ::testing::HasSubstr("not \"Bearer <token>\"")));
  // A prefix, an extension, another case of a real token: all unknown.
  for (const char* wrong :
       {"Bearer read-secret-012345678", "Bearer read-secret-01234567890",
        "Bearer READ-SECRET-0123456789", "Bearer "}) {
    EXPECT_THAT(auth.Check(WithAuthorization(wrong), Role::kRead),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         "the token is not one of this server's"))
        << wrong;
  }
}

TEST(Authorizer, GuardAnswersProblemsAndPassesTheCallersName) {
  const Authorizer auth(kTokens);
  http::Handler h = auth.Guard(
      Role::kWrite,
      GuardedHandler([](const http::Request&, const std::string& who) {
        return http::Response{.status = 200, .body = who};
      }));
  EXPECT_EQ(h(WithAuthorization("Bearer write-secret-0123456789")).body, "ci");
  const http::Response none = h(WithAuthorization(""));
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.content_type, "application/problem+json");
  EXPECT_THAT(none.headers, ::testing::Contains(
                                ::testing::Pair("WWW-Authenticate", "Bearer")));
  EXPECT_EQ(h(WithAuthorization("Bearer read-secret-0123456789")).status, 403);
}

}  // namespace
}  // namespace chime::api
