// The daemon configuration's API settings (daemon_config.h): `api_tokens`
// and `api_jobs`, read from their chime.yaml values.
#ifndef CHIME_SRC_CONFIG_API_CONFIG_H_
#define CHIME_SRC_CONFIG_API_CONFIG_H_

#include <vector>

#include "absl/status/statusor.h"
#include "src/config/daemon_config.h"
#include "src/config/yaml_fields.h"

namespace chime::config::internal {

// api_tokens: a list of {name, role, token | token_file}; errors at the
// offending value ("<line>:<column>: api_tokens[1].token: ...").
absl::StatusOr<std::vector<ApiToken>> ReadApiTokens(const Value& v);

// api_jobs: {allowed_commands, allowed_http_hosts, run_as}; the entries are
// checked as exec::ValidateJobPolicy checks them, except whether run_as's
// user exists (the daemon checks that when it starts).
absl::StatusOr<exec::JobPolicy> ReadApiJobs(const Value& v);

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_API_CONFIG_H_
