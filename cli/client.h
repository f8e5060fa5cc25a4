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
//   412: e.g. an overlap policy refusing a trigger, a job defined by a job
//   file, a job changed since it was read).
//
// Thread-safety: pure functions (libcurl's easy interface, one handle a call).
#ifndef CHIME_CLI_CLIENT_H_
#define CHIME_CLI_CLIENT_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/app.h"
#include "nlohmann/json.hpp"

namespace chime::cli {

inline constexpr int kExitNotFound = 3;
inline constexpr int kExitNotAllowed = 4;
inline constexpr int kExitConflict = 5;

struct ClientOptions {
  std::string server;   // "http://127.0.0.1:8712"
  std::string token;    // "" = none
  bool json = false;    // print the API's JSON instead of text
  std::string ca_file;  // trust this CA (PEM) for https; "" = the system's
};

// Declares --server (default $CHIME_SERVER, else http://127.0.0.1:8712),
// --token (default $CHIME_TOKEN), --cacert (default $CHIME_CACERT) and --json
// on `cmd`.
void AddClientOptions(CLI::App* cmd, ClientOptions* options);

// `method` `path` (with its query) on the server, with `body` as
// application/json when it is not empty; the response body as JSON (null for
// 204 No Content). A non-2xx answer is a Status whose code follows the HTTP
// status (404 NotFound, 401 Unauthenticated, 409 and 412 FailedPrecondition,
// 400, 413, 415 and 422 InvalidArgument, ...) and whose message is the
// problem's detail; Unavailable when the server cannot be reached.
absl::StatusOr<nlohmann::ordered_json> CallApi(const ClientOptions& options,
                                               const std::string& method,
                                               const std::string& path,
                                               const std::string& body = "");

// GET `path` as a stream (GET /v1/events, a run's output with follow=true):
// `on_data` gets each piece of a 2xx answer's body as it arrives and returns
// false to stop reading. OK when the server ended the answer or on_data
// stopped it; a non-2xx answer and an unreachable server as for CallApi;
// Unavailable when the connection broke mid-answer. No overall time limit
// (connecting must succeed within 10 s); runs until the answer ends.
absl::Status StreamApi(const ClientOptions& options, const std::string& path,
                       const std::function<bool(absl::string_view)>& on_data);

// Prints `rows` with each column as wide as its widest cell and two spaces
// between columns, no spaces at the ends of lines; with
// `right_align_after_first`, every column but the first is right-aligned
// (for numbers).
void PrintTable(const std::vector<std::vector<std::string>>& rows,
                std::ostream& out, bool right_align_after_first = false);

// Writes "chime: <message>" to io.err; returns the exit status for `status`.
int ReportError(const absl::Status& status, const Io& io);

// "ns/id" -> {"ns", "id"}; "id" -> {"default", "id"}.
std::pair<std::string, std::string> SplitJobName(const std::string& name);

// Percent-encodes a query value.
std::string EncodeQueryValue(const std::string& value);

}  // namespace chime::cli

#endif  // CHIME_CLI_CLIENT_H_
