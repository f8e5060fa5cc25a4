// Internal to the shell executor (shell_executor.h): the checks that make its
// errors precise before anything starts, and the two ways it starts a child.
//
//   - posix_spawn, the normal way. With a gate (used when the process ledger
//     is on) the child is `/bin/sh -c 'read _ <&3 || exit 125; ...; exec "$0"
//     "$@"' <path> <args>`: it waits for one line on fd 3 before running the
//     command, and exits 125 without running it if fd 3 reaches EOF first
//     (the daemon died or gave up). Behind the gate the program sees the
//     resolved path as argv[0], and an exec that fails after the checks is
//     reported by sh on the output (exit status 126 or 127).
//   - fork + exec, only when the child must run as another user or group:
//     posix_spawn has no attribute for setuid/setgid/setgroups. The forked
//     child calls only async-signal-safe functions, on arrays prepared before
//     the fork; the gate is a read() before execve, and a failure of any step
//     (chdir, setgroups, setgid, setuid, execve) comes back through a
//     close-on-exec pipe as the step and its errno.
//
// Either way the child is the leader of a new process group, has stdin on
// /dev/null, stdout and stderr on one pipe, the default signal dispositions,
// an empty signal mask and no other open descriptor.
//
// Thread-safety: functions may be called from any thread. The daemon must not
// reap children it did not start (waitpid(-1, ...)) nor set SIGCHLD to
// SIG_IGN: either would take the child's exit status from the executor.
#ifndef CHIME_SRC_EXEC_SHELL_EXECUTOR_SPAWN_H_
#define CHIME_SRC_EXEC_SHELL_EXECUTOR_SPAWN_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace chime::exec::shell_internal {

// An owned file descriptor; closed on destruction. -1 = none.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();

 private:
  int fd_ = -1;
};

// Who the child runs as, when not as the daemon.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  bool set_groups = false;  // replace the supplementary groups by `groups`
  std::vector<gid_t> groups;
};

// Resolves ShellExecutorSpec::user and ::group (names or numbers). nullopt
// when the child runs as the daemon: both empty, or naming the daemon's own
// effective uid and gid. Errors: NotFound for an unknown user or group;
// FailedPrecondition for a numeric uid without a passwd entry and no group;
// PermissionDenied when a switch is needed and the daemon is not root.
absl::StatusOr<std::optional<Credentials>> ResolveCredentials(
    const std::string& user, const std::string& group);

// OK when `dir` is "" or a directory the daemon may enter; otherwise an error
// naming it (NotFound, FailedPrecondition "not a directory",
// PermissionDenied).
absl::Status CheckWorkingDir(const std::string& dir);

// The file to execute for argv[0] = `name`: a name with a '/' as it is
// (relative to `working_dir` when relative), otherwise the first executable
// regular file `<dir>/<name>` for the directories of `path_env` (the child's
// PATH; when unset, "/usr/local/bin:/usr/bin:/bin"). Errors: NotFound
// `command not found: "x" (searched PATH=...)`, PermissionDenied when only
// non-executable files or directories were found.
absl::StatusOr<std::string> FindProgram(
    const std::string& name, const std::optional<std::string>& path_env,
    const std::string& working_dir);

struct SpawnRequest {
  std::string path;               // the file to execute (FindProgram)
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value"
  std::string working_dir;        // "" = the daemon's
  std::optional<Credentials> credentials;
  bool gated = false;  // the command waits for Release (see above)
};

struct SpawnedChild {
  pid_t pid = 0;   // also the process group id
  Fd output;       // read end of the child's stdout and stderr
  Fd gate;         // write end of the gate; invalid unless gated
  Fd exec_status;  // fork path: EOF once execve succeeded
};

// Starts the child. Errors name the program and the errno text; no child is
// left running after an error.
absl::StatusOr<SpawnedChild> Spawn(const SpawnRequest& request);

// Lets a gated child run its command, then (fork path) waits until it has
// called execve. An error says which step failed in the child (the child has
// exited 127 and still needs reaping).
absl::Status Release(SpawnedChild& child);

}  // namespace chime::exec::shell_internal

#endif  // CHIME_SRC_EXEC_SHELL_EXECUTOR_SPAWN_H_
