#include "src/time/rfc3339.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/time/civil.h"
#include "testing/status_matchers.h"

namespace chime::time {
namespace {

using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kAbslUtcFormat[] = "%Y-%m-%d%ET%H:%M:%E*SZ";

// Unix seconds of 1000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: absl writes
// years with four digits only from 1000 on, so random comparisons with absl
// stay inside these bounds.
constexpr int64_t kYear1000 = -30610224000;
constexpr int64_t kYear10000 = 253402300800;

absl::Time Utc(int y, int mo, int d, int h, int mi, int s) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s),
                         absl::UTCTimeZone());
}

TEST(FormatUtc, WritesWholeSecondsWithoutAFraction) {
  // 1774830600 is 2026-03-30T00:30:00Z (Python:
  // datetime.fromtimestamp(1774830600, timezone.utc)).
  EXPECT_EQ(FormatUtc(absl::FromUnixSeconds(1774830600)),
            "2026-03-30T00:30:00Z");
  EXPECT_EQ(FormatUtc(absl::UnixEpoch()), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(absl::FromUnixSeconds(1709208000)),
            "2024-02-29T12:00:00Z");
}

TEST(FormatUtc, KeepsANonZeroFractionWithoutTrailingZeros) {
  EXPECT_EQ(FormatUtc(absl::FromUnixMillis(1774830600250)),
            "2026-03-30T00:30:00.25Z");
  EXPECT_EQ(FormatUtc(absl::FromUnixNanos(1774830600000000001)),
            "2026-03-30T00:30:00.000000001Z");
  // Before the epoch the fraction still counts forward from the second below.
  EXPECT_EQ(FormatUtc(absl::FromUnixMillis(-1)), "1969-12-31T23:59:59.999Z");
}

TEST(FormatUtc, TruncatesBelowANanosecond) {
  EXPECT_EQ(FormatUtc(absl::UnixEpoch() + absl::Nanoseconds(1) / 4),
            "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(absl::UnixEpoch() - absl::Nanoseconds(1) / 4),
            "1969-12-31T23:59:59.999999999Z");
}

TEST(FormatUtc, PadsEarlyYearsToFourDigitsAsRfc3339Requires) {
  EXPECT_EQ(FormatUtc(Utc(5, 6, 7, 8, 9, 10)), "0005-06-07T08:09:10Z");
  EXPECT_EQ(FormatUtc(Utc(0, 1, 1, 0, 0, 0)), "0000-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(Utc(9999, 12, 31, 23, 59, 59)), "9999-12-31T23:59:59Z");
}

TEST(FormatUtc, LeavesYearsRfc3339CannotWriteAndInfinitiesToAbsl) {
  EXPECT_EQ(FormatUtc(Utc(10000, 1, 1, 0, 0, 0)), "10000-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(Utc(-1, 12, 31, 23, 59, 59)), "-1-12-31T23:59:59Z");
  EXPECT_EQ(FormatUtc(absl::InfiniteFuture()), "infinite-future");
  EXPECT_EQ(FormatUtc(absl::InfinitePast()), "infinite-past");
}

TEST(FormatUtc, AppendsToWhatIsThere) {
  std::string out = "next=";
  AppendUtc(absl::FromUnixSeconds(1774830600), &out);
  AppendUtc(absl::FromUnixSeconds(1774830601), &out);
  EXPECT_EQ(out, "next=2026-03-30T00:30:00Z2026-03-30T00:30:01Z");
}

TEST(FormatUtc, AgreesWithAbslOnRandomInstants) {
  std::mt19937_64 rng(20260329);
  std::uniform_int_distribution<int64_t> seconds(kYear1000, kYear10000 - 1);
  std::uniform_int_distribution<int64_t> nanos(0, 999'999'999);
  for (int i = 0; i < 200'000; ++i) {
    absl::Time t = absl::FromUnixSeconds(seconds(rng));
    // A third whole seconds, a third whole milliseconds, a third arbitrary
    // nanoseconds.
    if (i % 3 == 1) t += absl::Milliseconds(nanos(rng) / 1'000'000);
    if (i % 3 == 2) t += absl::Nanoseconds(nanos(rng));
    ASSERT_EQ(FormatUtc(t),
              absl::FormatTime(kAbslUtcFormat, t, absl::UTCTimeZone()))
        << "unix nanos " << absl::ToUnixNanos(t);
  }
}

TEST(FormatUtc, AgreesWithAbslAtEveryDayBoundaryOfFourCenturies) {
  // Month lengths and leap days: the first and last second of every day,
  // 1900-2300.
  for (int64_t day = DaysFromCivil(1900, 1, 1);
       day <= DaysFromCivil(2300, 1, 1); ++day) {
    for (int64_t s : {day * 86400, day * 86400 + 86399}) {
      const absl::Time t = absl::FromUnixSeconds(s);
      ASSERT_EQ(FormatUtc(t),
                absl::FormatTime(kAbslUtcFormat, t, absl::UTCTimeZone()));
    }
  }
}

TEST(ParseRfc3339, ReadsZuluAndOffsets) {
  const absl::Time want =
      absl::FromUnixSeconds(1774830600);  // 2026-03-30T00:30:00Z
  EXPECT_THAT(ParseRfc3339("2026-03-30T00:30:00Z"), IsOkAndHolds(want));
  EXPECT_THAT(ParseRfc3339("2026-03-30T02:30:00+02:00"), IsOkAndHolds(want));
  EXPECT_THAT(ParseRfc3339("2026-03-29T20:30:00-04:00"), IsOkAndHolds(want));
  EXPECT_THAT(ParseRfc3339("2026-03-30T06:15:00+05:45"),
              IsOkAndHolds(want));  // Kathmandu
  EXPECT_THAT(ParseRfc3339("2026-03-30T00:30:00-00:00"), IsOkAndHolds(want));
}

TEST(ParseRfc3339, AcceptsTheVariantsRfc3339Allows) {
  const absl::Time want = absl::FromUnixSeconds(1774830600);
  EXPECT_THAT(ParseRfc3339("2026-03-30t00:30:00z"), IsOkAndHolds(want));
  EXPECT_THAT(ParseRfc3339("2026-03-30 00:30:00Z"), IsOkAndHolds(want));
}

TEST(ParseRfc3339, ReadsFractionsToTheNanosecondAndTruncatesTheRest) {
  const absl::Time base = absl::FromUnixSeconds(1774830600);
  EXPECT_THAT(ParseRfc3339("2026-03-30T00:30:00.5Z"),
              IsOkAndHolds(base + absl::Milliseconds(500)));
  EXPECT_THAT(ParseRfc3339("2026-03-30T00:30:00.000000001Z"),
              IsOkAndHolds(base + absl::Nanoseconds(1)));
  EXPECT_THAT(ParseRfc3339("2026-03-30T00:30:00.1234567899999Z"),
              IsOkAndHolds(base + absl::Nanoseconds(123456789)));
}

TEST(ParseRfc3339, TreatsALeapSecondAsTheNextMinuteLikeAbsl) {
  EXPECT_THAT(ParseRfc3339("2016-12-31T23:59:60Z"),
              IsOkAndHolds(Utc(2017, 1, 1, 0, 0, 0)));
  EXPECT_THAT(ParseRfc3339("2016-12-31T23:59:60.5Z"),
              IsOkAndHolds(Utc(2017, 1, 1, 0, 0, 0)));
}

TEST(ParseRfc3339, ChecksTheDayAgainstTheMonth) {
  EXPECT_THAT(ParseRfc3339("2024-02-29T12:00:00Z"),
              IsOkAndHolds(absl::FromUnixSeconds(1709208000)));
  EXPECT_THAT(ParseRfc3339("2026-02-29T12:00:00Z"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("day 29 is outside 01-28 for 2026-02"),
                             HasSubstr("column 9"))));
  EXPECT_THAT(
      ParseRfc3339("2026-04-31T12:00:00Z"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside 01-30")));
}

TEST(ParseRfc3339, AgreesWithAbslOnRandomInstantsAndOffsets) {
  std::mt19937_64 rng(3339);
  std::uniform_int_distribution<int64_t> seconds(kYear1000 + 86400,
                                                 kYear10000 - 86400);
  std::uniform_int_distribution<int> offset_minutes(-(23 * 60 + 59),
                                                    23 * 60 + 59);
  std::uniform_int_distribution<int64_t> nanos(0, 999'999'999);
  for (int i = 0; i < 100'000; ++i) {
    absl::Time t = absl::FromUnixSeconds(seconds(rng));
    if (i % 2 == 1) t += absl::Nanoseconds(nanos(rng));
    const absl::TimeZone zone = absl::FixedTimeZone(offset_minutes(rng) * 60);
    const std::string text = absl::FormatTime(absl::RFC3339_full, t, zone);
    absl::Time from_absl;
    std::string err;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, text, &from_absl, &err))
        << text << err;
    ASSERT_THAT(ParseRfc3339(text), IsOkAndHolds(from_absl)) << text;
    ASSERT_EQ(from_absl, t);
  }
}

TEST(ParseRfc3339, RoundTripsWhatFormatUtcWrites) {
  // Every instant with a four-digit year, including 0000-0999 where absl would
  // not print four digits. 0000-01-01T00:00:00Z is day DaysFromCivil(0, 1, 1).
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> seconds(DaysFromCivil(0, 1, 1) * 86400,
                                                 kYear10000 - 1);
  std::uniform_int_distribution<int64_t> nanos(0, 999'999'999);
  for (int i = 0; i < 100'000; ++i) {
    const absl::Time t =
        absl::FromUnixSeconds(seconds(rng)) + absl::Nanoseconds(nanos(rng));
    ASSERT_THAT(ParseRfc3339(FormatUtc(t)), IsOkAndHolds(t)) << FormatUtc(t);
  }
}

struct Rejection {
  const char* text;
  const char* message;  // a substring of the error
};

TEST(ParseRfc3339, RejectsAnythingElseNamingTheProblemAndColumn) {
  const Rejection kCases[] = {
      {"", "expected 4 digits of year (column 1)"},
      {"2026-3-29T00:30:00Z", "expected 2 digits of month (column 6)"},
      {"2026/03/29T00:30:00Z", "expected \"-\" (column 5)"},
      {"2026-13-01T00:00:00Z", "month 13 is outside 01-12 (column 6)"},
      {"2026-00-01T00:00:00Z", "month 0 is outside 01-12"},
      {"2026-03-00T00:00:00Z", "day 0 is outside 01-31"},
      {"2026-03-29", "missing time"},
      {"2026-03-29_00:30:00Z",
       "expected \"T\" between the date and the time (column 11)"},
      {"2026-03-29T00:30Z", "expected \":\" (column 17)"},
      {"2026-03-29T24:00:00Z", "hour 24 is outside 00-23 (column 12)"},
      {"2026-03-29T00:60:00Z", "minute 60 is outside 00-59"},
      {"2026-03-29T00:30:61Z", "second 61 is outside 00-60"},
      {"2026-03-29T00:30:00",
       "missing UTC offset \"Z\" or +hh:mm / -hh:mm (column 20)"},
      {"2026-03-29T00:30:00.Z", "expected digits after \".\" (column 21)"},
      {"2026-03-29T00:30:00+0200", "expected \":\" (column 23)"},
      {"2026-03-29T00:30:00+2:00",
       "expected 2 digits of offset hours (column 21)"},
      {"2026-03-29T00:30:00+24:00", "offset hours 24 are outside 00-23"},
      {"2026-03-29T00:30:00+02:60", "offset minutes 60 are outside 00-59"},
      {"2026-03-29T00:30:00UTC", "expected \"Z\" or a UTC offset"},
      {"2026-03-29T00:30:00Z ",
       "unexpected text after the UTC offset (column 21)"},
      {" 2026-03-29T00:30:00Z", "expected 4 digits of year (column 1)"},
      {"now", "expected 4 digits of year"},
  };
  for (const Rejection& c : kCases) {
    EXPECT_THAT(ParseRfc3339(c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(c.message),
                               HasSubstr("expected RFC 3339 such as "
                                         "2026-03-29T00:30:00Z"))))
        << c.text;
  }
}

TEST(ParseRfc3339, QuotesLongOrBinaryInputSafelyInTheMessage) {
  const std::string junk = std::string("\x01\xff", 2) + std::string(200, 'x');
  auto parsed = ParseRfc3339(junk);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("\"\\x01\\xffxxx"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("xxx...\""));
  EXPECT_LT(parsed.status().message().size(), 300u);
}

}  // namespace
}  // namespace chime::time
