// DirWatcher: calls back when the files of a directory change (inotify), so
// the daemon reloads its job files without being told.
//
// Editors save in many ways (write in place, write a temporary file and
// rename it over, delete and recreate); every one of them ends in one of the
// events watched (close after write, moved in or out, created, deleted). A
// burst of events becomes one callback, `quiet` after the last of them. The
// directory itself being deleted or moved stops the watch (logged by the
// caller through the callback's argument being false).
//
// Thread-safety: the callback runs on the watcher's own thread; Stop (and the
// destructor) may be called from any other thread and returns once the thread
// has exited.
#ifndef CHIME_DAEMON_DIR_WATCHER_H_
#define CHIME_DAEMON_DIR_WATCHER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace chime::daemon {

class DirWatcher {
 public:
  // `changed(true)` after a burst of changes; `changed(false)` once if the
  // watch ends because the directory went away.
  using Callback = std::function<void(bool still_watching)>;

  // Starts watching `dir`. NotFound/PermissionDenied naming the directory.
  static absl::StatusOr<std::unique_ptr<DirWatcher>> Start(
      const std::string& dir, absl::Duration quiet, Callback changed);
  ~DirWatcher();  // Stop()
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  void Stop();

 private:
  DirWatcher(int inotify_fd, int stop_fd, absl::Duration quiet,
             Callback changed);
  void Run();

  const int inotify_fd_;
  const int stop_fd_;  // an eventfd: written by Stop
  const absl::Duration quiet_;
  const Callback changed_;
  std::thread thread_;
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_DIR_WATCHER_H_
