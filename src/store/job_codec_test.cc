#include "src/store/job_codec.h"

#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::store {
namespace {

using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;

JobSpec FullSpec() {
  JobSpec spec;
  spec.key = {"batch", "nightly"};
  spec.trigger.expression = "30 2 * * *";
  spec.trigger.zone = "Europe/Berlin";
  spec.trigger.dialect = cron::Dialect::kQuartz;
  spec.trigger.dst.gap = cron::GapPolicy::kSkip;
  spec.trigger.at = absl::FromUnixSeconds(1800000000);
  spec.start = absl::FromUnixSeconds(1700000000);
  spec.jitter = absl::Milliseconds(1500);
  spec.misfire.action = MisfireAction::kRunAll;
  spec.misfire.max_catchup = 7;
  spec.overlap.action = OverlapAction::kBufferAll;
  spec.retry.max_attempts = 4;
  spec.retry.multiplier = 1.5;
  spec.timeout.attempt_timeout = absl::Minutes(3);
  spec.delivery = Delivery::kAtLeastOnce;
  spec.priority = -3;
  spec.labels = {{"team", "data"}, {"tier", ""}};
  spec.paused = true;
  spec.executor.kind = ExecutorSpec::Kind::kShell;
  spec.executor.shell.argv = {"/usr/bin/backup", "--all", ""};
  spec.executor.shell.working_dir = "/var/backups";
  spec.executor.shell.env = {{"MODE", "full"}, {"EMPTY", ""}};
  spec.executor.shell.user = "backup";
  spec.executor.shell.output_limit = 1234;
  spec.executor.http.url = "https://example.test/hook";
  spec.executor.http.headers = {{"Authorization", "Bearer x"}};
  spec.executor.http.success_statuses = {{200, 299}, {409, 409}};
  spec.executor.http.verify_tls = false;
  spec.executor.http.connect_timeout = absl::Milliseconds(2500);
  return spec;
}

TEST(JobCodec, RoundTripsEveryField) {
  const JobSpec spec = FullSpec();
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(spec)), IsOkAndHolds(spec));
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(JobSpec{})), IsOkAndHolds(JobSpec{}));
}

// Jobs written by a binary before executors existed (format 1) read back with
// the default executor.
TEST(JobCodec, ReadsFormatOneWithoutAnExecutor) {
  JobSpec spec = FullSpec();
  spec.executor = ExecutorSpec{};
  std::string bytes = EncodeJobSpec(spec);
  // The default executor's encoding: enum 1, argv 8, command 4, working_dir
  // 4, env 8, user 4, group 4, output_limit 8, method 4+4, url 4, headers 8,
  // body 4, verify_tls 1, ranges 8, connect_timeout 8, response_limit 8:
  // 41 + 49 bytes.
  bytes.resize(bytes.size() - 90);
  bytes[0] = 1;
  EXPECT_THAT(DecodeJobSpec(bytes), IsOkAndHolds(spec));
}

TEST(JobCodec, TruncatedOrTrailingBytesAreDataLoss) {
  const std::string bytes = EncodeJobSpec(FullSpec());
  for (size_t n : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THAT(DecodeJobSpec(bytes.substr(0, n)),
                StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
  EXPECT_THAT(DecodeJobSpec(bytes + "x"),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(JobCodec, UnknownFormatIsRefusedByName) {
  std::string bytes = EncodeJobSpec(FullSpec());
  bytes[0] = 9;
  EXPECT_THAT(DecodeJobSpec(bytes),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::HasSubstr("format 9 is unknown")));
}

}  // namespace
}  // namespace chime::store
