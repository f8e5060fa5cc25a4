#include "src/api/auth.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/api/http_util.h"

namespace chime::api {
namespace {

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kWrite:
      return "write";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

// Equal, in time that depends on the lengths only.
bool SameSecret(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

Authorizer::Authorizer(std::vector<config::ApiToken> tokens)
    : tokens_(std::move(tokens)) {}

absl::StatusOr<std::string> Authorizer::Check(const http::Request& request,
                                              Role needed) const {
  if (tokens_.empty()) return std::string();
  absl::string_view header = request.Header("Authorization");
  if (header.empty()) {
    return absl::UnauthenticatedError(
        "this request needs a token: Authorization: Bearer <token>");
  }
  absl::string_view secret = header;
  if (secret.size() < 7 ||
      !absl::EqualsIgnoreCase(secret.substr(0, 7), "Bearer ")) {
    return absl::UnauthenticatedError(
        "the Authorization header is not \"Bearer <token>\"");
  }
  secret = absl::StripAsciiWhitespace(secret.substr(7));
  const config::ApiToken* found = nullptr;
  for (const config::ApiToken& token : tokens_) {
    if (SameSecret(token.token, secret)) found = &token;
  }
  if (found == nullptr) {
    return absl::UnauthenticatedError("the token is not one of this server's");
  }
  if (found->role < needed) {
    return absl::PermissionDeniedError(
        absl::StrCat("token \"", found->name, "\" has role ",
                     RoleName(found->role), "; this needs ", RoleName(needed)));
  }
  return found->name;
}

http::Handler Authorizer::Guard(Role needed, GuardedHandler handler) const {
  return [this, needed, handler = std::move(handler)](const http::Request& r) {
    absl::StatusOr<std::string> who = Check(r, needed);
    if (!who.ok()) {
      http::Response denied = ProblemFromStatus(who.status());
      if (absl::IsUnauthenticated(who.status()))
        denied.headers.emplace_back("WWW-Authenticate", "Bearer");
      return denied;
    }
    return handler(r, *who);
  };
}

http::Handler Authorizer::Guard(Role needed, http::Handler handler) const {
  return Guard(needed,
               GuardedHandler([handler = std::move(handler)](
                                  const http::Request& r, const std::string&) {
                 return handler(r);
               }));
}

}  // namespace chime::api
