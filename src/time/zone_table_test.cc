#include "src/time/zone_table.h"

#include <random>

#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/time/civil.h"
#include "testing/status_matchers.h"

namespace chime::time {
namespace {

using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

int64_t Utc(int y, int mo, int d, int h, int mi = 0, int s = 0) {
  return absl::ToUnixSeconds(absl::FromCivil(
      absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone()));
}

TEST(Civil, RoundTripsAgreeWithAbslOverFiveCenturies) {
  std::mt19937_64 rng(42);
  const int64_t lo = Utc(1900, 1, 1, 0), hi = Utc(2400, 12, 31, 23, 59, 59);
  for (int i = 0; i < 200000; ++i) {
    const int64_t s =
        lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo));
    const absl::CivilSecond want =
        absl::ToCivilSecond(absl::FromUnixSeconds(s), absl::UTCTimeZone());
    const CivilFields got = CivilFromSeconds(s);
    ASSERT_EQ(got.year, want.year()) << s;
    ASSERT_EQ(got.month, want.month()) << s;
    ASSERT_EQ(got.day, want.day()) << s;
    ASSERT_EQ(got.hour, want.hour()) << s;
    ASSERT_EQ(got.minute, want.minute()) << s;
    ASSERT_EQ(got.second, want.second()) << s;
    ASSERT_EQ(SecondsFromCivil(got), s);
    ASSERT_EQ(
        WeekdayFromDays(DaysFromCivil(got.year, got.month, got.day)),
        (static_cast<int>(absl::GetWeekday(absl::CivilDay(want))) + 1) % 7);
  }
}

TEST(Civil, DatesOutsideTheFastTableUseTheGeneralFormula) {
  for (int y : {-4713, -1, 0, 1, 1600, 1968, 1969, 2401, 2402, 3000, 99999}) {
    for (int m : {1, 2, 3, 12}) {
      const absl::CivilDay want(y, m, m == 2 ? 28 : 31);
      const int64_t days = DaysFromCivil(y, m, want.day());
      EXPECT_EQ(days, (want - absl::CivilDay(1970, 1, 1))) << y << "-" << m;
      int32_t year;
      int month, day;
      CivilFromDays(days, &year, &month, &day);
      EXPECT_EQ(year, y);
      EXPECT_EQ(month, m);
      EXPECT_EQ(day, want.day());
    }
  }
}

TEST(Civil, LeapYearsFollowTheGregorianRule) {
  EXPECT_TRUE(IsLeapYear(2000));
  EXPECT_FALSE(IsLeapYear(2100));
  EXPECT_TRUE(IsLeapYear(2028));
  EXPECT_FALSE(IsLeapYear(2027));
  EXPECT_EQ(DaysInMonth(2100, 2), 28);
  EXPECT_EQ(DaysInMonth(2400, 2), 29);
  EXPECT_EQ(DaysInMonth(2026, 4), 30);
}

TEST(ZoneTable, UnknownZoneIsNotFoundAndNamesTheZone) {
  EXPECT_THAT(
      ZoneTable::ForName("Mars/Olympus_Mons"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("Mars/Olympus_Mons")));
  EXPECT_THAT(ZoneTable::ForName(""), StatusIs(absl::StatusCode::kNotFound));
}

TEST(ZoneTable, SameNameGivesTheSameSharedTable) {
  auto a = ZoneTable::ForName("Europe/Berlin");
  auto b = ZoneTable::ForName("Europe/Berlin");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(ZoneTable, UtcIsOneSegment) {
  EXPECT_TRUE(ZoneTable::Utc()->fixed_offset());
  const auto seg = ZoneTable::Utc()->Find(Utc(2026, 6, 1, 0));
  EXPECT_EQ(seg.offset, 0);
}

TEST(ZoneTable, BerlinSpringForwardSegmentsMeetAtTheTransition) {
  const ZoneTable* berlin = *ZoneTable::ForName("Europe/Berlin");
  const int64_t transition = Utc(2026, 3, 29, 1);
  const auto before = berlin->Find(transition - 1);
  const auto after = berlin->Find(transition);
  EXPECT_EQ(before.offset, 3600);
  EXPECT_EQ(before.end, transition);
  EXPECT_EQ(before.next_offset, 7200);
  EXPECT_EQ(after.offset, 7200);
  EXPECT_EQ(after.start, transition);
  EXPECT_EQ(after.prev_offset, 3600);
  EXPECT_EQ(after.end, Utc(2026, 10, 25, 1));
}

TEST(ZoneTable, LordHoweHasHalfHourTransitions) {
  const ZoneTable* lh = *ZoneTable::ForName("Australia/Lord_Howe");
  // 2026-04-05 02:00 +11:00 -> 01:30 +10:30, i.e. 2026-04-04T15:00:00Z.
  const auto seg = lh->Find(Utc(2026, 4, 4, 15));
  EXPECT_EQ(seg.start, Utc(2026, 4, 4, 15));
  EXPECT_EQ(seg.offset, 10 * 3600 + 1800);
  EXPECT_EQ(seg.prev_offset, 11 * 3600);
}

TEST(ZoneTable, AgreesWithAbslAtRandomInstants) {
  std::mt19937_64 rng(7);
  for (const char* name :
       {"America/New_York", "Europe/Berlin", "Australia/Lord_Howe",
        "Pacific/Chatham", "Asia/Kolkata", "America/Sao_Paulo"}) {
    const ZoneTable* table = *ZoneTable::ForName(name);
    const int64_t lo = Utc(1970, 1, 1, 0), hi = Utc(2399, 1, 1, 0);
    for (int i = 0; i < 20000; ++i) {
      const int64_t s =
          lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo));
      const auto seg = table->Find(s);
      ASSERT_EQ(seg.offset, table->zone().At(absl::FromUnixSeconds(s)).offset)
          << name << " at " << s;
      ASSERT_LE(seg.start, s);
      ASSERT_LT(s, seg.end);
    }
  }
}

}  // namespace
}  // namespace chime::time
