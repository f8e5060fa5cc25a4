// The `chime` executable: wires each subcommand family into the command line.
// To add one (serve, job, run, ...), write cli/<name>_command.{h,cc} with an
// Add<Name>Command like AddCronCommand and append it to the list below.
#include <iostream>

#include "absl/time/clock.h"
#include "cli/app.h"
#include "cli/completion_command.h"
#include "cli/cron_command.h"
#include "cli/job_command.h"
#include "cli/serve_command.h"
#include "cli/status_command.h"
#include "cli/stream_command.h"
#include "src/base/process_tuning.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  chime::base::SkipLockOrderChecks();
  const chime::cli::Io io{std::cin, std::cout, std::cerr, absl::Now()};
  return chime::cli::RunCli(argc, argv, io,
                            {
                                chime::cli::AddCronCommand,
                                chime::cli::AddServeCommand,
                                chime::cli::AddJobCommand,
                                chime::cli::AddRunCommand,
                                chime::cli::AddEventsCommand,
                                chime::cli::AddStatusCommand,
                                chime::cli::AddNamespaceCommand,
                                chime::cli::AddCompletionCommand,
                            });
}
