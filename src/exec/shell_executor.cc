#include "src/exec/shell_executor.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/exec/attempt_identity.h"
#include "src/exec/process_ledger.h"
#include "src/exec/shell_executor_spawn.h"

extern char** environ;

namespace chime::exec {
namespace {

using shell_internal::Fd;
using shell_internal::SpawnedChild;

constexpr absl::Duration kPollInterval = absl::Milliseconds(20);
// How long the group's processes may take to die after SIGKILL (one in
// uninterruptible sleep, e.g. on a dead NFS server, may take longer).
constexpr absl::Duration kGroupExitLimit = absl::Seconds(5);

// Keeps the last `limit` bytes of a stream. Memory stays below about twice the
// limit plus one read: the head is cut only when that much has piled up.
class TailBuffer {
 public:
  explicit TailBuffer(int64_t limit) : limit_(std::max<int64_t>(limit, 0)) {}

  void Append(const char* data, size_t n) {
    total_ += n;
    kept_.append(data, n);
    if (kept_.size() > 2 * limit_ + (64 << 10)) Trim();
  }

  std::string Finish() && {
    Trim();
    size_t dropped = total_ - kept_.size();
    if (dropped == 0) return std::move(kept_);
    // Don't start inside a UTF-8 sequence: drop up to 3 continuation bytes.
    size_t skip = 0;
    while (skip < 3 && skip < kept_.size() &&
           (static_cast<unsigned char>(kept_[skip]) & 0xC0) == 0x80) {
      ++skip;
    }
    dropped += skip;
    return absl::StrCat("[chime: first ", dropped, " bytes dropped]\n",
                        absl::string_view(kept_).substr(skip));
  }

 private:
  void Trim() {
    if (kept_.size() > limit_) kept_.erase(0, kept_.size() - limit_);
  }

  const size_t limit_;
  uint64_t total_ = 0;
  std::string kept_;
};

// The daemon's environment, then spec.env, then the identity: later wins.
std::map<std::string, std::string> ChildEnvironment(
    const ShellExecutorSpec& spec, const AttemptContext& ctx) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, eq - *e)] = eq + 1;
  }
  for (const auto& [name, value] : spec.env) env[name] = value;
  for (auto& [suffix, value] : IdentityFields(ctx)) {
    env[absl::StrCat("CHIME_", suffix)] = std::move(value);
  }
  env["TRACEPARENT"] = Traceparent(ctx);
  return env;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev == nullptr ? absl::StrCat(sig)
                           : absl::StrCat(sig, " (SIG", abbrev, ")");
}

std::string DescribeExit(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED)
    return absl::StrCat("exit status ", info.si_status);
  return absl::StrCat("killed by signal ", SignalName(info.si_status),
                      info.si_code == CLD_DUMPED ? ", core dumped" : "");
}

// Reaps `pid` (ours, so waiting on the pid is safe: it cannot be reused
// before this returns).
siginfo_t Reap(pid_t pid) {
  siginfo_t info = {};
  while (waitid(P_PID, pid, &info, WEXITED) != 0 && errno == EINTR) {
  }
  return info;
}

// Ends a child that must not run its command (a failure between spawn and
// release): the whole group, then reaps it.
void Abandon(SpawnedChild& child) {
  child.gate.Reset();
  kill(-child.pid, SIGKILL);
  Reap(child.pid);
}

struct WatchResult {
  siginfo_t info = {};
  bool sent_term = false;
  bool sent_kill = false;
  absl::Status group_gone;  // not OK: members survived kGroupExitLimit
};

// The wait loop (see the header): relays the cancel flags as signals to the
// group, collects output, and when the leader exits kills the group, drains,
// waits until no process of the group is alive, and reaps the leader -- in
// that order: until it is reaped, the leader pins the group's id, so no kill
// can reach another group that got the same number.
WatchResult Watch(SpawnedChild& child, const Fd& pidfd,
                  const AttemptContext& ctx, const ShellOptions& options,
                  TailBuffer& output) {
  WatchResult result;
  std::optional<absl::Time> drain_deadline;  // set once the leader exited
  char buf[64 << 10];
  while (true) {
    if (!drain_deadline.has_value()) {
      if (ctx.IsKilled() && !result.sent_kill) {
        kill(-child.pid, SIGKILL);
        result.sent_kill = true;
      } else if (ctx.IsCancelled() && !result.sent_term && !result.sent_kill) {
        kill(-child.pid, SIGTERM);
        result.sent_term = true;
      }
    }
    absl::Duration wait = kPollInterval;
    if (drain_deadline.has_value()) {
      wait = std::clamp(*drain_deadline - absl::Now(), absl::ZeroDuration(),
                        kPollInterval);
    }
    pollfd fds[2] = {
        {.fd = drain_deadline ? -1 : pidfd.get(), .events = POLLIN},
        {.fd = child.output.get(), .events = POLLIN}};
    const int ready =
        poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(wait)) + 1);
    if (ready < 0 && errno != EINTR) break;  // cannot happen with valid fds
    if (fds[1].revents != 0) {
      const ssize_t n = read(child.output.get(), buf, sizeof(buf));
      if (n > 0) {
        output.Append(buf, n);
        if (options.on_output) options.on_output(absl::string_view(buf, n));
      }
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        child.output.Reset();
      }
    }
    if (fds[0].revents != 0 && !drain_deadline.has_value()) {
      // The leader is a zombie now, so its pid -- the group's id -- cannot be
      // reused yet: this kill reaches the group's processes and no others.
      kill(-child.pid, SIGKILL);
      drain_deadline = absl::Now() + options.drain_timeout;
    }
    if (drain_deadline.has_value() &&
        (!child.output.valid() || absl::Now() >= *drain_deadline)) {
      break;
    }
  }
  result.group_gone = KillProcessGroup(child.pid, kGroupExitLimit);
  result.info = Reap(child.pid);
  return result;
}

// The shell's convention: the exit status, or 128 + n for signal n.
int32_t ExitCode(const siginfo_t& info) {
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

absl::Status Outcome(const WatchResult& watch) {
  const std::string how = DescribeExit(watch.info);
  if (watch.sent_term || watch.sent_kill) {
    const char* sent = !watch.sent_kill  ? "SIGTERM"
                       : watch.sent_term ? "SIGTERM, then SIGKILL"
                                         : "SIGKILL";
    return absl::CancelledError(absl::StrCat("cancelled: sent ", sent,
                                             " to process group ",
                                             watch.info.si_pid, "; ", how));
  }
  if (watch.info.si_code == CLD_EXITED && watch.info.si_status == 0) {
    return absl::OkStatus();
  }
  return absl::InternalError(how);
}

// Checks the spec and what it names, and says how to start the child.
absl::StatusOr<shell_internal::SpawnRequest> BuildRequest(
    const ShellExecutorSpec& spec, const AttemptContext& ctx, bool gated) {
  if (spec.argv.empty() == spec.command.empty()) {
    return absl::InvalidArgumentError(
        "shell executor: set exactly one of argv and command");
  }
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("env: \"", name, "\" is not a variable name"));
    }
  }
  shell_internal::SpawnRequest request;
  request.working_dir = spec.working_dir;
  request.gated = gated;
  if (absl::Status s = shell_internal::CheckWorkingDir(spec.working_dir);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::optional<shell_internal::Credentials>> creds =
      shell_internal::ResolveCredentials(spec.user, spec.group);
  if (!creds.ok()) return creds.status();
  request.credentials = *std::move(creds);
  const std::map<std::string, std::string> env = ChildEnvironment(spec, ctx);
  if (!spec.argv.empty()) {
    const auto path = env.find("PATH");
    absl::StatusOr<std::string> program = shell_internal::FindProgram(
        spec.argv[0],
        path == env.end() ? std::nullopt : std::optional(path->second),
        spec.working_dir);
    if (!program.ok()) return program.status();
    request.path = *std::move(program);
    request.argv = spec.argv;
  } else {
    request.path = "/bin/sh";
    request.argv = {"sh", "-c", spec.command};
  }
  for (const auto& [name, value] : env) {
    request.env.push_back(absl::StrCat(name, "=", value));
  }
  return request;
}

absl::Status LeaseLostError() {
  return absl::CancelledError(
      "not started: the store's lease was lost before the command ran");
}

}  // namespace

absl::Status RunShell(const ShellExecutorSpec& spec, const AttemptContext& ctx,
                      const ShellOptions& options) {
  if (ctx.IsCancelled()) {
    return absl::CancelledError("cancelled before the command started");
  }
  const bool ledger = !options.ledger_dir.empty();
  absl::StatusOr<shell_internal::SpawnRequest> request =
      BuildRequest(spec, ctx, /*gated=*/ledger);
  if (!request.ok()) return request.status();
  // Without a ledger the spawn runs the command at once: the last check.
  if (!ledger && !ctx.LeaseHeld()) return LeaseLostError();

  absl::StatusOr<SpawnedChild> spawned = shell_internal::Spawn(*request);
  if (!spawned.ok()) return spawned.status();
  SpawnedChild& child = *spawned;
  const Fd pidfd(static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0)));
  if (!pidfd.valid()) {
    const int error = errno;
    Abandon(child);
    return absl::ErrnoToStatus(
        error, absl::StrCat("pidfd_open(", child.pid, ") (Linux 5.3+ needed)"));
  }
  if (ledger) {
    absl::Status written;
    absl::StatusOr<uint64_t> start_time = ProcessStartTime(child.pid);
    if (start_time.ok()) {
      written = WriteLedgerEntry(options.ledger_dir, {.pid = child.pid,
                                                      .pgid = child.pid,
                                                      .start_time = *start_time,
                                                      .fire_id = ctx.fire_id(),
                                                      .attempt = ctx.attempt});
    } else {
      written = start_time.status();
    }
    if (!written.ok()) {
      Abandon(child);
      return absl::UnavailableError(
          absl::StrCat("process ledger: ", written.message(),
                       "; the command was not started"));
    }
  }
  // A gated child has run nothing yet: the last moment to give up if the
  // scheduler was paused past its lease meanwhile (e.g. the ledger's write).
  // (An ungated one runs its command already; it was checked before Spawn.)
  if (ledger && !ctx.LeaseHeld()) {
    Abandon(child);
    (void)RemoveLedgerEntry(options.ledger_dir, child.pid);
    return LeaseLostError();
  }
  const absl::Status released = shell_internal::Release(child);
  if (!released.ok()) {
    Abandon(child);
    if (ledger) (void)RemoveLedgerEntry(options.ledger_dir, child.pid);
    return absl::Status(released.code(),
                        absl::StrCat("cannot start \"", request->path,
                                     "\": ", released.message()));
  }

  TailBuffer output(spec.output_limit);
  const WatchResult watch = Watch(child, pidfd, ctx, options, output);
  if (ledger) {
    // A failure leaves a stale entry, which KillOrphans tells apart by the
    // start time once the pid is reused; nothing else is to be done here.
    (void)RemoveLedgerEntry(options.ledger_dir, child.pid);
  }
  if (ctx.exit_code != nullptr) *ctx.exit_code = ExitCode(watch.info);
  if (ctx.output != nullptr) {
    *ctx.output = std::move(output).Finish();
    if (!watch.group_gone.ok()) {
      absl::StrAppend(ctx.output, "\n[chime: ", watch.group_gone.message(),
                      "]\n");
    }
  }
  return Outcome(watch);
}

JobFunction MakeShellFunction(ShellExecutorSpec spec, ShellOptions options) {
  return [spec = std::move(spec),
          options = std::move(options)](const AttemptContext& ctx) {
    return RunShell(spec, ctx, options);
  };
}

}  // namespace chime::exec
