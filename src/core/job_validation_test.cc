// ValidateJobSpec on executor specs (the rest of the job model's validation is
// exercised by tests/scenarios/errors.txt).
#include "chime/job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime {
namespace {

using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

JobSpec Shell(std::vector<std::string> argv, std::string command) {
  JobSpec spec;
  spec.key.id = "j";
  spec.trigger.expression = "* * * * *";
  spec.executor.kind = ExecutorSpec::Kind::kShell;
  spec.executor.shell.argv = std::move(argv);
  spec.executor.shell.command = std::move(command);
  return spec;
}

JobSpec Http(std::string url) {
  JobSpec spec;
  spec.key.id = "j";
  spec.trigger.expression = "* * * * *";
  spec.executor.kind = ExecutorSpec::Kind::kHttp;
  spec.executor.http.url = std::move(url);
  return spec;
}

TEST(ExecutorValidationTest, ShellNeedsExactlyOneOfArgvAndCommand) {
  EXPECT_TRUE(ValidateJobSpec(Shell({"true"}, "")).ok());
  EXPECT_TRUE(ValidateJobSpec(Shell({}, "echo hi")).ok());
  EXPECT_THAT(ValidateJobSpec(Shell({}, "")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.shell: needs exactly one")));
  EXPECT_THAT(ValidateJobSpec(Shell({"true"}, "echo")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.shell: needs exactly one")));
  EXPECT_THAT(ValidateJobSpec(Shell({""}, "")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("argv[0] is empty")));
}

TEST(ExecutorValidationTest, ShellEnvNamesAndOutputLimit) {
  JobSpec spec = Shell({"true"}, "");
  spec.executor.shell.env = {{"GOOD_1", "x"}, {"1BAD", "y"}};
  EXPECT_THAT(ValidateJobSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.shell.env: \"1BAD\" is not a "
                                 "variable name")));
  spec.executor.shell.env = {{"GOOD_1", "x"}};
  spec.executor.shell.output_limit = -1;
  EXPECT_THAT(ValidateJobSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.shell.output_limit: -1")));
}

TEST(ExecutorValidationTest, HttpUrlMethodHeadersStatuses) {
  EXPECT_TRUE(ValidateJobSpec(Http("http://127.0.0.1:8080/x")).ok());
  EXPECT_THAT(ValidateJobSpec(Http("ftp://host/x")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.http.url: \"ftp://host/x\" must "
                                 "start with http:// or https://")));
  JobSpec spec = Http("https://example.test/");
  spec.executor.http.method = "PO ST";
  EXPECT_THAT(ValidateJobSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.http.method")));
  spec.executor.http.method = "PUT";
  spec.executor.http.headers = {{"X-Ok", "a\r\nInjected: 1"}};
  EXPECT_THAT(ValidateJobSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("X-Ok: the value has a line break")));
  spec.executor.http.headers = {{"Bad Name", "v"}};
  EXPECT_THAT(ValidateJobSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"Bad Name\" is not a header name")));
  spec.executor.http.headers = {};
  spec.executor.http.success_statuses = {{200, 299}, {500, 404}};
  EXPECT_THAT(ValidateJobSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("executor.http.success_statuses: 500-404")));
  spec.executor.http.success_statuses = {{200, 204}, {409, 409}};
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
}

TEST(ExecutorValidationTest, FunctionJobsNeedNothing) {
  JobSpec spec;
  spec.key.id = "j";
  spec.trigger.expression = "* * * * *";
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
}

}  // namespace
}  // namespace chime
