// The daemon's streams from the command line (docs/api.md):
//
//   chime events [--namespace NS] [--job NAME] [--count N]
//       one line per run transition and missed/skipped fire, as they happen
//       (GET /v1/events), until interrupted -- or after N events. A run's
//       transition is "<time>  <job>  run <id>  <from> -> <to>  attempt <n>
//       [ <detail>]", a fire that did not run "<time>  <job>  fire <fire id>
//       <missed|skipped>[ (<n> fires)][: <reason>]", each on one line. With
//       --json, each event's JSON as the server sends it, one a line.
//   chime run logs NAME RUN --follow
//       the output of the run's attempt as it comes (GET .../runs/{run}/
//       output?follow=true); exits 0 when the attempt ends. job_command.cc
//       declares the command; FollowRunOutput runs it.
//
// Exit statuses as client.h; 1 also when the stream breaks off.
//
// Thread-safety: as app.h.
#ifndef CHIME_CLI_STREAM_COMMAND_H_
#define CHIME_CLI_STREAM_COMMAND_H_

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/app.h"
#include "cli/client.h"

namespace chime::cli {

void AddEventsCommand(CLI::App& app, const Io& io, int* status);

// Prints the output of run `run` of job `name` ("ns/id" or "id") as it
// comes, until the attempt ends; returns the exit status.
int FollowRunOutput(const ClientOptions& client, const std::string& name,
                    int64_t run, const Io& io);

}  // namespace chime::cli

#endif  // CHIME_CLI_STREAM_COMMAND_H_
