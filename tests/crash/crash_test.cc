// The crash test (issue 4, docs/testing.md): a real process, a real kill.
//
// It starts crash_host (a Scheduler on a SqliteStore, a few hundred jobs
// firing every second) in a fresh data directory, kills it with SIGKILL after
// a random 200-1500 ms, leaves it down a random 0-1000 ms (so that fires come
// due while nobody runs), and starts it again -- at least kMinKills times,
// within a time budget -- then runs it once more and stops it with SIGTERM.
// The checker (crash_checker.h) then holds the store against the witness and
// ack files and fails on every promise broken across the kills.
//
// Knobs (environment): CHIME_CRASH_SEED repeats the kill times of an earlier
// run (the seed is printed; the processes' own timing still varies),
// CHIME_CRASH_KILLS (default 30), CHIME_CRASH_SECONDS (the budget for the
// kills, default 120), CHIME_CRASH_JOBS (default 200), CHIME_CRASH_KEEP=1
// keeps the data directory (it is kept anyway when the test fails).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/sqlite_store.h"
#include "testing/status_matchers.h"
#include "tests/crash/crash_checker.h"
#include "tests/crash/crash_log.h"
#include "tests/crash/crash_test_util.h"

extern char** environ;

namespace chime::crash {
namespace {

using ::chime::testing::IsOk;

constexpr absl::Duration kMinAlive = absl::Milliseconds(200);
constexpr absl::Duration kMaxAlive = absl::Milliseconds(1500);
constexpr absl::Duration kMaxDown = absl::Milliseconds(1000);
// The last, clean run: long enough for every lost at-least-once run to start
// again and finish.
constexpr absl::Duration kLastRun = absl::Seconds(3);
// crash_host shuts down with a 2 s grace; anything much longer is a hang.
constexpr absl::Duration kStopLimit = absl::Seconds(30);
struct Paths {
  std::string dir;  // the store's data directory, and the files beside it
  std::string witness;
  std::string acks;
  std::string log;  // every incarnation's stdout and stderr
};

pid_t SpawnHost(const Paths& paths, int jobs, uint64_t seed) {
  std::vector<std::string> args = {CHIME_CRASH_HOST,
                                   absl::StrCat("--dir=", paths.dir),
                                   absl::StrCat("--witness=", paths.witness),
                                   absl::StrCat("--acks=", paths.acks),
                                   absl::StrCat("--jobs=", jobs),
                                   absl::StrCat("--seed=", seed)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, paths.log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int err =
      posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  return err == 0 ? pid : -1;
}

// The wait status of `pid` once it has ended, or nullopt if it is still
// running after `limit`.
std::optional<int> WaitFor(pid_t pid, absl::Duration limit) {
  const absl::Time give_up = absl::Now() + limit;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 || absl::Now() >= give_up) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited ", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return absl::StrCat("killed by signal ", WTERMSIG(status));
  return absl::StrCat("wait status ", status);
}

// The end of the hosts' log, for a failure message.
std::string LogTail(const Paths& paths) {
  std::ifstream in(paths.log, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  constexpr size_t kTail = 3000;
  if (text.size() > kTail) text = "..." + text.substr(text.size() - kTail);
  return absl::StrCat("crash_host log (", paths.log, "):\n", text);
}

TEST(CrashTest, KillNineLosesNothing) {
  const uint64_t seed = EnvOr("CHIME_CRASH_SEED", std::random_device{}());
  const uint64_t min_kills = EnvOr("CHIME_CRASH_KILLS", 30);
  const absl::Duration budget =
      absl::Seconds(EnvOr("CHIME_CRASH_SECONDS", 120));
  const int jobs = static_cast<int>(EnvOr("CHIME_CRASH_JOBS", 200));

  std::string dir = ::testing::TempDir() + "chime-crash-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr) << dir;
  const Paths paths{absl::StrCat(dir, "/store"), absl::StrCat(dir, "/witness"),
                    absl::StrCat(dir, "/acks"), absl::StrCat(dir, "/host.log")};
  std::printf("crash test: seed %llu (CHIME_CRASH_SEED), %d jobs, data in %s\n",
              static_cast<unsigned long long>(seed), jobs, dir.c_str());
  std::mt19937_64 rng(seed);
  const auto random_duration = [&rng](absl::Duration lo, absl::Duration hi) {
    return absl::Milliseconds(std::uniform_int_distribution<int64_t>(
        absl::ToInt64Milliseconds(lo), absl::ToInt64Milliseconds(hi))(rng));
  };

  const absl::Time start = absl::Now();
  uint64_t kills = 0;
  while (kills < min_kills && absl::Now() - start < budget) {
    const pid_t pid = SpawnHost(paths, jobs, seed + kills);
    ASSERT_GT(pid, 0) << "cannot start " << CHIME_CRASH_HOST;
    absl::SleepFor(random_duration(kMinAlive, kMaxAlive));
    // The host never ends by itself: if it has, it failed.
    if (std::optional<int> early = WaitFor(pid, absl::ZeroDuration())) {
      FAIL() << "crash_host " << Describe(*early) << " before kill "
             << kills + 1 << "\n"
             << LogTail(paths);
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    std::optional<int> status = WaitFor(pid, kStopLimit);
    ASSERT_TRUE(status.has_value()) << "crash_host survived SIGKILL";
    ASSERT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL)
        << Describe(*status) << "\n"
        << LogTail(paths);
    ++kills;
    absl::SleepFor(random_duration(absl::ZeroDuration(), kMaxDown));
  }
  const absl::Duration killing = absl::Now() - start;
  EXPECT_GE(kills, min_kills) << "only " << kills << " kills in " << budget;

  // The last run, stopped cleanly.
  const pid_t pid = SpawnHost(paths, jobs, seed + kills);
  ASSERT_GT(pid, 0);
  absl::SleepFor(kLastRun);
  const absl::Time stopped = absl::Now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  std::optional<int> status = WaitFor(pid, kStopLimit);
  if (!status.has_value()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  ASSERT_TRUE(status.has_value())
      << "crash_host did not stop within " << kStopLimit << " of SIGTERM\n"
      << LogTail(paths);
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << Describe(*status) << " after SIGTERM\n"
      << LogTail(paths);

  store::SqliteStore::Options options;
  options.data_dir = paths.dir;
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
      store::SqliteStore::Open(options);
  ASSERT_THAT(store, IsOk());
  absl::StatusOr<std::vector<std::string>> witness = ReadLines(paths.witness);
  ASSERT_THAT(witness, IsOk());
  absl::StatusOr<std::vector<std::string>> acks = ReadLines(paths.acks);
  ASSERT_THAT(acks, IsOk());
  absl::StatusOr<CrashReport> report =
      CheckCrashHistory(**store, *witness, *acks, stopped);
  ASSERT_THAT(report, IsOk());

  std::printf("crash test: %llu kills in %s, then a clean stop\n%s\n",
              static_cast<unsigned long long>(kills),
              absl::FormatDuration(killing).c_str(), report->Counts().c_str());
  ExpectNothingLostOrDoubled(*report);

  store->reset();
  if (!HasFailure() && EnvOr("CHIME_CRASH_KEEP", 0) == 0) {
    std::filesystem::remove_all(dir);
  } else {
    std::printf("crash test: data kept in %s\n", dir.c_str());
  }
}

}  // namespace
}  // namespace chime::crash
