// MeasureClockOffset: the store's clock against ours from one request, and
// when an offset surely exceeds a bound.
#include "src/driver/clock_offset.h"

#include "gtest/gtest.h"

namespace chime::driver {
namespace {

const absl::Time kSent = absl::FromUnixSeconds(1'800'000'000);

TEST(ClockOffsetTest, TheStoreAheadMeansThisClockIsBehind) {
  // Sent at 0, answered 20 ms later; the store read 30 s + 10 ms.
  const std::optional<ClockOffset> o =
      MeasureClockOffset(kSent + absl::Seconds(30) + absl::Milliseconds(10),
                         kSent, kSent + absl::Milliseconds(20));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->offset, absl::Seconds(30));
  EXPECT_EQ(o->uncertainty, absl::Milliseconds(10));
  EXPECT_EQ(o->ToString(),
            "this node's clock is 30s behind the store's (measured to "
            "within 10ms)");
  const std::optional<ClockOffset> ahead = MeasureClockOffset(
      kSent - absl::Minutes(3), kSent, kSent + absl::Milliseconds(2));
  ASSERT_TRUE(ahead.has_value());
  EXPECT_EQ(ahead->offset, -absl::Minutes(3) - absl::Milliseconds(1));
  EXPECT_NE(ahead->ToString().find("3m0.001s ahead of the store's"),
            std::string::npos)
      << ahead->ToString();
}

TEST(ClockOffsetTest, ExceedsABoundOnlyBeyondTheRoundTrip) {
  // 1.2 s off, give or take 0.3 s: it may be only 0.9 s.
  const ClockOffset o{absl::Milliseconds(1200), absl::Milliseconds(300)};
  EXPECT_FALSE(o.SurelyExceeds(absl::Seconds(1)));
  EXPECT_TRUE(o.SurelyExceeds(absl::Milliseconds(800)));
  const ClockOffset behind{-absl::Seconds(2), absl::Milliseconds(1)};
  EXPECT_TRUE(behind.SurelyExceeds(absl::Seconds(1)));
  EXPECT_FALSE(behind.SurelyExceeds(absl::InfiniteDuration()));
}

TEST(ClockOffsetTest, NothingWithoutTheStoresTimeOrWhenThisClockSteppedBack) {
  EXPECT_FALSE(
      MeasureClockOffset(absl::InfinitePast(), kSent, kSent).has_value());
  EXPECT_FALSE(
      MeasureClockOffset(kSent, kSent, kSent - absl::Seconds(1)).has_value());
}

}  // namespace
}  // namespace chime::driver
