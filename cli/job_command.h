// `chime job ...` and `chime run ...`: the daemon's jobs and their runs over
// the REST API (client.h has the shared options and exit statuses).
//
//   chime job list [--namespace NS] [--label k=v]... [--paused true|false]
//   chime job get NAME            the job as a job file (apply-able YAML),
//                                 its status as comments
//   chime job trigger NAME        run it now; prints the run id
//   chime job next NAME [-n N] [--from TIME]
//                                 its next fire times, daylight-saving changes
//                                 marked
//   chime run list NAME [--state S] [--limit N]
//   chime run list [--state S] [--namespace NS] [--limit N]
//                                 every job's runs, with a JOB column
//   chime run list --dead [--namespace NS] [--limit N]
//                                 the dead letters: failed runs, retries
//                                 exhausted
//   chime run get NAME RUN        the run, its attempts and transitions
//   chime run logs NAME RUN       the output of its attempts
//   chime run logs NAME RUN -f    the output of the running attempt as it
//                                 comes, until it ends (stream_command.h)
//
// NAME is "namespace/id", or "id" in the default namespace. Every command
// takes --server, --token and --json (the API's answer as it is).
//
// Thread-safety: as app.h.
#ifndef CHIME_CLI_JOB_COMMAND_H_
#define CHIME_CLI_JOB_COMMAND_H_

#include "CLI/CLI.hpp"
#include "cli/app.h"

namespace chime::cli {

void AddJobCommand(CLI::App& app, const Io& io, int* status);
void AddRunCommand(CLI::App& app, const Io& io, int* status);

}  // namespace chime::cli

#endif  // CHIME_CLI_JOB_COMMAND_H_
