// `chime status` and `chime namespace list`: the daemon's own state over the
// REST API (GET /v1/status, GET /v1/namespaces; docs/api.md). Options and
// exit statuses as for `chime job` (client.h).
//
//   chime status            version, uptime, the scheduler's counts since
//                           the daemon started, job file errors, the
//                           store's size; --json prints the API's answer
//   chime namespace list    a table: each namespace's jobs, paused jobs,
//                           runs pending and running
//
// Thread-safety: as app.h.
#ifndef CHIME_CLI_STATUS_COMMAND_H_
#define CHIME_CLI_STATUS_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"
#include "absl/time/time.h"
#include "cli/app.h"

namespace chime::cli {

void AddStatusCommand(CLI::App& app, const Io& io, int* status);
void AddNamespaceCommand(CLI::App& app, const Io& io, int* status);

namespace internal {
// "45s", "12m 5s", "3h 12m", "2d 4h": the two largest units (rounded down).
std::string HumanDuration(absl::Duration d);
// "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB".
std::string HumanBytes(int64_t bytes);
}  // namespace internal

}  // namespace chime::cli

#endif  // CHIME_CLI_STATUS_COMMAND_H_
