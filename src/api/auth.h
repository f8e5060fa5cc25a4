// Bearer-token authorization of the REST API (docs/api.md, "Access").
//
// The tokens come from the configuration (config::ApiToken). Each has a role;
// a role allows what the ones below it allow:
//   read   every GET
//   write  also operations on jobs (trigger, pause, resume)
//   admin  also creating or changing jobs that run commands
// With no token configured, every request is allowed (the daemon then only
// listens on loopback: config::ValidateDaemonConfig).
//
//   Authorizer auth(config.api_tokens);
//   router.Handle("GET", "/v1/jobs", auth.Guard(Role::kRead, ListJobs));
//
// A request without a valid `Authorization: Bearer <token>` gets 401 (with
// `WWW-Authenticate: Bearer`), one whose token's role is too low 403, both as
// problem+json. Secrets are compared in time independent of where they
// differ.
//
// Thread-safety: immutable after construction; Guard's handlers may run
// concurrently.
#ifndef CHIME_SRC_API_AUTH_H_
#define CHIME_SRC_API_AUTH_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/config/daemon_config.h"
#include "src/http/router.h"

namespace chime::api {

using Role = config::ApiToken::Role;

// A handler that is told who called: the token's name, or "" when no tokens
// are configured.
using GuardedHandler =
    std::function<http::Response(const http::Request&, const std::string&)>;

class Authorizer {
 public:
  explicit Authorizer(std::vector<config::ApiToken> tokens);

  // The caller's token name (see GuardedHandler); Unauthenticated or
  // PermissionDenied, with a message saying why, otherwise.
  absl::StatusOr<std::string> Check(const http::Request& request,
                                    Role needed) const;

  // `handler`, called only for requests that Check allows.
  http::Handler Guard(Role needed, GuardedHandler handler) const;
  http::Handler Guard(Role needed, http::Handler handler) const;

 private:
  std::vector<config::ApiToken> tokens_;
};

}  // namespace chime::api

#endif  // CHIME_SRC_API_AUTH_H_
