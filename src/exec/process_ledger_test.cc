// The process ledger and KillOrphans, with real process groups.
#include "src/exec/process_ledger.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/exec/shell_executor.h"
#include "src/exec/shell_executor_test_util.h"
#include "testing/status_matchers.h"

extern char** environ;

namespace chime::exec {
namespace {

using ::chime::exec::test::PidFromFile;
using ::chime::exec::test::ReapWithin;
using ::chime::exec::test::TempDir;
using ::chime::exec::test::TestContext;
using ::chime::exec::test::WaitFor;
using ::chime::exec::test::WriteFile;
using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The ledger's entries; a read error fails the test.
std::vector<LedgerEntry> Entries(const std::string& dir) {
  absl::StatusOr<std::vector<LedgerEntry>> entries = ReadLedger(dir);
  EXPECT_THAT(entries, IsOk());
  return entries.value_or(std::vector<LedgerEntry>());
}

// Starts `sh -c command` as the leader of a new process group, outside the
// executor (as a daemon that has since died would have).
pid_t StartGroup(const std::string& command) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  const int error = posix_spawn(&pid, "/bin/sh", nullptr, &attr,
                                const_cast<char**>(argv), environ);
  posix_spawnattr_destroy(&attr);
  EXPECT_EQ(error, 0);
  return pid;
}

LedgerEntry EntryFor(pid_t pid) {
  absl::StatusOr<uint64_t> start_time = ProcessStartTime(pid);
  EXPECT_THAT(start_time, IsOk());
  return {.pid = pid,
          .pgid = pid,
          .start_time = start_time.value_or(0),
          .fire_id = "ops/backup:3:2026-11-18T11:06:40Z",
          .attempt = 1};
}

class ProcessLedgerTest : public ::testing::Test {
 protected:
  std::string ledger() const { return dir_.File("ledger"); }
  TempDir dir_;
};

TEST_F(ProcessLedgerTest, EntriesRoundTrip) {
  const LedgerEntry a{.pid = 12,
                      .pgid = 12,
                      .start_time = 99,
                      .fire_id = "nightly:1:2026-11-29T02:30:00Z",
                      .attempt = 3};
  const LedgerEntry b{.pid = 7,
                      .pgid = 7,
                      .start_time = 5,
                      .fire_id = "x:1:2026-11-29T02:30:00Z:manual",
                      .attempt = 1};
  ASSERT_THAT(WriteLedgerEntry(ledger(), a), IsOk());
  ASSERT_THAT(WriteLedgerEntry(ledger(), b), IsOk());
  EXPECT_THAT(Entries(ledger()), ElementsAre(b, a));
  ASSERT_THAT(RemoveLedgerEntry(ledger(), 12), IsOk());
  ASSERT_THAT(RemoveLedgerEntry(ledger(), 12), IsOk());  // already gone: fine
  EXPECT_THAT(Entries(ledger()), ElementsAre(b));
}

TEST_F(ProcessLedgerTest, ReadingSkipsWhatIsNotAWholeEntry) {
  EXPECT_THAT(Entries(ledger()), IsEmpty());  // no directory
  ASSERT_THAT(
      WriteLedgerEntry(
          ledger(),
          {.pid = 5, .pgid = 5, .start_time = 1, .fire_id = "f", .attempt = 1}),
      IsOk());
  WriteFile(absl::StrCat(ledger(), "/6"), "pid 6\npgid 6\n");  // cut short
  WriteFile(absl::StrCat(ledger(), "/7"),
            "pid 8\npgid 8\nstart_time 1\n"
            "attempt 1\nfire_id f\n");  // misnamed
  WriteFile(absl::StrCat(ledger(), "/notes"), "hello\n");
  WriteFile(absl::StrCat(ledger(), "/.9.tmp"), "pid 9\n");
  EXPECT_THAT(Entries(ledger()), SizeIs(1));
  EXPECT_THAT(KillOrphans(ledger()), IsOkAndHolds(0));
  EXPECT_FALSE(test::ReadFile(absl::StrCat(ledger(), "/.9.tmp")).has_value());
}

TEST_F(ProcessLedgerTest, KillOrphansKillsARecordedGroupWhoseLeaderRuns) {
  const pid_t leader = StartGroup("sleep 1000 & exec sleep 1000");
  ASSERT_TRUE(WaitFor([&] { return LiveGroupMembers(leader).size() == 2; }));
  ASSERT_THAT(WriteLedgerEntry(ledger(), EntryFor(leader)), IsOk());

  EXPECT_THAT(KillOrphans(ledger()), IsOkAndHolds(1));
  EXPECT_THAT(LiveGroupMembers(leader), IsEmpty());
  EXPECT_THAT(Entries(ledger()), IsEmpty());
  const std::optional<int> status = ReapWithin(leader);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status));
}

TEST_F(ProcessLedgerTest, KillOrphansKillsSurvivorsOfAGroupWhoseLeaderIsGone) {
  const pid_t leader = StartGroup("sleep 1000 & exit 0");
  const LedgerEntry entry = EntryFor(leader);
  ASSERT_TRUE(ReapWithin(leader).has_value());
  ASSERT_THAT(LiveGroupMembers(leader), SizeIs(1));  // the sleep
  ASSERT_THAT(WriteLedgerEntry(ledger(), entry), IsOk());

  EXPECT_THAT(KillOrphans(ledger()), IsOkAndHolds(1));
  EXPECT_THAT(LiveGroupMembers(leader), IsEmpty());
}

TEST_F(ProcessLedgerTest, KillOrphansLeavesAReusedPidAlone) {
  const pid_t other = StartGroup("exec sleep 1000");
  LedgerEntry entry = EntryFor(other);
  entry.start_time -= 1;  // the recorded process started earlier: not this one
  ASSERT_THAT(WriteLedgerEntry(ledger(), entry), IsOk());

  EXPECT_THAT(KillOrphans(ledger()), IsOkAndHolds(0));
  EXPECT_THAT(LiveGroupMembers(other), ElementsAre(other));
  EXPECT_THAT(Entries(ledger()), IsEmpty());
  kill(other, SIGKILL);
  ReapWithin(other);
}

TEST_F(ProcessLedgerTest, KillOrphansRemovesEntriesOfGroupsThatEnded) {
  const pid_t gone = StartGroup("exit 0");
  const LedgerEntry entry = EntryFor(gone);
  ASSERT_TRUE(ReapWithin(gone).has_value());
  ASSERT_THAT(WriteLedgerEntry(ledger(), entry), IsOk());
  EXPECT_THAT(KillOrphans(ledger()), IsOkAndHolds(0));
  EXPECT_THAT(Entries(ledger()), IsEmpty());
}

// The whole story: a daemon running an attempt with a ledger is killed with
// SIGKILL; its child runs on, orphaned; the next incarnation kills it.
TEST_F(ProcessLedgerTest, TheNextIncarnationKillsTheOrphansOfAKilledDaemon) {
  const std::string pid_file = dir_.File("pid");
  const pid_t daemon = fork();
  if (daemon == 0) {
    ShellExecutorSpec spec;
    spec.command = absl::StrCat("echo $$ > ", pid_file, "; exec sleep 1000");
    ShellOptions options;
    options.ledger_dir = ledger();
    (void)RunShell(spec, TestContext(), options);
    _exit(0);
  }
  ASSERT_GT(daemon, 0);
  const bool started = WaitFor([&] { return PidFromFile(pid_file) != 0; });
  kill(daemon, SIGKILL);
  ASSERT_TRUE(ReapWithin(daemon).has_value());
  ASSERT_TRUE(started);
  const pid_t orphan = PidFromFile(pid_file);
  ASSERT_THAT(LiveGroupMembers(orphan), ElementsAre(orphan));  // still runs
  ASSERT_THAT(Entries(ledger()), SizeIs(1));

  EXPECT_THAT(KillOrphans(ledger()), IsOkAndHolds(1));
  EXPECT_THAT(LiveGroupMembers(orphan), IsEmpty());
  EXPECT_THAT(Entries(ledger()), IsEmpty());
}

}  // namespace
}  // namespace chime::exec
