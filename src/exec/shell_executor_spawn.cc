#include "src/exec/shell_executor_spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace chime::exec::shell_internal {
namespace {

// Runs behind the gate: waits for the parent's line on fd 3, closes it, and
// becomes the command ("$0" is the program, "$@" its arguments). EOF on fd 3
// means the parent is gone or gave up: exit without running the command.
constexpr char kGateScript[] =
    "read _ <&3 || exit 125; exec 3<&-; exec \"$0\" \"$@\"";
constexpr int kGateExitStatus = 125;

absl::Status SpawnError(int error, const SpawnRequest& request) {
  std::string what = absl::StrCat("cannot start \"", request.path, "\"");
  if (!request.working_dir.empty()) {
    absl::StrAppend(&what, " in working_dir \"", request.working_dir, "\"");
  }
  return absl::ErrnoToStatus(error, what);
}

// Moves `fd` above the standard descriptors, so the child's dup2 onto 0-2
// cannot overwrite it (the daemon might run with 0-2 closed).
absl::Status MoveAboveStdio(Fd& fd) {
  if (fd.get() > 2) return absl::OkStatus();
  const int moved = fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return absl::ErrnoToStatus(errno, "fcntl(F_DUPFD_CLOEXEC)");
  fd = Fd(moved);
  return absl::OkStatus();
}

// NUL-terminated pointer arrays into `strings`, as execve wants them.
std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// What the forked child reports when a step fails: which step and errno.
enum class Step : int {
  kStdio = 1,
  kChdir,
  kSetgroups,
  kSetgid,
  kSetuid,
  kExec
};
struct ChildFailure {
  Step step;
  int error;
};

const char* StepName(Step step) {
  switch (step) {
    case Step::kStdio:
      return "setting up stdin/stdout/stderr";
    case Step::kChdir:
      return "chdir to working_dir";
    case Step::kSetgroups:
      return "setgroups";
    case Step::kSetgid:
      return "setgid";
    case Step::kSetuid:
      return "setuid";
    case Step::kExec:
      return "execve";
  }
  return "?";
}

struct ForkPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* working_dir;  // null = stay
  const Credentials* creds;
  int devnull, output, gate, status;
  int gate_parent;  // the daemon's end of the gate: the child must not hold it
};

// The forked child: async-signal-safe calls only (another thread of the
// daemon may have held a lock at the fork).
[[noreturn]] void RunForkedChild(const ForkPlan& plan) {
  auto fail = [&plan](Step step) {
    const ChildFailure failure{step, errno};
    (void)!write(plan.status, &failure, sizeof(failure));
    _exit(127);
  };
  setpgid(0, 0);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (dup2(plan.devnull, 0) < 0 || dup2(plan.output, 1) < 0 ||
      dup2(plan.output, 2) < 0) {
    fail(Step::kStdio);
  }
  // Everything else closes at execve; the status pipe and the gate still
  // work until then.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  if (plan.working_dir != nullptr && chdir(plan.working_dir) != 0) {
    fail(Step::kChdir);
  }
  const Credentials& c = *plan.creds;
  if (c.set_groups && setgroups(c.groups.size(), c.groups.data()) != 0) {
    fail(Step::kSetgroups);
  }
  if (setgid(c.gid) != 0) fail(Step::kSetgid);
  if (setuid(c.uid) != 0) fail(Step::kSetuid);
  if (plan.gate >= 0) {
    // Holding the daemon's end would keep the read below from seeing EOF
    // when the daemon dies.
    close(plan.gate_parent);
    char byte;
    ssize_t n;
    do {
      n = read(plan.gate, &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(kGateExitStatus);
  }
  execve(plan.path, plan.argv, plan.envp);
  fail(Step::kExec);
  _exit(127);  // not reached
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Fd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::StatusOr<SpawnedChild> Spawn(const SpawnRequest& request) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::ErrnoToStatus(errno, "pipe2 for the output");
  }
  Fd output(pipe_fds[0]), output_write(pipe_fds[1]);
  // The gate is a socket, not a pipe: writing to it after the child died
  // fails with EPIPE under MSG_NOSIGNAL instead of raising SIGPIPE.
  Fd gate_child, gate_parent;
  if (request.gated) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return absl::ErrnoToStatus(errno, "socketpair for the gate");
    }
    gate_child = Fd(sv[0]);
    gate_parent = Fd(sv[1]);
  }
  for (Fd* fd : {&output, &output_write, &gate_child}) {
    if (!fd->valid()) continue;
    const absl::Status moved = MoveAboveStdio(*fd);
    if (!moved.ok()) return moved;
  }

  SpawnedChild child;
  if (request.credentials.has_value()) {
    Fd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!devnull.valid()) return absl::ErrnoToStatus(errno, "open /dev/null");
    int status_fds[2];
    if (pipe2(status_fds, O_CLOEXEC) != 0) {
      return absl::ErrnoToStatus(errno, "pipe2 for the exec status");
    }
    Fd status_read(status_fds[0]), status_write(status_fds[1]);
    for (Fd* fd : {&devnull, &status_write}) {
      const absl::Status moved = MoveAboveStdio(*fd);
      if (!moved.ok()) return moved;
    }
    const std::vector<char*> argv = Pointers(request.argv);
    const std::vector<char*> envp = Pointers(request.env);
    const ForkPlan plan{.path = request.path.c_str(),
                        .argv = argv.data(),
                        .envp = envp.data(),
                        .working_dir = request.working_dir.empty()
                                           ? nullptr
                                           : request.working_dir.c_str(),
                        .creds = &*request.credentials,
                        .devnull = devnull.get(),
                        .output = output_write.get(),
                        .gate = gate_child.get(),
                        .status = status_write.get(),
                        .gate_parent = gate_parent.get()};
    // Signals stay blocked across the fork so that no handler of the daemon
    // runs in the child before it restores the defaults.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = fork();
    if (pid == 0) RunForkedChild(plan);
    const int fork_error = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) return SpawnError(fork_error, request);
    setpgid(pid, pid);  // also done by the child; whichever runs first wins
    child.pid = pid;
    child.exec_status = std::move(status_read);
  } else {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                        POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);  // undoes the daemon's SIG_IGNs

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, output_write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, output_write.get(), 2);
    if (request.gated)
      posix_spawn_file_actions_adddup2(&actions, gate_child.get(), 3);
    if (!request.working_dir.empty()) {
      posix_spawn_file_actions_addchdir_np(&actions,
                                           request.working_dir.c_str());
    }
    posix_spawn_file_actions_addclosefrom_np(&actions, request.gated ? 4 : 3);

    std::vector<std::string> args;
    const std::string* path = &request.path;
    static const std::string kShell = "/bin/sh";
    if (request.gated) {
      args = {"sh", "-c", kGateScript, request.path};
      args.insert(args.end(), request.argv.begin() + 1, request.argv.end());
      path = &kShell;
    }
    const std::vector<char*> argv =
        Pointers(request.gated ? args : request.argv);
    const std::vector<char*> envp = Pointers(request.env);
    pid_t pid = 0;
    const int error = posix_spawn(&pid, path->c_str(), &actions, &attr,
                                  argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (error != 0) return SpawnError(error, request);
    child.pid = pid;
  }
  child.output = std::move(output);
  child.gate = std::move(gate_parent);
  return child;  // the child's ends (output_write, gate_child) close here
}

absl::Status Release(SpawnedChild& child) {
  if (child.gate.valid()) {
    // A child that already died (killed from outside) makes this fail; its
    // exit status tells the rest, so the error is ignored.
    (void)!send(child.gate.get(), "\n", 1, MSG_NOSIGNAL);
    child.gate.Reset();
  }
  if (!child.exec_status.valid()) return absl::OkStatus();
  ChildFailure failure;
  ssize_t n;
  do {
    n = read(child.exec_status.get(), &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  child.exec_status.Reset();
  if (n != static_cast<ssize_t>(sizeof(failure))) return absl::OkStatus();
  return absl::ErrnoToStatus(failure.error, StepName(failure.step));
}

}  // namespace chime::exec::shell_internal
