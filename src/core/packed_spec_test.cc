#include "src/core/packed_spec.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

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

// A job packed twice (by the job files' reader and by the scheduler) is kept
// once: equal specs packed while one is alive share its buffer.
TEST(PackedSpec, EqualSpecsPackedApartShareOneBuffer) {
  JobSpec spec = EveryFieldSet();
  const PackedSpec first = PackedSpec::Pack(spec);
  const PackedSpec second = PackedSpec::Pack(spec);
  EXPECT_EQ(first.bytes().data(), second.bytes().data());
  absl::StatusOr<PackedSpec> read = PackedSpec::FromBytes(first.bytes());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->bytes().data(), first.bytes().data());
  spec.priority += 1;
  const PackedSpec other = PackedSpec::Pack(spec);
  EXPECT_NE(other.bytes().data(), first.bytes().data());
  EXPECT_EQ(other.Unpack(), spec);
}

// AddJob packs on its caller's thread without the search for an equal
// buffer, and the scheduler thread takes the shared one afterwards, if any.
TEST(PackedSpec, AnUnsharedPackingTakesALiveSharedBufferAndIsNeverFound) {
  JobSpec spec = EveryFieldSet();
  PackedSpec unshared = PackedSpec::PackUnshared(spec);
  EXPECT_EQ(unshared.Unpack(), spec);
  EXPECT_EQ(unshared, PackedSpec::Pack(spec));  // equal bytes, apart
  {
    // Not found by Pack until shared: Pack makes a buffer of its own.
    const PackedSpec packed = PackedSpec::Pack(spec);
    EXPECT_NE(packed.bytes().data(), unshared.bytes().data());
    // While an equal shared buffer is alive: takes that one.
    const PackedSpec copy = unshared;  // keeps the unshared buffer alive
    unshared.TakeShared();
    EXPECT_EQ(unshared.bytes().data(), packed.bytes().data());
    EXPECT_NE(copy.bytes().data(), packed.bytes().data());
    EXPECT_EQ(copy.Unpack(), spec);
  }
  // With no live equal buffer, it keeps its own, which stays unshared: Pack
  // makes another (and a later TakeShared trades it for that one).
  spec.priority += 1;
  PackedSpec alone = PackedSpec::PackUnshared(spec);
  const char* const bytes = alone.bytes().data();
  alone.TakeShared();
  EXPECT_EQ(alone.bytes().data(), bytes);
  alone.TakeShared();
  EXPECT_EQ(alone.bytes().data(), bytes);
  const PackedSpec again = PackedSpec::Pack(spec);
  EXPECT_NE(again.bytes().data(), bytes);
  EXPECT_EQ(PackedSpec::Pack(spec).bytes().data(), again.bytes().data());
  alone.TakeShared();
  EXPECT_EQ(alone.bytes().data(), again.bytes().data());
  EXPECT_EQ(alone.Unpack(), spec);
  PackedSpec empty;
  empty.TakeShared();
  EXPECT_TRUE(empty.empty());
}

// Threads packing (shared or not), sharing and dropping the same few specs at
// once: a buffer being freed is never handed out (ASan would see the use
// after free), and every copy reads back its spec.
TEST(PackedSpec, SharingIsSafeAcrossThreads) {
  std::vector<JobSpec> specs(3, EveryFieldSet());
  for (int i = 0; i < 3; ++i) specs[i].priority = i;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const JobSpec& spec = specs[(i + t) % 3];
        PackedSpec p = i % 2 == 0 ? PackedSpec::Pack(spec)
                                  : PackedSpec::PackUnshared(spec);
        PackedSpec copy = p;
        if (i % 4 == 1) copy.TakeShared();
        p = PackedSpec();
        if (copy.Key() != spec.key || (i % 97 == 0 && copy.Unpack() != spec))
          ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
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
