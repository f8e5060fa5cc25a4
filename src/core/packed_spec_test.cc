#include "src/core/packed_spec.h"

#include <string>

#include "gtest/gtest.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime::core {
namespace {

using ::chime::testing::EveryFieldSet;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;

TEST(PackedSpec, RoundTripsEveryField) {
  const JobSpec spec = EveryFieldSet();
  const PackedSpec packed = PackedSpec::Pack(spec);
  EXPECT_EQ(packed.Unpack(), spec);
  EXPECT_THAT(PackedSpec::Decode(packed.bytes()), IsOkAndHolds(spec));
  EXPECT_EQ(packed.Key(), spec.key);
}

TEST(PackedSpec, DefaultSpecIsEmptyBytes) {
  const PackedSpec packed = PackedSpec::Pack(JobSpec{});
  EXPECT_EQ(packed.bytes(), "");
  EXPECT_FALSE(packed.empty());
  EXPECT_EQ(packed.Unpack(), JobSpec{});
  EXPECT_EQ(PackedSpec().Unpack(), JobSpec{});
}

// Every field is written (all 49 differ from the default here), and the
// packing of the first k fields is the first k fields of the packing: a
// field read into the wrong place, or two sharing a number, would fail here.
TEST(PackedSpec, EveryFieldIsWrittenInOrder) {
  const JobSpec full = EveryFieldSet();
  const std::string bytes = std::string(PackedSpec::Pack(full).bytes());
  int fields = 0;
  for (size_t end = 1; end < bytes.size(); ++end) {
    absl::StatusOr<JobSpec> prefix = PackedSpec::Decode(bytes.substr(0, end));
    if (!prefix.ok()) continue;
    ++fields;
    EXPECT_EQ(PackedSpec::Pack(*prefix).bytes(), bytes.substr(0, end));
    EXPECT_NE(*prefix, full);
  }
  EXPECT_EQ(fields, 48);  // the 49th ends the whole packing
  EXPECT_THAT(PackedSpec::Decode(bytes), IsOkAndHolds(full));
}

TEST(PackedSpec, EqualSpecsPackEqualAndDifferentOnesDiffer) {
  JobSpec a = EveryFieldSet();
  JobSpec b = EveryFieldSet();
  EXPECT_EQ(PackedSpec::Pack(a), PackedSpec::Pack(b));
  b.executor.shell.env["MODE"] = "fast";
  EXPECT_NE(PackedSpec::Pack(a), PackedSpec::Pack(b));
  b = a;
  b.retry.multiplier = 1.25;
  EXPECT_NE(PackedSpec::Pack(a), PackedSpec::Pack(b));
  b = a;
  b.end = absl::InfiniteFuture();  // back to the default: not written
  EXPECT_LT(PackedSpec::Pack(b).bytes().size(),
            PackedSpec::Pack(a).bytes().size());
}

TEST(PackedSpec, TypicalJobIsSmall) {
  JobSpec spec;
  spec.key = {"team-3", "job-0000-00003"};
  spec.trigger.expression = "50 11 * * *";
  spec.trigger.zone = "America/New_York";
  spec.executor.kind = ExecutorSpec::Kind::kShell;
  spec.executor.shell.command = "/usr/local/bin/report --daily";
  spec.retry.max_attempts = 3;
  spec.retry.initial_backoff = absl::Seconds(10);
  spec.timeout.attempt_timeout = absl::Minutes(10);
  const PackedSpec packed = PackedSpec::Pack(spec);
  EXPECT_LT(packed.bytes().size(), 110u);
  EXPECT_EQ(packed.Unpack(), spec);
}

TEST(PackedSpec, CopiesShareTheBytes) {
  const PackedSpec a = PackedSpec::Pack(EveryFieldSet());
  PackedSpec b = a;
  EXPECT_EQ(a.bytes().data(), b.bytes().data());
  PackedSpec c = std::move(b);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): moved-from
  EXPECT_EQ(c.bytes().data(), a.bytes().data());
  c = PackedSpec();
  EXPECT_EQ(a.Unpack(), EveryFieldSet());
}

TEST(PackedSpec, DamagedBytesAreDataLossNeverACrash) {
  const std::string bytes =
      std::string(PackedSpec::Pack(EveryFieldSet()).bytes());
  EXPECT_THAT(PackedSpec::FromBytes(bytes + "\x7f"),
              StatusIs(absl::StatusCode::kDataLoss));
  // Field numbers must ascend: the key's two fields swapped.
  EXPECT_THAT(PackedSpec::Decode(std::string("\x02\x01x\x01\x01y", 6)),
              StatusIs(absl::StatusCode::kDataLoss,
                       "packed job spec: field 1 "
                       "after field 2"));
  // An enum value this binary does not know (field 3, trigger kind).
  EXPECT_THAT(PackedSpec::Decode(std::string("\x03\x05", 2)),
              StatusIs(absl::StatusCode::kDataLoss,
                       "packed job spec: field 3: 5 is not a known value"));
  // A string longer than what is left.
  EXPECT_THAT(PackedSpec::Decode(std::string("\x02\x09x", 3)),
              StatusIs(absl::StatusCode::kDataLoss,
                       "packed job spec: field 2 is cut short"));
  // Every single-byte change of a full packing decodes or fails cleanly.
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      absl::StatusOr<JobSpec> spec = PackedSpec::Decode(damaged);
      if (spec.ok()) {
        EXPECT_NE(*spec, EveryFieldSet()) << i << " " << bit;
      }
    }
  }
}

}  // namespace
}  // namespace chime::core
