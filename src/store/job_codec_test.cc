#include "src/store/job_codec.h"

#include "gtest/gtest.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime::store {
namespace {

using ::chime::testing::EveryFieldSet;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;

TEST(JobCodec, RoundTripsEveryField) {
  const JobSpec spec = EveryFieldSet();
  EXPECT_EQ(EncodeJobSpec(spec)[0], 3);
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(spec)), IsOkAndHolds(spec));
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(JobSpec{})), IsOkAndHolds(JobSpec{}));
}

// Jobs written by binaries before the packed format (format 2) read back.
TEST(JobCodec, ReadsFormatTwo) {
  JobSpec spec = EveryFieldSet();
  spec.source_file.clear();  // format 2 predates it
  const std::string bytes = EncodeJobSpecFormat2(spec);
  EXPECT_EQ(bytes[0], 2);
  EXPECT_THAT(DecodeJobSpec(bytes), IsOkAndHolds(spec));
}

// Jobs written by a binary before executors existed (format 1) read back with
// the default executor.
TEST(JobCodec, ReadsFormatOneWithoutAnExecutor) {
  JobSpec spec = EveryFieldSet();
  spec.executor = ExecutorSpec{};
  spec.source_file.clear();
  std::string bytes = EncodeJobSpecFormat2(spec);
  // The default executor's encoding: enum 1, argv 8, command 4, working_dir
  // 4, env 8, user 4, group 4, output_limit 8, method 4+4, url 4, headers 8,
  // body 4, verify_tls 1, ranges 8, connect_timeout 8, response_limit 8:
  // 41 + 49 bytes.
  bytes.resize(bytes.size() - 90);
  bytes[0] = 1;
  EXPECT_THAT(DecodeJobSpec(bytes), IsOkAndHolds(spec));
}

TEST(JobCodec, TruncatedOrTrailingBytesAreDataLoss) {
  EXPECT_THAT(DecodeJobSpec(EncodeJobSpec(EveryFieldSet()) + "\x7f"),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::HasSubstr("job spec: packed job spec:")));
  const std::string bytes = EncodeJobSpecFormat2(EveryFieldSet());
  for (size_t n : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THAT(DecodeJobSpec(bytes.substr(0, n)),
                StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
  EXPECT_THAT(DecodeJobSpec(bytes + "x"),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(JobCodec, UnknownFormatIsRefusedByName) {
  std::string bytes = EncodeJobSpec(EveryFieldSet());
  bytes[0] = 9;
  EXPECT_THAT(DecodeJobSpec(bytes),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::HasSubstr("format 9 is unknown")));
}

}  // namespace
}  // namespace chime::store
