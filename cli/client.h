// The daemon's REST API (docs/api.md) from the command line: the options
// every `chime job` / `chime run` command shares, one HTTP call, and the exit
// status a failed call maps to.
//
//   ClientOptions options;            // --server, --token, --json
//   absl::StatusOr<nlohmann::ordered_json> jobs = CallApi(options, "GET",
//   "/v1/jobs"); if (!jobs.ok()) return ReportError(jobs.status(), io);
//
// Exit status of the API commands (scripts rely on these):
//   0 success; 1 the server could not be reached or failed (5xx);
//   2 usage error or input the server refused (400); 3 not found (404);
//   4 not allowed (401, 403: a missing or weak token); 5 conflict (409,
//   e.g. an overlap policy refusing a trigger).
//
// Thread-safety: pure functions (libcurl's easy interface, one handle a call).
#ifndef CHIME_CLI_CLIENT_H_
#define CHIME_CLI_CLIENT_H_

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/app.h"
#include "nlohmann/json.hpp"

namespace chime::cli {

inline constexpr int kExitNotFound = 3;
inline constexpr int kExitNotAllowed = 4;
inline constexpr int kExitConflict = 5;

struct ClientOptions {
  std::string server;  // "http://127.0.0.1:8712"
  std::string token;   // "" = none
  bool json = false;   // print the API's JSON instead of text
};

// Declares --server (default $CHIME_SERVER, else http://127.0.0.1:8712),
// --token (default $CHIME_TOKEN) and --json on `cmd`.
void AddClientOptions(CLI::App* cmd, ClientOptions* options);

// `method` `path` (with its query) on the server; the response body as JSON.
// A non-2xx answer is a Status whose code follows the HTTP status (404
// NotFound, 401 Unauthenticated, ...) and whose message is the problem's
// detail; Unavailable when the server cannot be reached.
absl::StatusOr<nlohmann::ordered_json> CallApi(const ClientOptions& options,
                                               const std::string& method,
                                               const std::string& path);

// Writes "chime: <message>" to io.err; returns the exit status for `status`.
int ReportError(const absl::Status& status, const Io& io);

// "ns/id" -> {"ns", "id"}; "id" -> {"default", "id"}.
std::pair<std::string, std::string> SplitJobName(const std::string& name);

// Percent-encodes a query value.
std::string EncodeQueryValue(const std::string& value);

}  // namespace chime::cli

#endif  // CHIME_CLI_CLIENT_H_
