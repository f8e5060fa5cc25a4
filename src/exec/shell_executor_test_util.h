// Test support for the shell executor tests: an attempt context, a temporary
// directory, bounded waits, and an attempt running on its own thread that the
// test can cancel. Every wait here is bounded.
#ifndef CHIME_SRC_EXEC_SHELL_EXECUTOR_TEST_UTIL_H_
#define CHIME_SRC_EXEC_SHELL_EXECUTOR_TEST_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/scheduler.h"
#include "gtest/gtest.h"
#include "src/exec/shell_executor.h"
#include "testing/attempt_context.h"

namespace chime::exec::test {

inline AttemptContext TestContext() {
  return ::chime::testing::TestAttemptContext();
}

// Polls `done` every 5 ms until it holds or `limit` passed.
inline bool WaitFor(const std::function<bool()>& done,
                    absl::Duration limit = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + limit;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

// A fresh directory, removed with its contents (one level) at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "chime-shell-XXXXXX";
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    // Bounded and shallow: test directories hold plain files, at most one
    // directory level (a ledger).
    const std::string command = absl::StrCat("rm -rf '", path_, "'");
    (void)!system(command.c_str());
  }
  const std::string& path() const { return path_; }
  std::string File(absl::string_view name) const {
    return absl::StrCat(path_, "/", name);
  }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& text,
                      mode_t mode = 0644) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
}

inline std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The pid a command wrote to `path` with `echo $$ > path` (0 until then).
inline pid_t PidFromFile(const std::string& path) {
  pid_t pid = 0;
  const std::optional<std::string> text = ReadFile(path);
  if (!text.has_value() || !absl::SimpleAtoi(*text, &pid)) return 0;
  return pid;
}

// Waits up to `limit` for child `pid` of this process to exit and reaps it.
// Returns its wait status, or nullopt (after SIGKILL and a reap) on timeout.
inline std::optional<int> ReapWithin(pid_t pid,
                                     absl::Duration limit = absl::Seconds(10)) {
  int status = 0;
  const bool exited =
      WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, limit);
  if (exited) return status;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return std::nullopt;
}

// One attempt on its own thread, with flags the test sets.
class BackgroundAttempt {
 public:
  BackgroundAttempt(ShellExecutorSpec spec, ShellOptions options = {})
      : ctx_(TestContext()) {
    ctx_.cancelled = &cancelled_;
    ctx_.killed = &killed_;
    ctx_.output = &output_;
    thread_ = std::thread(
        [this, spec = std::move(spec), options = std::move(options)] {
          status_ = RunShell(spec, ctx_, options);
          done_.store(true);
        });
  }
  // A test that failed before the attempt ended still ends it.
  ~BackgroundAttempt() {
    if (!done_.load()) Kill();
    thread_.join();
  }

  void Cancel() { cancelled_.store(true); }
  void Kill() {
    cancelled_.store(true);
    killed_.store(true);
  }
  bool done() const { return done_.load(); }
  // Waits up to `limit` for the attempt to return.
  bool WaitDone(absl::Duration limit = absl::Seconds(10)) {
    return WaitFor([this] { return done(); }, limit);
  }
  // REQUIRES: done().
  const absl::Status& status() const { return status_; }
  const std::string& output() const { return output_; }

 private:
  AttemptContext ctx_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> killed_{false};
  std::atomic<bool> done_{false};
  std::string output_;
  absl::Status status_;
  std::thread thread_;
};

}  // namespace chime::exec::test

#endif  // CHIME_SRC_EXEC_SHELL_EXECUTOR_TEST_UTIL_H_
