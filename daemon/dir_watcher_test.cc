#include "daemon/dir_watcher.h"

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::daemon {
namespace {

using ::chime::testing::StatusIs;

class DirWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/chime-watch-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Waits (at most 10 s) until `calls_` reaches `n`.
  bool WaitForCalls(int n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (calls_.load() < n) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  std::string dir_;
  std::atomic<int> calls_{0};
};

TEST_F(DirWatcherTest, ABurstOfChangesIsOneCallback) {
  auto w = DirWatcher::Start(dir_, absl::Milliseconds(100), [&](bool watching) {
    EXPECT_TRUE(watching);
    ++calls_;
  });
  ASSERT_TRUE(w.ok()) << w.status();
  // An editor's save: write a temporary file, rename it over the real one.
  for (int i = 0; i < 3; ++i) {
    std::ofstream(dir_ + "/.a.yaml.tmp") << "id: a" << i << "\n";
    std::filesystem::rename(dir_ + "/.a.yaml.tmp", dir_ + "/a.yaml");
  }
  ASSERT_TRUE(WaitForCalls(1));
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(calls_.load(), 1);
  std::filesystem::remove(dir_ + "/a.yaml");
  EXPECT_TRUE(WaitForCalls(2));
}

TEST_F(DirWatcherTest, TheDirectoryGoingAwayEndsTheWatch) {
  absl::Notification gone;
  auto w = DirWatcher::Start(dir_, absl::Milliseconds(50), [&](bool watching) {
    if (!watching) gone.Notify();
  });
  ASSERT_TRUE(w.ok()) << w.status();
  std::filesystem::remove_all(dir_);
  EXPECT_TRUE(gone.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(DirWatcherTest, AMissingDirectoryIsNotFound) {
  EXPECT_THAT(
      DirWatcher::Start(dir_ + "/nope", absl::Milliseconds(50), [](bool) {})
          .status(),
      StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(DirWatcherTest, StopReturnsPromptly) {
  auto w = DirWatcher::Start(dir_, absl::Seconds(60), [](bool) {});
  ASSERT_TRUE(w.ok());
  const absl::Time start = absl::Now();
  (*w)->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace chime::daemon
