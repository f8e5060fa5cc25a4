// The shell executor ending what it started: cancel and kill, whole process
// trees, reaping, and the ledger entry of a running child.
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/exec/process_ledger.h"
#include "src/exec/shell_executor.h"
#include "src/exec/shell_executor_spawn.h"
#include "src/exec/shell_executor_test_util.h"
#include "testing/status_matchers.h"

namespace chime::exec {
namespace {

using ::chime::exec::test::BackgroundAttempt;
using ::chime::exec::test::PidFromFile;
using ::chime::exec::test::ReapWithin;
using ::chime::exec::test::TempDir;
using ::chime::exec::test::TestContext;
using ::chime::exec::test::WaitFor;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ShellExecutorSpec Command(std::string command) {
  ShellExecutorSpec spec;
  spec.command = std::move(command);
  return spec;
}

// True when `pid` is no longer a child of this process waiting to be reaped.
bool NotOurZombie(pid_t pid) {
  int status;
  return waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD;
}

// How many live processes of group `pgid` run `sleep`.
int SleepsInGroup(pid_t pgid) {
  int count = 0;
  for (pid_t member : LiveGroupMembers(pgid)) {
    if (test::ReadFile(absl::StrCat("/proc/", member, "/comm")) == "sleep\n") {
      ++count;
    }
  }
  return count;
}

// The ledger's entries; a read error fails the test.
std::vector<LedgerEntry> Entries(const std::string& dir) {
  absl::StatusOr<std::vector<LedgerEntry>> entries = ReadLedger(dir);
  EXPECT_THAT(entries, IsOk());
  return entries.value_or(std::vector<LedgerEntry>());
}

class ShellExecutorCancelTest : public ::testing::Test {
 protected:
  // Starts `command` after it wrote its pid to a file, and waits for that.
  std::unique_ptr<BackgroundAttempt> Start(const std::string& command,
                                           ShellOptions options = {}) {
    auto attempt = std::make_unique<BackgroundAttempt>(
        Command(absl::StrCat("echo $$ > ", pid_file(), "; ", command)),
        std::move(options));
    EXPECT_TRUE(WaitFor([&] { return PidFromFile(pid_file()) != 0; }))
        << "the command did not start";
    return attempt;
  }
  std::string pid_file() const { return dir_.File("pid"); }
  pid_t pid() const { return PidFromFile(pid_file()); }

  TempDir dir_;
};

TEST_F(ShellExecutorCancelTest, CancelEndsTheChildWithSigterm) {
  auto attempt = Start("exec sleep 60");
  const absl::Time cancelled_at = absl::Now();
  attempt->Cancel();
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_LT(absl::Now() - cancelled_at, absl::Seconds(5));
  EXPECT_THAT(attempt->status(),
              StatusIs(absl::StatusCode::kCancelled,
                       absl::StrCat("cancelled: sent SIGTERM to process group ",
                                    pid(), "; killed by signal 15 (SIGTERM)")));
  EXPECT_TRUE(NotOurZombie(pid()));
}

TEST_F(ShellExecutorCancelTest, CancelIsAnErrorEvenWhenTheChildExitsZero) {
  auto attempt = Start("trap 'exit 0' TERM; sleep 60 & wait");
  attempt->Cancel();
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_THAT(attempt->status(), StatusIs(absl::StatusCode::kCancelled,
                                          HasSubstr("exit status 0")));
}

TEST_F(ShellExecutorCancelTest, KillEndsAChildThatIgnoresSigterm) {
  auto attempt = Start("trap '' TERM; echo trapped; sleep 60");
  attempt->Cancel();
  // The cancel does not end it...
  EXPECT_FALSE(attempt->WaitDone(absl::Milliseconds(300)));
  // ...the kill does.
  attempt->Kill();
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_THAT(attempt->status(),
              StatusIs(absl::StatusCode::kCancelled,
                       HasSubstr("SIGTERM, then SIGKILL to process group")));
  EXPECT_THAT(attempt->status().message(),
              HasSubstr("killed by signal 9 (SIGKILL)"));
  EXPECT_EQ(attempt->output(), "trapped\n");
  EXPECT_TRUE(NotOurZombie(pid()));
}

TEST_F(ShellExecutorCancelTest, ATimeoutKillsTheWholeProcessTree) {
  // Grandchildren that ignore SIGTERM, one not even holding the output pipe.
  auto attempt = Start(
      "(trap '' TERM; sleep 1000) & "
      "(trap '' TERM; sleep 1000 > /dev/null 2>&1) & "
      "sleep 1000 & wait");
  ASSERT_TRUE(WaitFor([&] { return SleepsInGroup(pid()) == 3; }))
      << "the tree did not start";
  attempt->Cancel();
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_THAT(attempt->status(), StatusIs(absl::StatusCode::kCancelled));
  EXPECT_THAT(LiveGroupMembers(pid()), IsEmpty());
  EXPECT_TRUE(NotOurZombie(pid()));
}

TEST_F(ShellExecutorCancelTest, BackgroundProcessesDieWhenTheCommandExits) {
  // The leader exits at once; what it left behind is killed, so the attempt
  // neither waits for it nor leaves it running.
  const absl::Time start = absl::Now();
  auto attempt = Start("sleep 1000 & sleep 1000 > /dev/null & echo done");
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_THAT(attempt->status(), IsOk());
  EXPECT_EQ(attempt->output(), "done\n");
  EXPECT_THAT(LiveGroupMembers(pid()), IsEmpty());
  EXPECT_TRUE(NotOurZombie(pid()));
}

TEST_F(ShellExecutorCancelTest,
       OutputOfAProcessOutsideTheGroupIsDrainedBriefly) {
  // setsid leaves the group, keeping the pipe open: the attempt stops reading
  // after drain_timeout instead of waiting for it.
  ShellOptions options;
  options.drain_timeout = absl::Milliseconds(200);
  const absl::Time start = absl::Now();
  auto attempt =
      Start(absl::StrCat("setsid sh -c 'echo $$ > ", dir_.File("escaped"),
                         "; exec sleep 1000' & sleep 0.2; echo leader"),
            options);
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_THAT(attempt->status(), IsOk());
  EXPECT_EQ(attempt->output(), "leader\n");
  const pid_t escaped = PidFromFile(dir_.File("escaped"));
  ASSERT_GT(escaped, 0);
  kill(escaped, SIGKILL);  // not the executor's any more: the test cleans up
}

TEST_F(ShellExecutorCancelTest, TheLedgerHasAnEntryWhileTheChildRuns) {
  ShellOptions options;
  options.ledger_dir = dir_.File("ledger");
  auto attempt = Start("exec sleep 60", options);
  const AttemptContext ctx = TestContext();
  absl::StatusOr<uint64_t> start_time = ProcessStartTime(pid());
  ASSERT_THAT(start_time, IsOk());
  EXPECT_THAT(Entries(options.ledger_dir),
              ElementsAre(LedgerEntry{.pid = pid(),
                                      .pgid = pid(),
                                      .start_time = *start_time,
                                      .fire_id = ctx.fire_id(),
                                      .attempt = ctx.attempt}));
  attempt->Kill();
  ASSERT_TRUE(attempt->WaitDone());
  EXPECT_THAT(Entries(options.ledger_dir), IsEmpty());
}

TEST_F(ShellExecutorCancelTest, ALedgerThatCannotBeWrittenStartsNothing) {
  ShellOptions options;
  options.ledger_dir = "/dev/null/ledger";
  AttemptContext ctx = TestContext();
  EXPECT_THAT(
      RunShell(Command(absl::StrCat("touch ", dir_.File("ran"))), ctx, options),
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr("the command was not started")));
  EXPECT_FALSE(test::ReadFile(dir_.File("ran")).has_value());
}

// The gate, seen from the spawn layer: a daemon that dies (or gives up)
// before opening it leaves a child that exits 125 without running anything.
TEST_F(ShellExecutorCancelTest, AClosedGateRunsNothing) {
  shell_internal::SpawnRequest request;
  request.path = "/bin/sh";
  request.argv = {"sh", "-c", absl::StrCat("touch ", dir_.File("ran"))};
  request.gated = true;
  absl::StatusOr<shell_internal::SpawnedChild> child =
      shell_internal::Spawn(request);
  ASSERT_THAT(child, IsOk());
  child->gate.Reset();  // as the daemon's death would
  const std::optional<int> status = ReapWithin(child->pid);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 125);
  EXPECT_FALSE(test::ReadFile(dir_.File("ran")).has_value());
}

TEST_F(ShellExecutorCancelTest, AClosedGateRunsNothingAsAnotherUser) {
  if (geteuid() != 0 || getpwnam("nobody") == nullptr) {
    GTEST_SKIP() << "needs root";
  }
  shell_internal::SpawnRequest request;
  request.path = "/bin/sh";
  request.argv = {"sh", "-c", "echo ran"};
  request.gated = true;
  request.credentials = shell_internal::Credentials{.uid = 65534, .gid = 65534};
  absl::StatusOr<shell_internal::SpawnedChild> child =
      shell_internal::Spawn(request);
  ASSERT_THAT(child, IsOk());
  child->gate.Reset();
  const std::optional<int> status = ReapWithin(child->pid);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(WEXITSTATUS(*status), 125);
}

}  // namespace
}  // namespace chime::exec
