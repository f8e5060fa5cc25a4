// The shell executor: runs one attempt of a job as a child process
// (chime/job.h, ShellExecutorSpec). The daemon calls RunShell with the spec it
// unpacks for each attempt (library users can make a JobFunction of a spec
// with MakeShellFunction); the scheduler runs it on a worker thread, which
// blocks until the child and everything it started are gone.
//
// The child:
//   - is `argv` run directly (argv[0] looked up in the child's PATH when it
//     has no '/'), or `/bin/sh -c <command>`;
//   - leads its own process group; stdin is /dev/null; stdout and stderr go
//     to one pipe, of which the last `output_limit` bytes are kept -- when
//     more came, the kept text starts with `[chime: first <n> bytes
//     dropped]\n` (the marker is not counted in the limit, and a cut never
//     starts inside a UTF-8 sequence);
//   - gets the daemon's environment, then `spec.env` (overriding it), then the
//     attempt's identity as CHIME_JOB, CHIME_FIRE_ID, CHIME_SCHEDULED_TIME,
//     CHIME_ATTEMPT, CHIME_FENCING_TOKEN, CHIME_RUN_ID and a W3C TRACEPARENT
//     (attempt_identity.h), which always win;
//   - runs in `working_dir` and, when `user`/`group` are set, as that user
//     and group (the daemon must be root for that; it then forks instead of
//     using posix_spawn, see shell_executor_spawn.h).
//
// Waiting. The worker polls a pidfd of the child and the output pipe, waking
// at least every 20 ms to look at the attempt's flags: `cancelled` sends
// SIGTERM to the process group (once), `killed` sends SIGKILL. When the
// child (the group's leader) exits, SIGKILL goes to its group *always*: the
// attempt is over, and a background process it left (`sleep 1000 &`) would
// otherwise run on unaccounted, holding the output pipe open. Output still in
// the pipe is then read until EOF, or for at most `drain_timeout` when a
// process that left the group (setsid) still holds the pipe; the worker waits
// (up to 5 s, a scan of /proc) until no process of the group is alive, and
// reaps the child. Processes that left the group are not followed (only a
// cgroup could).
//
// Results. OK only for exit status 0 of an attempt that was not cancelled.
// `*ctx.exit_code`, when not null, gets the exit status (128 + n for signal
// n) of a child that started. Otherwise an error, with the attempt's output
// kept in `*ctx.output`:
//   Internal          "exit status 3", "killed by signal 9 (SIGKILL)"
//   Cancelled         "cancelled: sent SIGTERM to process group 123; exit
//                     status 143" -- any end after a cancel, even exit 0: a
//                     command told to stop has not shown that it finished;
//                     "not started: the store's lease was lost before the
//                     command ran" (AttemptContext::LeaseHeld false before
//                     the spawn, or behind the ledger's gate before it opens)
//   NotFound          `command not found: "x" (searched PATH=/usr/bin:/bin)`,
//                     `working_dir "/srv/x": No such file or directory`,
//                     `user "bob": no such user`
//   PermissionDenied  a command or working_dir we may not use; another user
//                     while the daemon is not root
//   InvalidArgument   a spec with both or neither of argv and command
// and Internal/Unavailable for failures of the machinery (pipes, the ledger).
// Errors found before the start (the checks above) start nothing. The
// scheduler classifies an error after `cancelled` as cancelled or timed out.
//
// Orphans. A daemon killed with kill -9 leaves its children running; an
// at-least-once retry must not run beside them. With `ledger_dir` set, each
// child is recorded in the process ledger (process_ledger.h) before it may run
// its command: it is spawned behind a gate (it waits to read a line from the
// daemon; EOF -- the daemon died first -- makes it exit 125 without running
// the command), the entry is written, then the gate opens. The entry is
// removed once the child is reaped. The next incarnation kills them before
// recovery decides lost: it calls KillOrphans(ledger_dir) before creating the
// Scheduler on its store. Behind the gate (ledger on, no user switch) the
// program sees its resolved path as argv[0].
//
// Thread-safety: RunShell may run on many threads at once. The process must
// not reap children it did not start (waitpid(-1)) nor ignore SIGCHLD, and
// must not change its environment (setenv) while attempts run: each attempt
// copies it.
// Requires Linux 5.3 or later (pidfd_open).
#ifndef CHIME_SRC_EXEC_SHELL_EXECUTOR_H_
#define CHIME_SRC_EXEC_SHELL_EXECUTOR_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/scheduler.h"

namespace chime::exec {

struct ShellOptions {
  // The process ledger's directory (created if missing); "" = no ledger.
  std::string ledger_dir;
  // After the child exited and its group was killed, how long output is still
  // read from processes outside the group that hold the pipe.
  absl::Duration drain_timeout = absl::Seconds(2);
  // When set, called with the child's output as it is read from the pipe,
  // piece by piece (as the pipe gives it: not split at lines, and a piece may
  // end inside a UTF-8 sequence), before the attempt ends -- all of it, not
  // only the kept tail, and without the "[chime: ...]" markers. Called on the
  // thread running RunShell, only while RunShell runs. It must not block:
  // while it runs the child's output is not read, and a child whose pipe is
  // full stops. The daemon sets it per attempt to follow output live
  // (GET .../runs/{run}/output?follow=true).
  std::function<void(absl::string_view)> on_output;
};

// Runs one attempt of `spec` and returns its result (see above). Blocks until
// the child is reaped. `ctx.output`, when not null, receives the kept output
// of a child that started (and is left alone otherwise).
absl::Status RunShell(const ShellExecutorSpec& spec, const AttemptContext& ctx,
                      const ShellOptions& options);

// A job function that calls RunShell with copies of `spec` and `options`.
JobFunction MakeShellFunction(ShellExecutorSpec spec, ShellOptions options);

}  // namespace chime::exec

#endif  // CHIME_SRC_EXEC_SHELL_EXECUTOR_H_
