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
  return spec;
}

TEST(JobCodec, RoundTripsEveryField) {
  const JobSpec spec = FullSpec();
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(spec)), IsOkAndHolds(spec));
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(JobSpec{})), IsOkAndHolds(JobSpec{}));
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
