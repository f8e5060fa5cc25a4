#include "daemon/dir_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/base/thread_name.h"

namespace chime::daemon {
namespace {

constexpr uint32_t kEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                             IN_CREATE | IN_DELETE | IN_DELETE_SELF |
                             IN_MOVE_SELF;

}  // namespace

absl::StatusOr<std::unique_ptr<DirWatcher>> DirWatcher::Start(
    const std::string& dir, absl::Duration quiet, Callback changed) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "inotify_init1");
  if (inotify_add_watch(fd, dir.c_str(), kEvents | IN_ONLYDIR) < 0) {
    const int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err,
                               absl::StrCat("cannot watch directory ", dir));
  }
  const int stop = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop < 0) {
    const int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, "eventfd");
  }
  std::unique_ptr<DirWatcher> w(
      new DirWatcher(fd, stop, quiet, std::move(changed)));
  w->thread_ = base::NamedThread("chime-dirwatch", [p = w.get()] { p->Run(); });
  return w;
}

DirWatcher::DirWatcher(int inotify_fd, int stop_fd, absl::Duration quiet,
                       Callback changed)
    : inotify_fd_(inotify_fd),
      stop_fd_(stop_fd),
      quiet_(quiet),
      changed_(std::move(changed)) {}

DirWatcher::~DirWatcher() {
  Stop();
  close(inotify_fd_);
  close(stop_fd_);
}

void DirWatcher::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  thread_.join();
}

void DirWatcher::Run() {
  bool pending = false;  // changes seen, callback not yet made
  alignas(inotify_event) char buf[8192];
  for (;;) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    // Waiting for quiet after a change; otherwise until something happens.
    const int timeout =
        pending ? static_cast<int>(absl::ToInt64Milliseconds(quiet_)) : -1;
    const int n = poll(fds, 2, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (fds[1].revents != 0) return;
    if (n == 0) {  // quiet: one callback for the burst
      pending = false;
      changed_(true);
      continue;
    }
    bool gone = false;
    for (;;) {
      const ssize_t len = read(inotify_fd_, buf, sizeof buf);
      if (len <= 0) break;
      for (ssize_t off = 0; off < len;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
        if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) gone = true;
        off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    if (gone) {
      changed_(false);
      return;
    }
    pending = true;
  }
}

}  // namespace chime::daemon
