// The shell executor's results, output and environment, with real children.
// Cancellation, process trees and the ledger: shell_executor_cancel_test.cc.
#include "src/exec/shell_executor.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/exec/attempt_identity.h"
#include "src/exec/process_ledger.h"
#include "src/exec/shell_executor_test_util.h"
#include "testing/status_matchers.h"

namespace chime::exec {
namespace {

using ::chime::exec::test::PidFromFile;
using ::chime::exec::test::ReapWithin;
using ::chime::exec::test::TempDir;
using ::chime::exec::test::TestContext;
using ::chime::exec::test::WriteFile;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

ShellExecutorSpec Argv(std::vector<std::string> argv) {
  ShellExecutorSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

ShellExecutorSpec Command(std::string command) {
  ShellExecutorSpec spec;
  spec.command = std::move(command);
  return spec;
}

struct Result {
  int32_t exit_code = -1;
  absl::Status status;
  std::string output;
};

Result RunAttempt(const ShellExecutorSpec& spec,
                  const ShellOptions& options = {}) {
  Result result;
  AttemptContext ctx = TestContext();
  ctx.output = &result.output;
  ctx.exit_code = &result.exit_code;
  result.status = RunShell(spec, ctx, options);
  return result;
}

// One mode each: direct posix_spawn, and behind the ledger's gate.
class ShellExecutorTest : public ::testing::TestWithParam<bool> {
 protected:
  ShellOptions Options() const {
    ShellOptions options;
    if (GetParam()) options.ledger_dir = ledger_.File("ledger");
    return options;
  }
  Result RunSpec(const ShellExecutorSpec& spec) const {
    return RunAttempt(spec, Options());
  }

  TempDir ledger_;
};

INSTANTIATE_TEST_SUITE_P(DirectAndGated, ShellExecutorTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "Gated" : "Direct";
                         });

TEST_P(ShellExecutorTest, ExitZeroIsSuccess) {
  EXPECT_THAT(RunSpec(Argv({"true"})).status, IsOk());
  EXPECT_THAT(RunSpec(Command("exit 0")).status, IsOk());
}

TEST_P(ShellExecutorTest, NonZeroExitIsAnErrorNamingTheStatus) {
  EXPECT_THAT(RunSpec(Command("exit 3")).status,
              StatusIs(absl::StatusCode::kInternal, "exit status 3"));
  EXPECT_THAT(RunSpec(Argv({"false"})).status,
              StatusIs(absl::StatusCode::kInternal, "exit status 1"));
  EXPECT_EQ(RunSpec(Command("exit 3")).exit_code, 3);
  EXPECT_EQ(RunSpec(Command("exit 0")).exit_code, 0);
  EXPECT_EQ(RunSpec(Command("kill -KILL $$")).exit_code, 128 + 9);
}

TEST_P(ShellExecutorTest, DeathBySignalNamesTheSignal) {
  EXPECT_THAT(
      RunSpec(Command("kill -KILL $$")).status,
      StatusIs(absl::StatusCode::kInternal, "killed by signal 9 (SIGKILL)"));
  EXPECT_THAT(RunSpec(Command("kill -SEGV $$")).status,
              StatusIs(absl::StatusCode::kInternal,
                       StartsWith("killed by signal 11 (SIGSEGV)")));
}

TEST_P(ShellExecutorTest, CapturesStdoutAndStderrInOrder) {
  const Result r = RunSpec(Command("echo out; echo err >&2; echo out2"));
  EXPECT_THAT(r.status, IsOk());
  EXPECT_EQ(r.output, "out\nerr\nout2\n");
}

TEST_P(ShellExecutorTest, StdinIsEmpty) {
  const Result r = RunSpec(Command("cat; echo end"));
  EXPECT_EQ(r.output, "end\n");
}

TEST_P(ShellExecutorTest, KeepsTheTailOfLongOutputAfterAMarker) {
  ShellExecutorSpec spec =
      Command("head -c 1048576 /dev/zero | tr '\\0' a; printf END");
  spec.output_limit = 1024;
  const Result r = RunSpec(spec);
  EXPECT_THAT(r.status, IsOk());
  const std::string marker =
      absl::StrCat("[chime: first ", 1048576 + 3 - 1024, " bytes dropped]\n");
  EXPECT_THAT(r.output, StartsWith(marker));
  EXPECT_EQ(r.output.size(), marker.size() + 1024);
  EXPECT_THAT(r.output, EndsWith(std::string(1021, 'a') + "END"));
}

TEST_P(ShellExecutorTest, OutputWithinTheLimitHasNoMarker) {
  ShellExecutorSpec spec = Command("printf 12345");
  spec.output_limit = 5;
  EXPECT_EQ(RunSpec(spec).output, "12345");
}

TEST_P(ShellExecutorTest, OnOutputGetsTheOutputAsItComes) {
  ShellExecutorSpec spec = Command("echo first; sleep 0.5; echo second");
  spec.output_limit = 7;  // the kept tail; on_output gets everything
  ShellOptions options = Options();
  std::string streamed;
  absl::Time first_seen = absl::InfiniteFuture();
  options.on_output = [&](absl::string_view bytes) {
    streamed.append(bytes.data(), bytes.size());
    if (streamed == "first\n") first_seen = absl::Now();
  };
  const Result r = RunAttempt(spec, options);
  const absl::Time returned = absl::Now();
  EXPECT_THAT(r.status, IsOk());
  EXPECT_EQ(streamed, "first\nsecond\n");
  EXPECT_THAT(r.output, EndsWith("second\n"));
  EXPECT_GE(returned - first_seen, absl::Milliseconds(400));
}

TEST_P(ShellExecutorTest, TheTailDoesNotStartInsideACharacter) {
  ShellExecutorSpec spec = Command("printf 'x\\303\\251y'");  // "xéy"
  spec.output_limit = 2;  // would keep "\251y"
  EXPECT_EQ(RunSpec(spec).output, "[chime: first 3 bytes dropped]\ny");
}

TEST_P(ShellExecutorTest, EnvironmentIsDaemonThenSpecThenIdentity) {
  setenv("CHIME_TEST_FROM_DAEMON", "daemon", 1);
  setenv("CHIME_TEST_OVERRIDDEN", "daemon", 1);
  ShellExecutorSpec spec = Argv({"env"});
  spec.env = {{"CHIME_TEST_OVERRIDDEN", "spec"},
              {"CHIME_TEST_FROM_SPEC", "a b=c"},
              {"CHIME_FIRE_ID", "not the identity"},
              {"TRACEPARENT", "not the trace"}};
  const Result r = RunSpec(spec);
  ASSERT_THAT(r.status, IsOk());
  std::map<std::string, std::string> env;
  for (absl::string_view line : absl::StrSplit(r.output, '\n')) {
    const size_t eq = line.find('=');
    if (eq != absl::string_view::npos) {
      env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
  }
  const AttemptContext ctx = TestContext();
  EXPECT_EQ(env["CHIME_TEST_FROM_DAEMON"], "daemon");
  EXPECT_EQ(env["CHIME_TEST_OVERRIDDEN"], "spec");
  EXPECT_EQ(env["CHIME_TEST_FROM_SPEC"], "a b=c");
  EXPECT_EQ(env["CHIME_FIRE_ID"], ctx.fire_id());
  EXPECT_EQ(env["CHIME_JOB"], "ops/backup");
  EXPECT_EQ(env["CHIME_ATTEMPT"], "2");
  EXPECT_EQ(env["CHIME_FENCING_TOKEN"], "17");
  EXPECT_EQ(env["CHIME_RUN_ID"], "42");
  EXPECT_EQ(env["CHIME_SCHEDULED_TIME"], "2026-11-18T11:06:40Z");
  EXPECT_EQ(env["TRACEPARENT"], Traceparent(ctx));
}

TEST_P(ShellExecutorTest, RunsInTheWorkingDir) {
  TempDir dir;
  ShellExecutorSpec spec = Argv({"pwd"});
  spec.working_dir = dir.path();
  char* real = realpath(dir.path().c_str(), nullptr);
  ASSERT_NE(real, nullptr);
  EXPECT_EQ(RunSpec(spec).output, absl::StrCat(real, "\n"));
  free(real);
}

TEST_P(ShellExecutorTest, ArgvReachesTheProgramUntouched) {
  const Result r = RunSpec(Argv(
      {"printf", "[%s]\\n", "a b", "'q'", "\"dq\"", "$HOME", "*", "", "\\"}));
  EXPECT_THAT(r.status, IsOk());
  EXPECT_EQ(r.output, "[a b]\n['q']\n[\"dq\"]\n[$HOME]\n[*]\n[]\n[\\]\n");
}

TEST_P(ShellExecutorTest, FindsTheProgramInTheSpecsPath) {
  TempDir dir;
  WriteFile(dir.File("chime-hello"), "#!/bin/sh\necho hello \"$@\"\n", 0755);
  ShellExecutorSpec spec = Argv({"chime-hello", "world"});
  spec.env = {{"PATH", absl::StrCat("/nonexistent:", dir.path(), ":/bin")}};
  const Result r = RunSpec(spec);
  EXPECT_THAT(r.status, IsOk());
  EXPECT_EQ(r.output, "hello world\n");
}

TEST_P(ShellExecutorTest, RelativeProgramIsFoundFromTheWorkingDir) {
  TempDir dir;
  WriteFile(dir.File("run.sh"), "#!/bin/sh\necho ran\n", 0755);
  ShellExecutorSpec spec = Argv({"./run.sh"});
  spec.working_dir = dir.path();
  EXPECT_EQ(RunSpec(spec).output, "ran\n");
}

TEST_P(ShellExecutorTest, UnknownCommandIsNotFoundNamingIt) {
  ShellExecutorSpec spec = Argv({"chime-no-such-command", "x"});
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  EXPECT_THAT(RunSpec(spec).status,
              StatusIs(absl::StatusCode::kNotFound,
                       "command not found: \"chime-no-such-command\" "
                       "(searched PATH=/usr/bin:/bin)"));
  EXPECT_THAT(RunSpec(Argv({"/nonexistent/tool"})).status,
              StatusIs(absl::StatusCode::kNotFound,
                       "command not found: \"/nonexistent/tool\""));
}

TEST_P(ShellExecutorTest, NonExecutableCommandIsPermissionDenied) {
  TempDir dir;
  WriteFile(dir.File("script"), "#!/bin/sh\necho no\n", 0644);
  EXPECT_THAT(
      RunSpec(Argv({dir.File("script")})).status,
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr(absl::StrCat("\"", dir.File("script"), "\""))));
  EXPECT_THAT(RunSpec(Argv({dir.path()})).status,
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("is a directory")));
  ShellExecutorSpec in_path = Argv({"script"});
  in_path.env = {{"PATH", dir.path()}};
  EXPECT_THAT(RunSpec(in_path).status,
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("cannot execute")));
}

TEST_P(ShellExecutorTest, BadWorkingDirIsAPreciseError) {
  ShellExecutorSpec spec = Argv({"true"});
  spec.working_dir = "/nonexistent/dir";
  EXPECT_THAT(RunSpec(spec).status,
              StatusIs(absl::StatusCode::kNotFound,
                       "working_dir \"/nonexistent/dir\": No such file or "
                       "directory"));
  TempDir dir;
  WriteFile(dir.File("file"), "");
  spec.working_dir = dir.File("file");
  EXPECT_THAT(RunSpec(spec).status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not a directory")));
}

TEST_P(ShellExecutorTest, SpecWithBothOrNeitherCommandFormIsInvalid) {
  ShellExecutorSpec both = Argv({"true"});
  both.command = "true";
  EXPECT_THAT(RunSpec(both).status,
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RunSpec(ShellExecutorSpec()).status,
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(ShellExecutorTest, UnknownUserOrGroupIsNotFound) {
  ShellExecutorSpec spec = Argv({"true"});
  spec.user = "chime-no-such-user";
  EXPECT_THAT(RunSpec(spec).status,
              StatusIs(absl::StatusCode::kNotFound,
                       "user \"chime-no-such-user\": no such user"));
  spec.user = "";
  spec.group = "chime-no-such-group";
  EXPECT_THAT(RunSpec(spec).status,
              StatusIs(absl::StatusCode::kNotFound,
                       "group \"chime-no-such-group\": no such group"));
}

TEST_P(ShellExecutorTest, RunsAsAnotherUserWhenRoot) {
  const passwd* nobody = getpwnam("nobody");
  if (geteuid() != 0 || nobody == nullptr) GTEST_SKIP() << "needs root";
  ShellExecutorSpec spec = Command("id -u; id -g");
  spec.user = "nobody";
  Result r = RunSpec(spec);
  EXPECT_THAT(r.status, IsOk());
  EXPECT_EQ(r.output, absl::StrCat(nobody->pw_uid, "\n", nobody->pw_gid, "\n"));
  spec.group = "0";
  r = RunSpec(spec);
  EXPECT_EQ(r.output, absl::StrCat(nobody->pw_uid, "\n0\n"));
}

TEST_P(ShellExecutorTest, ExecFailureAsAnotherUserIsReportedPrecisely) {
  if (geteuid() != 0 || getpwnam("nobody") == nullptr) {
    GTEST_SKIP() << "needs root";
  }
  TempDir dir;  // mode 0700: nobody may not enter it
  WriteFile(dir.File("tool"), "#!/bin/sh\necho no\n", 0755);
  ShellExecutorSpec spec = Argv({dir.File("tool")});
  spec.user = "nobody";
  EXPECT_THAT(RunSpec(spec).status,
              StatusIs(absl::StatusCode::kPermissionDenied,
                       absl::StrCat("cannot start \"", dir.File("tool"),
                                    "\": execve: Permission denied")));
}

TEST(ShellExecutor, NonRootDaemonCannotSwitchUsers) {
  if (geteuid() != 0) {
    // Already not root: the check itself.
    ShellExecutorSpec spec = Argv({"true"});
    spec.user = "0";
    EXPECT_THAT(
        RunAttempt(spec).status,
        StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("needs root")));
    return;
  }
  // As root, drop to nobody in a forked child and report through its status.
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user nobody";
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgid(gid) != 0 || setuid(uid) != 0) _exit(2);
    ShellExecutorSpec spec = Argv({"true"});
    spec.user = "root";
    const absl::Status s = RunShell(spec, TestContext(), {});
    const std::string expected = absl::StrCat(
        "user \"root\" (uid 0, gid 0): switching users needs root; the "
        "daemon runs as uid ",
        uid, ", gid ", gid);
    _exit(s.code() == absl::StatusCode::kPermissionDenied &&
                  s.message() == expected
              ? 0
              : 1);
  }
  ASSERT_GT(pid, 0);
  const std::optional<int> status = ReapWithin(pid);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
}

// A lease check that answers true for its first `held_calls` calls and false
// after, counting the calls and noting the shard asked.
class FixedLease : public LeaseCheck {
 public:
  explicit FixedLease(bool held) : held_calls_(held ? 1 << 30 : 0) {}
  static FixedLease HeldFor(int calls) {
    FixedLease lease(false);
    lease.held_calls_ = calls;
    return lease;
  }
  FixedLease(const FixedLease& other) : held_calls_(other.held_calls_) {}
  bool LeaseHeld(uint32_t shard) const override {
    last_shard_.store(shard);
    return calls_.fetch_add(1) < held_calls_;
  }
  int calls() const { return calls_.load(); }
  uint32_t last_shard() const { return last_shard_.load(); }

 private:
  int held_calls_;
  mutable std::atomic<int> calls_{0};
  mutable std::atomic<uint32_t> last_shard_{0};
};

// A scheduler paused past its lease between the start of the attempt and
// the command (SIGSTOP, a frozen VM) must not run it: another node may own
// the run by now. Checked directly before the spawn, or, behind the ledger's
// gate, after the spawn and the ledger's write but before the gate opens.
TEST_P(ShellExecutorTest, ALeaseLostBeforeTheCommandRunsRunsNothing) {
  TempDir dir;
  FixedLease lost(false);
  AttemptContext ctx = TestContext();
  ctx.lease = &lost;
  ctx.shard = 5;
  EXPECT_THAT(RunShell(Command(absl::StrCat("touch ", dir.File("ran"))), ctx,
                       Options()),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("lease")));
  EXPECT_GE(lost.calls(), 1);
  EXPECT_EQ(lost.last_shard(), 5u);
  EXPECT_FALSE(test::ReadFile(dir.File("ran")).has_value());
  if (GetParam()) {
    absl::StatusOr<std::vector<LedgerEntry>> entries =
        ReadLedger(Options().ledger_dir);
    ASSERT_THAT(entries.status(), IsOk());
    EXPECT_THAT(*entries, IsEmpty());  // the gated child was taken back
  }
  // Held, the same command runs.
  FixedLease held(true);
  ctx.lease = &held;
  EXPECT_THAT(RunShell(Command(absl::StrCat("touch ", dir.File("ran"))), ctx,
                       Options()),
              IsOk());
  EXPECT_GE(held.calls(), 1);
  EXPECT_TRUE(test::ReadFile(dir.File("ran")).has_value());
}

// Once the command runs, a lease lost is no reason to kill it: it has acted
// already (the scheduler's own loss handling stops its attempts).
TEST_P(ShellExecutorTest, ALeaseLostOnceTheCommandRunsDoesNotStopIt) {
  TempDir dir;
  const FixedLease once = FixedLease::HeldFor(1);
  AttemptContext ctx = TestContext();
  ctx.lease = &once;
  EXPECT_THAT(RunShell(Command(absl::StrCat("touch ", dir.File("ran"))), ctx,
                       Options()),
              IsOk());
  EXPECT_EQ(once.calls(), 1);
  EXPECT_TRUE(test::ReadFile(dir.File("ran")).has_value());
}

TEST(ShellExecutor, CancelledBeforeTheStartRunsNothing) {
  TempDir dir;
  std::atomic<bool> cancelled{true};
  AttemptContext ctx = TestContext();
  ctx.cancelled = &cancelled;
  EXPECT_THAT(
      RunShell(Command(absl::StrCat("touch ", dir.File("ran"))), ctx, {}),
      StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(PidFromFile(dir.File("ran")), 0);
  EXPECT_FALSE(test::ReadFile(dir.File("ran")).has_value());
}

TEST(ShellExecutor, MakeShellFunctionRunsTheSpec) {
  const JobFunction fn = MakeShellFunction(Command("echo $CHIME_ATTEMPT"), {});
  std::string output;
  AttemptContext ctx = TestContext();
  ctx.output = &output;
  EXPECT_THAT(fn(ctx), IsOk());
  EXPECT_EQ(output, "2\n");
  EXPECT_THAT(RunAttempt(Argv({"true"})).output, IsEmpty());
}

}  // namespace
}  // namespace chime::exec
