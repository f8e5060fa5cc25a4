// Table-driven tests of Schedule: the expression language, calendar edges and
// daylight saving.
//
// Most tests are rows of one table type, SequenceCase: an expression, its
// ParseOptions, an instant `after`, and the exact fire times that follow it,
// written as UTC RFC 3339 literals. Every row is checked in both directions:
// NextN(after) must produce the list, and Prev walking back from just after the
// last fire time must produce it reversed. Expected times come from calendar
// facts (Python's `calendar`/`datetime`) and, for the daylight-saving rows,
// from a brute force over Python's zoneinfo described above that table -- never
// from this library's output.
#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/cron_options.h"
#include "testing/status_matchers.h"

namespace chime::cron {
namespace {

using ::chime::testing::AllDays;
using ::chime::testing::Anchored;
using ::chime::testing::IsOk;
using ::chime::testing::Keyed;
using ::chime::testing::Quartz;
using ::chime::testing::StatusIs;
using ::chime::testing::Utc;
using ::chime::testing::Zone;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// An RFC 3339 literal such as "2026-03-08T07:00:00Z" or
// "2026-01-01T10:00:00.5Z".
absl::Time T(absl::string_view rfc3339) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) {
    ADD_FAILURE() << "bad time literal \"" << rfc3339 << "\": " << err;
  }
  return t;
}

// UTC, with fractional seconds only when present, so that failures read like
// the tables.
std::string Rfc(absl::Time t) {
  if (t == absl::InfiniteFuture()) return "InfiniteFuture";
  if (t == absl::InfinitePast()) return "InfinitePast";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

Schedule MustParse(absl::string_view expr, ParseOptions o = {}) {
  auto s = Schedule::Parse(expr, o);
  EXPECT_TRUE(s.ok()) << expr << ": " << s.status();
  // On failure, any valid schedule keeps the test running; it has failed.
  if (!s.ok()) return *Schedule::Parse("0 0 1 1 *");
  return *std::move(s);
}

constexpr DstPolicy kSkipGap = {GapPolicy::kSkip, RepeatPolicy::kOnce};
constexpr DstPolicy kRepeatTwice = {GapPolicy::kRunAtTransition,
                                    RepeatPolicy::kTwice};

constexpr bool kEnds = true;

struct SequenceCase {
  const char* name;  // the test's name: what the row shows
  const char* expr;
  ParseOptions options;
  const char* after;
  // The fire times strictly after `after`, in order, with none left out.
  std::vector<const char*> fires;
  // kEnds: there is no fire time after the last one.
  bool ends = false;
};

void PrintTo(const SequenceCase& c, std::ostream* os) {
  *os << "\"" << c.expr << "\"";
}

std::string CaseName(const ::testing::TestParamInfo<SequenceCase>& info) {
  return info.param.name;
}

class CronSequence : public ::testing::TestWithParam<SequenceCase> {};

TEST_P(CronSequence, NextAndPrevVisitExactlyTheListedFireTimes) {
  const SequenceCase& c = GetParam();
  auto parsed = Schedule::Parse(c.expr, c.options);
  ASSERT_THAT(parsed, IsOk()) << c.expr;
  const Schedule& s = *parsed;
  const absl::Time after = T(c.after);
  std::vector<std::string> want;
  for (const char* f : c.fires) want.push_back(Rfc(T(f)));
  ASSERT_FALSE(want.empty());

  std::vector<std::string> forward;
  for (absl::Time t : s.NextN(after, static_cast<int>(want.size()))) {
    forward.push_back(Rfc(t));
  }
  EXPECT_THAT(forward, ElementsAreArray(want))
      << c.expr << ": NextN from " << c.after;

  const absl::Time last = T(c.fires.back());
  if (c.ends) {
    EXPECT_EQ(Rfc(s.Next(last)), "InfiniteFuture")
        << c.expr << ": nothing after the last";
  }

  std::vector<std::string> backward;
  absl::Time t = last + absl::Seconds(1);
  for (size_t i = 0; i < want.size(); ++i) {
    t = s.Prev(t);
    backward.push_back(Rfc(t));
  }
  std::reverse(backward.begin(), backward.end());
  EXPECT_THAT(backward, ElementsAreArray(want))
      << c.expr << ": Prev from " << Rfc(last + absl::Seconds(1));
  EXPECT_LE(s.Prev(T(c.fires.front())), after)
      << c.expr << ": Prev of the first fire time lies at or before "
      << c.after;
}

TEST_P(CronSequence, NextFromJustBeforeEachFireTimeIsThatFireTime) {
  const SequenceCase& c = GetParam();
  auto parsed = Schedule::Parse(c.expr, c.options);
  ASSERT_THAT(parsed, IsOk()) << c.expr;
  const absl::Time after = T(c.after);
  for (const char* f : c.fires) {
    const absl::Time fire = T(f);
    for (absl::Duration before :
         {absl::Seconds(1), absl::Milliseconds(500), absl::Nanoseconds(1)}) {
      const absl::Time from = std::max(after, fire - before);
      EXPECT_EQ(Rfc(parsed->Next(from)), Rfc(fire))
          << c.expr << ": Next(" << Rfc(from) << ")";
    }
  }
}

TEST_P(CronSequence, PrevFromJustAfterEachFireTimeIsThatFireTime) {
  const SequenceCase& c = GetParam();
  auto parsed = Schedule::Parse(c.expr, c.options);
  ASSERT_THAT(parsed, IsOk()) << c.expr;
  for (const char* f : c.fires) {
    const absl::Time fire = T(f);
    for (absl::Duration later :
         {absl::Seconds(1), absl::Milliseconds(500), absl::Nanoseconds(1)}) {
      EXPECT_EQ(Rfc(parsed->Prev(fire + later)), Rfc(fire))
          << c.expr << ": Prev(" << Rfc(fire + later) << ")";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The first examples.

TEST(Schedule, EveryFiveMinutes) {
  Schedule s = MustParse("*/5 * * * *");
  EXPECT_EQ(s.Next(Utc(2026, 1, 1, 10, 2, 30)), Utc(2026, 1, 1, 10, 5));
  EXPECT_EQ(s.Next(Utc(2026, 1, 1, 10, 5)), Utc(2026, 1, 1, 10, 10));
  EXPECT_EQ(s.Prev(Utc(2026, 1, 1, 10, 5)), Utc(2026, 1, 1, 10, 0));
}

TEST(Schedule, BerlinSpringForwardFixedHourFiresAtTransition) {
  Schedule s = MustParse("30 2 * * *", Zone("Europe/Berlin"));
  EXPECT_EQ(s.Next(Utc(2026, 3, 28, 12)), Utc(2026, 3, 29, 1));
  EXPECT_EQ(s.Next(Utc(2026, 3, 29, 1)), Utc(2026, 3, 30, 0, 30));
  EXPECT_EQ(s.Prev(Utc(2026, 3, 30, 0, 30)), Utc(2026, 3, 29, 1));
}

TEST(Schedule, NewYorkFallBackFixedHourFiresOnce) {
  Schedule s = MustParse("30 1 * * *", Zone("America/New_York"));
  EXPECT_EQ(s.Next(Utc(2026, 10, 31, 12)), Utc(2026, 11, 1, 5, 30));
  EXPECT_EQ(s.Next(Utc(2026, 11, 1, 5, 30)), Utc(2026, 11, 2, 6, 30));
  EXPECT_EQ(s.Prev(Utc(2026, 11, 2, 6, 30)), Utc(2026, 11, 1, 5, 30));
}

TEST(Schedule, NeverFiringScheduleIsRejected) {
  EXPECT_THAT(
      Schedule::Parse("0 0 30 2 *"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("never fires")));
}

// ---------------------------------------------------------------------------------------------
// The language. All rows in UTC unless the options say otherwise. January 2026
// starts on a Thursday: Fri 2, Sat 3, Sun 4, Mon 5, ...; February 2026 starts
// on a Sunday.

const std::vector<SequenceCase>& SyntaxCases() {
  static const auto* const cases = new std::vector<SequenceCase>{
      // Field counts.
      {"FiveFieldsEveryFiveMinutes",
       "*/5 * * * *",
       {},
       "2026-01-01T10:02:30Z",
       {"2026-01-01T10:05:00Z", "2026-01-01T10:10:00Z",
        "2026-01-01T10:15:00Z"}},
      {"FiveFieldsFixedTimeEveryDay",
       "30 8 * * *",
       {},
       "2026-01-01T08:30:00Z",
       {"2026-01-02T08:30:00Z", "2026-01-03T08:30:00Z"}},
      {"SixFieldsPutSecondsFirst",
       "15,45 * * * * *",
       {},
       "2026-01-01T10:00:00Z",
       {"2026-01-01T10:00:15Z", "2026-01-01T10:00:45Z",
        "2026-01-01T10:01:15Z"}},
      {"SixFieldsFixedSecondMinuteHour",
       "30 15 10 * * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T10:15:30Z", "2026-01-02T10:15:30Z"}},
      {"SevenFieldsSingleYear",
       "0 0 12 1 1 ? 2030",
       {},
       "2026-01-01T00:00:00Z",
       {"2030-01-01T12:00:00Z"},
       kEnds},
      {"SevenFieldsYearRangeAcross2100",
       "0 0 0 1 1 ? 2100-2102",
       {},
       "2026-01-01T00:00:00Z",
       {"2100-01-01T00:00:00Z", "2101-01-01T00:00:00Z", "2102-01-01T00:00:00Z"},
       kEnds},
      {"SevenFieldsYearList",
       "0 0 0 1 1 ? 2027,2029,2031",
       {},
       "2026-01-01T00:00:00Z",
       {"2027-01-01T00:00:00Z", "2029-01-01T00:00:00Z", "2031-01-01T00:00:00Z"},
       kEnds},
      {"SevenFieldsYearStepFromValue",
       "0 0 0 1 1 ? 2030/5",
       {},
       "2026-01-01T00:00:00Z",
       {"2030-01-01T00:00:00Z", "2035-01-01T00:00:00Z",
        "2040-01-01T00:00:00Z"}},
      {"SevenFieldsYearRangeWithStep",
       "0 0 0 1 1 ? 2030-2040/5",
       {},
       "2026-01-01T00:00:00Z",
       {"2030-01-01T00:00:00Z", "2035-01-01T00:00:00Z", "2040-01-01T00:00:00Z"},
       kEnds},
      {"SevenFieldsYearStarStep",
       "0 0 0 1 1 ? */100",
       {},
       "2026-01-01T00:00:00Z",
       {"2070-01-01T00:00:00Z", "2170-01-01T00:00:00Z", "2270-01-01T00:00:00Z",
        "2370-01-01T00:00:00Z"},
       kEnds},
      {"SevenFieldsStarYearIsEveryYear",
       "0 0 0 1 1 ? *",
       {},
       "2026-01-01T00:00:00Z",
       {"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},

      // `*`, lists, ranges, steps.
      {"StarEveryMinute",
       "* * * * *",
       {},
       "2026-01-01T10:00:30Z",
       {"2026-01-01T10:01:00Z", "2026-01-01T10:02:00Z"}},
      {"ListOfHours",
       "0 8,12,18 * * *",
       {},
       "2026-01-01T09:00:00Z",
       {"2026-01-01T12:00:00Z", "2026-01-01T18:00:00Z",
        "2026-01-02T08:00:00Z"}},
      {"RangeOfHours",
       "0 9-11 * * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T09:00:00Z", "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z",
        "2026-01-02T09:00:00Z"}},
      {"RangeWithStep",
       "10-50/10 * * * *",
       {},
       "2026-01-01T10:00:00Z",
       {"2026-01-01T10:10:00Z", "2026-01-01T10:20:00Z", "2026-01-01T10:30:00Z",
        "2026-01-01T10:40:00Z", "2026-01-01T10:50:00Z",
        "2026-01-01T11:10:00Z"}},
      {"ValueWithStepRunsToTheEndOfTheField",
       "5/15 * * * *",
       {},
       "2026-01-01T10:00:00Z",
       {"2026-01-01T10:05:00Z", "2026-01-01T10:20:00Z", "2026-01-01T10:35:00Z",
        "2026-01-01T10:50:00Z", "2026-01-01T11:05:00Z"}},
      {"StepOfHours",
       "0 */6 * * *",
       {},
       "2026-01-01T01:00:00Z",
       {"2026-01-01T06:00:00Z", "2026-01-01T12:00:00Z", "2026-01-01T18:00:00Z",
        "2026-01-02T00:00:00Z"}},
      {"StepEqualToTheFieldSizeFiresOnce",
       "*/60 10 * * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"}},
      {"MixedList",
       "1,5-7,*/20 10 * * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z", "2026-01-01T10:05:00Z",
        "2026-01-01T10:06:00Z", "2026-01-01T10:07:00Z", "2026-01-01T10:20:00Z",
        "2026-01-01T10:40:00Z", "2026-01-02T10:00:00Z"}},

      // Names, in any case.
      {"MonthNamesAnyCase",
       "0 0 1 jan,Jul *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z",
        "2027-07-01T00:00:00Z"}},
      {"MonthNameRange",
       "0 0 1 nov-Dec *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z",
        "2027-11-01T00:00:00Z"}},
      {"WeekdayNamesLowerCase",
       "0 12 * * mon-fri",
       {},
       "2026-01-02T12:00:00Z",
       {"2026-01-05T12:00:00Z", "2026-01-06T12:00:00Z", "2026-01-07T12:00:00Z",
        "2026-01-08T12:00:00Z", "2026-01-09T12:00:00Z",
        "2026-01-12T12:00:00Z"}},
      {"WeekdayNamesUpperCase",
       "0 9 * * MON-FRI",
       {},
       "2026-01-02T09:00:00Z",
       {"2026-01-05T09:00:00Z", "2026-01-06T09:00:00Z",
        "2026-01-07T09:00:00Z"}},
      {"WeekdayNameList",
       "0 12 * * Sat,SUN",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z",
        "2026-01-10T12:00:00Z"}},

      // Day-of-week numbers: 0 and 7 are both Sunday.
      {"WeekdayZeroIsSunday",
       "0 12 * * 0",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"}},
      {"WeekdaySevenIsSunday",
       "0 12 * * 7",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"}},
      {"WeekdayFiveToSevenIsFridayToSunday",
       "0 12 * * 5-7",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-02T12:00:00Z", "2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z",
        "2026-01-09T12:00:00Z"}},
      {"WeekdaySixToSevenIsTheWeekend",
       "0 12 * * 6-7",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z",
        "2026-01-10T12:00:00Z"}},
      {"WeekdayRangeStepReachesSevenAsSunday",
       "0 0 * * 1-7/2",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z",
        "2026-01-07T00:00:00Z", "2026-01-09T00:00:00Z"}},

      // Ranges that wrap around a cyclic field.
      {"WeekdayRangeWrapsFridayToMonday",
       "0 12 * * FRI-MON",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-02T12:00:00Z", "2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z",
        "2026-01-05T12:00:00Z", "2026-01-09T12:00:00Z"}},
      {"WeekdayRangeWrapsNumerically",
       "0 12 * * 6-1",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z", "2026-01-05T12:00:00Z",
        "2026-01-10T12:00:00Z"}},
      {"WeekdayRangeWrapsSaturdayToSunday",
       "0 12 * * SAT-SUN",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z",
        "2026-01-10T12:00:00Z"}},
      {"HourRangeWrapsPastMidnight",
       "0 22-2 * * *",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-01T22:00:00Z", "2026-01-01T23:00:00Z", "2026-01-02T00:00:00Z",
        "2026-01-02T01:00:00Z", "2026-01-02T02:00:00Z",
        "2026-01-02T22:00:00Z"}},
      {"MinuteRangeWrapsWithinTheHour",
       "58-2 10 * * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z", "2026-01-01T10:02:00Z",
        "2026-01-01T10:58:00Z", "2026-01-01T10:59:00Z",
        "2026-01-02T10:00:00Z"}},
      {"MonthRangeWrapsPastDecember",
       "0 0 1 NOV-FEB *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-02-01T00:00:00Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z",
        "2027-01-01T00:00:00Z"}},
      {"WrappingRangeWithStep",
       "0 20-4/3 * * *",
       {},
       "2026-01-01T12:00:00Z",
       {"2026-01-01T20:00:00Z", "2026-01-01T23:00:00Z", "2026-01-02T02:00:00Z",
        "2026-01-02T20:00:00Z"}},

      // `?` leaves a day field unrestricted.
      {"QuestionMarkInDayOfMonth",
       "0 12 ? * MON",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-05T12:00:00Z", "2026-01-12T12:00:00Z"}},
      {"QuestionMarkInDayOfWeek",
       "0 12 15 * ?",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-15T12:00:00Z", "2026-02-15T12:00:00Z"}},

      // Day-of-month specials.
      {"LastDayOfMonth",
       "0 0 L * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z",
        "2026-04-30T00:00:00Z"}},
      {"LastDayOfFebruaryInALeapYear",
       "0 0 L 2 *",
       {},
       "2027-06-01T00:00:00Z",
       {"2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"}},
      {"ThirdToLastDay",
       "0 0 L-3 * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-28T00:00:00Z", "2026-02-25T00:00:00Z", "2026-03-28T00:00:00Z",
        "2026-04-27T00:00:00Z"}},
      {"LastWeekdayOfMonthSkipsTheWeekend",
       "0 0 LW * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z",
        "2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z",
        "2026-06-30T00:00:00Z"}},
      {"NearestWeekdayToTheFirstStaysInTheMonth",
       "0 0 1W * *",
       {},
       "2026-07-15T00:00:00Z",
       {"2026-08-03T00:00:00Z", "2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z",
        "2026-11-02T00:00:00Z"}},
      {"NearestWeekdayToTheFifteenth",
       "0 0 15W * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z",
        "2026-04-15T00:00:00Z", "2026-05-15T00:00:00Z", "2026-06-15T00:00:00Z",
        "2026-07-15T00:00:00Z", "2026-08-14T00:00:00Z"}},
      {"NearestWeekdayToThe31stOnlyIn31DayMonths",
       "0 0 31W * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-29T00:00:00Z",
        "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-10-30T00:00:00Z",
        "2026-12-31T00:00:00Z"}},
      {"DayOfMonthSpecialsInAList",
       "0 0 1,L * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-28T00:00:00Z",
        "2026-03-01T00:00:00Z"}},

      // Day-of-week specials.
      {"LastFridayOfMonth",
       "0 0 * * 5L",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z",
        "2026-04-24T00:00:00Z"}},
      {"LastFridayOfMonthByName",
       "0 0 * * FRIL",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}},
      {"ThirdSaturdayOfMonth",
       "0 0 * * 6#3",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-17T00:00:00Z", "2026-02-21T00:00:00Z",
        "2026-03-21T00:00:00Z"}},
      {"FifthMondayOnlyInMonthsThatHaveOne",
       "0 0 * * 1#5",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-03-30T00:00:00Z", "2026-06-29T00:00:00Z", "2026-08-31T00:00:00Z",
        "2026-11-30T00:00:00Z"}},
      {"SundayAsSevenWithHash",
       "0 0 * * 7#1",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-04T00:00:00Z", "2026-02-01T00:00:00Z",
        "2026-03-01T00:00:00Z"}},

      // The Quartz dialect: day-of-week 1-7, 1 = Sunday.
      {"QuartzThirdFriday",
       "0 0 0 ? * 6#3",
       Quartz(),
       "2026-01-01T00:00:00Z",
       {"2026-01-16T00:00:00Z", "2026-02-20T00:00:00Z",
        "2026-03-20T00:00:00Z"}},
      {"QuartzTwoToSixIsMondayToFriday",
       "0 0 12 ? * 2-6",
       Quartz(),
       "2026-01-02T12:00:00Z",
       {"2026-01-05T12:00:00Z", "2026-01-06T12:00:00Z", "2026-01-07T12:00:00Z",
        "2026-01-08T12:00:00Z", "2026-01-09T12:00:00Z",
        "2026-01-12T12:00:00Z"}},
      {"QuartzOneIsSunday",
       "0 0 12 ? * 1",
       Quartz(),
       "2026-01-01T00:00:00Z",
       {"2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"}},
      {"QuartzSevenIsSaturday",
       "0 0 12 ? * 7",
       Quartz(),
       "2026-01-01T00:00:00Z",
       {"2026-01-03T12:00:00Z", "2026-01-10T12:00:00Z"}},
      {"QuartzNamesMeanTheSameDays",
       "0 0 12 ? * SUN",
       Quartz(),
       "2026-01-01T00:00:00Z",
       {"2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"}},
      {"QuartzLastFriday",
       "0 0 0 ? * 6L",
       Quartz(),
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}},
      {"QuartzWithYear",
       "0 30 9 ? * 2 2027",
       Quartz(),
       "2026-06-01T00:00:00Z",
       {"2027-01-04T09:30:00Z", "2027-01-11T09:30:00Z"}},

      // Macros.
      {"MacroYearly",
       "@yearly",
       {},
       "2026-01-01T00:00:00Z",
       {"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
      {"MacroAnnually",
       "@annually",
       {},
       "2026-06-15T08:00:00Z",
       {"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
      {"MacroMonthly",
       "@monthly",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
      {"MacroWeeklyIsSundayMidnight",
       "@weekly",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
      {"MacroDaily",
       "@daily",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
      {"MacroMidnight",
       "@midnight",
       {},
       "2026-01-01T13:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
      {"MacroHourly",
       "@hourly",
       {},
       "2026-01-01T10:30:00Z",
       {"2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"}},
      {"MacroNamesAnyCase",
       "@Daily",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z"}},
      {"MacroInTheCallersZone",
       "@daily",
       Zone("Asia/Tokyo"),
       "2026-01-01T00:00:00Z",
       {"2026-01-01T15:00:00Z", "2026-01-02T15:00:00Z"}},

      // `@every`: anchor + k * period, whatever `after` is.
      // 2026-01-01T00:00:00Z is a multiple
      // of 90 s and of 1h30m since the epoch (a day is 960 * 90 s and 16 * 5400
      // s).
      {"EveryNinetySeconds",
       "@every 90s",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:01:30Z", "2026-01-01T00:03:00Z",
        "2026-01-01T00:04:30Z"}},
      {"EveryNinetySecondsFromBetweenFireTimes",
       "@every 90s",
       {},
       "2026-01-01T00:00:45Z",
       {"2026-01-01T00:01:30Z", "2026-01-01T00:03:00Z"}},
      {"EveryHourAndAHalf",
       "@every 1h30m",
       {},
       "2026-01-01T00:10:00Z",
       {"2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z",
        "2026-01-01T04:30:00Z"}},
      {"EveryDayIsAnchoredAtTheEpochNotAtMidnightOfTheZone",
       "@every 1d",
       Zone("Asia/Tokyo"),
       "2026-01-01T12:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
      {"EveryWithCustomAnchor",
       "@every 90s",
       Anchored(absl::FromUnixSeconds(1767225607)),  // 2026-01-01T00:00:07Z
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:00:07Z", "2026-01-01T00:01:37Z",
        "2026-01-01T00:03:07Z"}},
      {"EveryWithAnchorInTheFutureFiresBeforeIt",
       "@every 90s",
       Anchored(absl::FromUnixSeconds(1780272000)),  // 2026-06-01T00:00:00Z
       "2026-05-31T23:58:20Z",
       {"2026-05-31T23:58:30Z", "2026-06-01T00:00:00Z",
        "2026-06-01T00:01:30Z"}},
      {"EveryIgnoresDaylightSaving",
       "@every 1h",
       Zone("Europe/Berlin"),
       "2026-03-28T23:30:00Z",
       {"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z",
        "2026-03-29T02:00:00Z"}},

      // Zones: a prefix overrides ParseOptions::zone.
      {"CronTzPrefix",
       "CRON_TZ=Europe/Berlin 0 9 * * *",
       Zone("America/New_York"),
       "2026-01-01T00:00:00Z",
       {"2026-01-01T08:00:00Z", "2026-01-02T08:00:00Z"}},
      {"CronTzPrefixInSummer",
       "CRON_TZ=Europe/Berlin 0 9 * * *",
       {},
       "2026-07-01T00:00:00Z",
       {"2026-07-01T07:00:00Z", "2026-07-02T07:00:00Z"}},
      {"TzPrefix",
       "TZ=Asia/Tokyo 0 9 * * *",
       Zone("Europe/Berlin"),
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
      {"ZonePrefixWithSixFields",
       "TZ=America/New_York 30 0 9 * * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T14:00:30Z", "2026-01-02T14:00:30Z"}},
      {"ZoneFromTheCaller",
       "30 9 * * *",
       Zone("Asia/Kolkata"),
       "2026-01-01T00:00:00Z",
       {"2026-01-01T04:00:00Z", "2026-01-02T04:00:00Z"}},
      {"ZoneFromTheCallerWithNegativeOffset",
       "0 20 * * *",
       Zone("America/Los_Angeles"),
       "2026-01-01T00:00:00Z",
       {"2026-01-01T04:00:00Z", "2026-01-02T04:00:00Z"}},
      {"ZoneDecidesTheWeekday",
       "0 1 * * MON",
       Zone("Pacific/Auckland"),
       "2026-01-01T00:00:00Z",
       {"2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"}},

      // Day-of-month and day-of-week both restricted.
      {"DayOfMonthOrDayOfWeekByDefault",
       "0 12 13 * 5",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-02T12:00:00Z", "2026-01-09T12:00:00Z", "2026-01-13T12:00:00Z",
        "2026-01-16T12:00:00Z", "2026-01-23T12:00:00Z", "2026-01-30T12:00:00Z",
        "2026-02-06T12:00:00Z", "2026-02-13T12:00:00Z",
        "2026-02-20T12:00:00Z"}},
      {"DayOfMonthAndDayOfWeekWithDayMatchAll",
       "0 12 13 * 5",
       AllDays(),
       "2026-01-01T00:00:00Z",
       {"2026-02-13T12:00:00Z", "2026-03-13T12:00:00Z", "2026-11-13T12:00:00Z",
        "2027-08-13T12:00:00Z"}},
      {"DayOfMonthOrLastFriday",
       "0 0 1 * 5L",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-27T00:00:00Z",
        "2026-03-01T00:00:00Z"}},
      {"LastDayAndMondayWithDayMatchAll",
       "0 0 L * MON",
       AllDays(),
       "2026-01-01T00:00:00Z",
       {"2026-08-31T00:00:00Z", "2026-11-30T00:00:00Z"}},

      // A day field starting with `*` counts as unrestricted for that rule, as
      // in Vixie cron:
      // the day must then match both fields, so the step still applies.
      {"DayOfMonthStepAloneFiresOnOddDays",
       "0 0 */2 * *",
       {},
       "2026-01-28T00:00:00Z",
       {"2026-01-29T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z",
        "2026-02-03T00:00:00Z"}},
      {"DayOfMonthStepCountsAsStarSoBothMustMatch",
       "0 12 */2 * 5",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-09T12:00:00Z", "2026-01-23T12:00:00Z", "2026-02-13T12:00:00Z",
        "2026-02-27T12:00:00Z"}},
      {"DayOfWeekStepAloneFiresEveryOtherWeekday",
       "0 0 * * */2",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-06T00:00:00Z",
        "2026-01-08T00:00:00Z"}},
      {"DayOfWeekStepCountsAsStarSoBothMustMatch",
       "0 12 1 * */2",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-01T12:00:00Z", "2026-02-01T12:00:00Z", "2026-03-01T12:00:00Z",
        "2026-08-01T12:00:00Z", "2026-09-01T12:00:00Z",
        "2026-10-01T12:00:00Z"}},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Syntax, CronSequence,
                         ::testing::ValuesIn(SyntaxCases()), CaseName);

// ---------------------------------------------------------------------------------------------
// Calendar edges, in UTC unless the options say otherwise.

const std::vector<SequenceCase>& CalendarCases() {
  static const auto* const cases = new std::vector<SequenceCase>{
      {"LeapDayIn2028",
       "0 0 29 2 *",
       {},
       "2026-01-01T00:00:00Z",
       {"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z",
        "2036-02-29T00:00:00Z"}},
      {"NoLeapDayIn2100",
       "0 0 29 2 *",
       {},
       "2096-03-01T00:00:00Z",
       {"2104-02-29T00:00:00Z", "2108-02-29T00:00:00Z"}},
      {"LastDayOfFebruaryAcross2100",
       "0 0 L 2 *",
       {},
       "2099-12-31T00:00:00Z",
       {"2100-02-28T00:00:00Z", "2101-02-28T00:00:00Z", "2102-02-28T00:00:00Z",
        "2103-02-28T00:00:00Z", "2104-02-29T00:00:00Z"}},
      {"MarchFirstFollowsFebruary28In2100",
       "0 0 * 2,3 *",
       {},
       "2100-02-27T00:00:00Z",
       {"2100-02-28T00:00:00Z", "2100-03-01T00:00:00Z"}},
      {"ThirtyFirstOnlyIn31DayMonths",
       "0 0 31 * *",
       {},
       "2026-01-01T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z",
        "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-10-31T00:00:00Z",
        "2026-12-31T00:00:00Z", "2027-01-31T00:00:00Z"}},
      {"ThirtiethSkipsFebruary",
       "0 0 30 * *",
       {},
       "2026-01-31T00:00:00Z",
       {"2026-03-30T00:00:00Z", "2026-04-30T00:00:00Z"}},
      {"YearEndEverySecond",
       "* * * * * *",
       {},
       "2026-12-31T23:59:58Z",
       {"2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z",
        "2027-01-01T00:00:01Z"}},
      {"YearEndEveryMinuteFromTheLastSecond",
       "* * * * *",
       {},
       "2026-12-31T23:59:59Z",
       {"2027-01-01T00:00:00Z", "2027-01-01T00:01:00Z"}},
      {"NewYearFromTheLastSecondOfTheYear",
       "@yearly",
       {},
       "2026-12-31T23:59:59Z",
       {"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
      {"NewYearInAZoneEastOfUtc",
       "0 0 1 1 *",
       Zone("Europe/Berlin"),
       "2026-12-31T22:00:00Z",
       {"2026-12-31T23:00:00Z", "2027-12-31T23:00:00Z"}},
      {"LastSecondOfTheYearEverySecondField",
       "59 59 23 31 12 *",
       {},
       "2026-06-01T00:00:00Z",
       {"2026-12-31T23:59:59Z", "2027-12-31T23:59:59Z"}},
      {"PastTheInt32EpochEverySecond",
       "* * * * * *",
       {},
       "2038-01-19T03:14:06Z",
       {"2038-01-19T03:14:07Z", "2038-01-19T03:14:08Z",
        "2038-01-19T03:14:09Z"}},
      {"PastTheInt32EpochDaily",
       "0 0 * * *",
       {},
       "2038-01-19T03:14:07Z",
       {"2038-01-20T00:00:00Z", "2038-01-21T00:00:00Z"}},
      {"FromBefore1970",
       "0 0 1 1 *",
       {},
       "1969-06-01T00:00:00Z",
       {"1970-01-01T00:00:00Z", "1971-01-01T00:00:00Z"}},
      {"FarFuture2399Works",
       "0 0 1 1 *",
       {},
       "2398-06-01T00:00:00Z",
       {"2399-01-01T00:00:00Z"},
       kEnds},
      {"LastSecondOf2399",
       "59 59 23 31 12 *",
       {},
       "2399-01-01T00:00:00Z",
       {"2399-12-31T23:59:59Z"},
       kEnds},
      {"EverySecondUpToTheEndOf2399",
       "* * * * * *",
       {},
       "2399-12-31T23:59:57Z",
       {"2399-12-31T23:59:58Z", "2399-12-31T23:59:59Z"},
       kEnds},
      {"LastWallTimeOf2399WestOfUtcIsIn2400Utc",
       "0 23 31 12 *",
       Zone("America/New_York"),
       "2399-06-01T00:00:00Z",
       {"2400-01-01T04:00:00Z"},
       kEnds},
      {"SevenFieldsYear2399",
       "0 0 0 1 1 ? 2399",
       {},
       "2026-01-01T00:00:00Z",
       {"2399-01-01T00:00:00Z"},
       kEnds},
      {"SubSecondAfterEverySecond",
       "* * * * * *",
       {},
       "2026-01-01T10:00:00.5Z",
       {"2026-01-01T10:00:01Z", "2026-01-01T10:00:02Z"}},
      {"SubSecondAfterHourly",
       "0 * * * *",
       {},
       "2026-01-01T10:00:00.5Z",
       {"2026-01-01T11:00:00Z"}},
      {"SubSecondJustBeforeTheHour",
       "0 * * * *",
       {},
       "2026-01-01T09:59:59.999999999Z",
       {"2026-01-01T10:00:00Z"}},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Calendar, CronSequence,
                         ::testing::ValuesIn(CalendarCases()), CaseName);

TEST(CronCalendar, NextIsStrictlyAfterItsArgument) {
  Schedule every_second = MustParse("* * * * * *");
  EXPECT_EQ(Rfc(every_second.Next(T("2026-01-01T10:00:00Z"))),
            "2026-01-01T10:00:01Z");
  EXPECT_EQ(Rfc(every_second.Next(T("2026-01-01T10:00:00.5Z"))),
            "2026-01-01T10:00:01Z");
  EXPECT_EQ(Rfc(every_second.Next(T("2026-01-01T09:59:59.5Z"))),
            "2026-01-01T10:00:00Z");
  Schedule hourly = MustParse("0 * * * *");
  EXPECT_EQ(Rfc(hourly.Next(T("2026-01-01T10:00:00Z"))),
            "2026-01-01T11:00:00Z");
  EXPECT_EQ(Rfc(hourly.Next(T("2026-01-01T10:00:00.5Z"))),
            "2026-01-01T11:00:00Z");
  EXPECT_EQ(Rfc(hourly.Next(T("2026-01-01T09:59:59.5Z"))),
            "2026-01-01T10:00:00Z");
}

TEST(CronCalendar, PrevIsStrictlyBeforeItsArgument) {
  Schedule every_second = MustParse("* * * * * *");
  EXPECT_EQ(Rfc(every_second.Prev(T("2026-01-01T10:00:00Z"))),
            "2026-01-01T09:59:59Z");
  EXPECT_EQ(Rfc(every_second.Prev(T("2026-01-01T10:00:00.5Z"))),
            "2026-01-01T10:00:00Z");
  Schedule hourly = MustParse("0 * * * *");
  EXPECT_EQ(Rfc(hourly.Prev(T("2026-01-01T10:00:00Z"))),
            "2026-01-01T09:00:00Z");
  EXPECT_EQ(Rfc(hourly.Prev(T("2026-01-01T10:00:00.5Z"))),
            "2026-01-01T10:00:00Z");
}

TEST(CronCalendar, NextAfterTheLastFireTimeOf2399IsInfiniteFuture) {
  Schedule s = MustParse("0 0 1 1 *");
  EXPECT_EQ(Rfc(s.Next(T("2399-01-01T00:00:00Z"))), "InfiniteFuture");
  EXPECT_EQ(Rfc(s.Next(T("2399-12-31T23:59:59Z"))), "InfiniteFuture");
  EXPECT_EQ(Rfc(s.Next(T("2500-01-01T00:00:00Z"))), "InfiniteFuture");
  EXPECT_EQ(Rfc(s.Next(absl::InfiniteFuture())), "InfiniteFuture");
}

TEST(CronCalendar, PrevFromTheFarFutureIsTheLastFireTimeOf2399) {
  Schedule s = MustParse("0 0 1 1 *");
  EXPECT_EQ(Rfc(s.Prev(absl::InfiniteFuture())), "2399-01-01T00:00:00Z");
  EXPECT_EQ(Rfc(s.Prev(T("2500-01-01T00:00:00Z"))), "2399-01-01T00:00:00Z");
}

TEST(CronCalendar, PrevBefore1970IsInfinitePast) {
  Schedule s = MustParse("0 0 1 1 *");
  EXPECT_EQ(Rfc(s.Prev(T("1970-01-01T00:00:01Z"))), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc(s.Prev(T("1970-01-01T00:00:00Z"))), "InfinitePast");
  EXPECT_EQ(Rfc(s.Prev(T("1969-06-01T00:00:00Z"))), "InfinitePast");
  EXPECT_EQ(Rfc(s.Prev(absl::InfinitePast())), "InfinitePast");
}

TEST(CronCalendar, NextFromTheFarPastIsTheFirstFireTimeOf1970) {
  Schedule s = MustParse("0 0 1 1 *");
  EXPECT_EQ(Rfc(s.Next(absl::InfinitePast())), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc(s.Next(T("1900-01-01T00:00:00Z"))), "1970-01-01T00:00:00Z");
}

TEST(CronCalendar, FirstWallTimeOf1970EastOfUtcIsIn1969Utc) {
  Schedule s = MustParse("0 0 1 1 *", Zone("Asia/Tokyo"));
  EXPECT_EQ(Rfc(s.Next(absl::InfinitePast())), "1969-12-31T15:00:00Z");
  EXPECT_EQ(Rfc(s.Prev(T("1970-06-01T00:00:00Z"))), "1969-12-31T15:00:00Z");
  EXPECT_EQ(Rfc(s.Prev(T("1969-12-31T15:00:00Z"))), "InfinitePast");
}

TEST(CronCalendar, NextNReturnsFewerAtTheEndOfTheRange) {
  Schedule s = MustParse("0 0 1 1 *");
  std::vector<std::string> got;
  for (absl::Time t : s.NextN(T("2397-06-01T00:00:00Z"), 5))
    got.push_back(Rfc(t));
  EXPECT_THAT(
      got, ElementsAreArray({"2398-01-01T00:00:00Z", "2399-01-01T00:00:00Z"}));
  EXPECT_TRUE(s.NextN(T("2397-06-01T00:00:00Z"), 0).empty());
}

// ---------------------------------------------------------------------------------------------
// Daylight saving.
//
// The transitions these rows cross (UTC; offsets east of UTC):
//   America/New_York     2026-03-08T07:00Z, 2027-03-14T07:00Z  -5:00 -> -4:00
//   (02:00 -> 03:00)
//                        2026-11-01T06:00Z, 2027-11-07T06:00Z  -4:00 -> -5:00
//                        (02:00 -> 01:00)
//   Europe/Berlin        2026-03-29T01:00Z, 2027-03-28T01:00Z  +1:00 -> +2:00
//   (02:00 -> 03:00)
//                        2026-10-25T01:00Z, 2027-10-31T01:00Z  +2:00 -> +1:00
//                        (03:00 -> 02:00)
//   Australia/Lord_Howe  2026-10-03T15:30Z, 2027-10-02T15:30Z  +10:30 -> +11:00
//   (02:00 -> 02:30)
//                        2026-04-04T15:00Z, 2027-04-03T15:00Z  +11:00 -> +10:30
//                        (02:00 -> 01:30)
//   Pacific/Chatham      2026-09-26T14:00Z, 2027-09-25T14:00Z  +12:45 -> +13:45
//   (02:45 -> 03:45)
//                        2026-04-04T14:00Z, 2027-04-03T14:00Z  +13:45 -> +12:45
//                        (03:45 -> 02:45)
//   America/Santiago     2026-09-06T04:00Z                     -4:00 -> -3:00
//   (00:00 -> 01:00)
//                        2026-04-05T03:00Z                     -3:00 -> -4:00
//                        (24:00 -> 23:00)
//   and, far out, America/New_York 2038-03-14T07:00Z and Europe/Berlin
//   2399-10-31T01:00Z.
// (CronDst.ZoneTransitionsAreTheOnesTheTablesAssume checks them against the
// zone data.)
//
// The fire times were computed with Python 3's zoneinfo by brute force, sharing
// nothing with this library. A schedule whose hour field starts with `*` runs
// in real time: every UTC minute whose local wall time matches the fields
// fires. For any other schedule, each matching wall time of each local day is
// resolved on its own: a wall time that occurs once fires then; one that occurs
// twice fires at its first occurrence (at both with RepeatPolicy::kTwice); one
// inside a gap fires at the transition instant, the first instant after the gap
// (not at all with GapPolicy::kSkip); equal instants count once. The comment
// after each instant is its local wall time and offset.

const std::vector<SequenceCase>& DstCases() {
  static const auto* const cases = new std::vector<SequenceCase>{
      {"NewYork2026SpringFixed0230InGapFiresAtTransition",
       "30 2 * * *",
       Zone("America/New_York"),
       "2026-03-07T17:00:00Z",  // 03-07 12:00:00 -0500
       {
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-09T06:30:00Z",  // 03-09 02:30:00 -0400
           "2026-03-10T06:30:00Z",  // 03-10 02:30:00 -0400
       }},
      {"NewYork2026SpringFixed0230InGapSkippedWithSkipPolicy",
       "30 2 * * *",
       Zone("America/New_York", kSkipGap),
       "2026-03-07T17:00:00Z",  // 03-07 12:00:00 -0500
       {
           "2026-03-09T06:30:00Z",  // 03-09 02:30:00 -0400
           "2026-03-10T06:30:00Z",  // 03-10 02:30:00 -0400
       }},
      {"NewYork2026SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("America/New_York"),
       "2026-03-08T04:00:00Z",  // 03-07 23:00:00 -0500
       {
           "2026-03-08T05:00:00Z",  // 03-08 00:00:00 -0500
           "2026-03-08T06:00:00Z",  // 03-08 01:00:00 -0500
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-08T08:00:00Z",  // 03-08 04:00:00 -0400
           "2026-03-08T09:00:00Z",  // 03-08 05:00:00 -0400
           "2026-03-08T10:00:00Z",  // 03-08 06:00:00 -0400
       }},
      {"NewYork2026SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("America/New_York"),
       "2026-03-08T05:00:00Z",  // 03-08 00:00:00 -0500
       {
           "2026-03-08T05:15:00Z",  // 03-08 00:15:00 -0500
           "2026-03-08T05:30:00Z",  // 03-08 00:30:00 -0500
           "2026-03-08T05:45:00Z",  // 03-08 00:45:00 -0500
           "2026-03-08T06:00:00Z",  // 03-08 01:00:00 -0500
           "2026-03-08T06:15:00Z",  // 03-08 01:15:00 -0500
           "2026-03-08T06:30:00Z",  // 03-08 01:30:00 -0500
           "2026-03-08T06:45:00Z",  // 03-08 01:45:00 -0500
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-08T07:15:00Z",  // 03-08 03:15:00 -0400
           "2026-03-08T07:30:00Z",  // 03-08 03:30:00 -0400
           "2026-03-08T07:45:00Z",  // 03-08 03:45:00 -0400
           "2026-03-08T08:00:00Z",  // 03-08 04:00:00 -0400
           "2026-03-08T08:15:00Z",  // 03-08 04:15:00 -0400
           "2026-03-08T08:30:00Z",  // 03-08 04:30:00 -0400
           "2026-03-08T08:45:00Z",  // 03-08 04:45:00 -0400
           "2026-03-08T09:00:00Z",  // 03-08 05:00:00 -0400
       }},
      {"NewYork2026SpringHourlyIgnoresSkipPolicy",
       "0 * * * *",
       Zone("America/New_York", kSkipGap),
       "2026-03-08T04:00:00Z",  // 03-07 23:00:00 -0500
       {
           "2026-03-08T05:00:00Z",  // 03-08 00:00:00 -0500
           "2026-03-08T06:00:00Z",  // 03-08 01:00:00 -0500
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-08T08:00:00Z",  // 03-08 04:00:00 -0400
           "2026-03-08T09:00:00Z",  // 03-08 05:00:00 -0400
           "2026-03-08T10:00:00Z",  // 03-08 06:00:00 -0400
       }},
      {"NewYork2026SpringEvery15MinutesIgnoresSkipPolicy",
       "*/15 * * * *",
       Zone("America/New_York", kSkipGap),
       "2026-03-08T05:00:00Z",  // 03-08 00:00:00 -0500
       {
           "2026-03-08T05:15:00Z",  // 03-08 00:15:00 -0500
           "2026-03-08T05:30:00Z",  // 03-08 00:30:00 -0500
           "2026-03-08T05:45:00Z",  // 03-08 00:45:00 -0500
           "2026-03-08T06:00:00Z",  // 03-08 01:00:00 -0500
           "2026-03-08T06:15:00Z",  // 03-08 01:15:00 -0500
           "2026-03-08T06:30:00Z",  // 03-08 01:30:00 -0500
           "2026-03-08T06:45:00Z",  // 03-08 01:45:00 -0500
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-08T07:15:00Z",  // 03-08 03:15:00 -0400
           "2026-03-08T07:30:00Z",  // 03-08 03:30:00 -0400
           "2026-03-08T07:45:00Z",  // 03-08 03:45:00 -0400
           "2026-03-08T08:00:00Z",  // 03-08 04:00:00 -0400
           "2026-03-08T08:15:00Z",  // 03-08 04:15:00 -0400
           "2026-03-08T08:30:00Z",  // 03-08 04:30:00 -0400
           "2026-03-08T08:45:00Z",  // 03-08 04:45:00 -0400
           "2026-03-08T09:00:00Z",  // 03-08 05:00:00 -0400
       }},
      {"NewYork2026FallFixed0130RepeatedFiresFirstPassOnly",
       "30 1 * * *",
       Zone("America/New_York"),
       "2026-10-31T16:00:00Z",  // 10-31 12:00:00 -0400
       {
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-02T06:30:00Z",  // 11-02 01:30:00 -0500
           "2026-11-03T06:30:00Z",  // 11-03 01:30:00 -0500
       }},
      {"NewYork2026FallFixed0130RepeatedFiresTwiceWithTwicePolicy",
       "30 1 * * *",
       Zone("America/New_York", kRepeatTwice),
       "2026-10-31T16:00:00Z",  // 10-31 12:00:00 -0400
       {
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-01T06:30:00Z",  // 11-01 01:30:00 -0500
           "2026-11-02T06:30:00Z",  // 11-02 01:30:00 -0500
           "2026-11-03T06:30:00Z",  // 11-03 01:30:00 -0500
       }},
      {"NewYork2026FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("America/New_York"),
       "2026-11-01T03:00:00Z",  // 10-31 23:00:00 -0400
       {
           "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T06:00:00Z",  // 11-01 01:00:00 -0500
           "2026-11-01T07:00:00Z",  // 11-01 02:00:00 -0500
           "2026-11-01T08:00:00Z",  // 11-01 03:00:00 -0500
           "2026-11-01T09:00:00Z",  // 11-01 04:00:00 -0500
       }},
      {"NewYork2026FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("America/New_York"),
       "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
       {
           "2026-11-01T04:15:00Z",  // 11-01 00:15:00 -0400
           "2026-11-01T04:30:00Z",  // 11-01 00:30:00 -0400
           "2026-11-01T04:45:00Z",  // 11-01 00:45:00 -0400
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T05:15:00Z",  // 11-01 01:15:00 -0400
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-01T05:45:00Z",  // 11-01 01:45:00 -0400
           "2026-11-01T06:00:00Z",  // 11-01 01:00:00 -0500
           "2026-11-01T06:15:00Z",  // 11-01 01:15:00 -0500
           "2026-11-01T06:30:00Z",  // 11-01 01:30:00 -0500
           "2026-11-01T06:45:00Z",  // 11-01 01:45:00 -0500
           "2026-11-01T07:00:00Z",  // 11-01 02:00:00 -0500
           "2026-11-01T07:15:00Z",  // 11-01 02:15:00 -0500
           "2026-11-01T07:30:00Z",  // 11-01 02:30:00 -0500
           "2026-11-01T07:45:00Z",  // 11-01 02:45:00 -0500
           "2026-11-01T08:00:00Z",  // 11-01 03:00:00 -0500
       }},
      {"NewYork2026FallHourlyIgnoresTwicePolicy",
       "0 * * * *",
       Zone("America/New_York", kRepeatTwice),
       "2026-11-01T03:00:00Z",  // 10-31 23:00:00 -0400
       {
           "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T06:00:00Z",  // 11-01 01:00:00 -0500
           "2026-11-01T07:00:00Z",  // 11-01 02:00:00 -0500
           "2026-11-01T08:00:00Z",  // 11-01 03:00:00 -0500
           "2026-11-01T09:00:00Z",  // 11-01 04:00:00 -0500
       }},
      {"NewYork2026FallEvery15MinutesIgnoresTwicePolicy",
       "*/15 * * * *",
       Zone("America/New_York", kRepeatTwice),
       "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
       {
           "2026-11-01T04:15:00Z",  // 11-01 00:15:00 -0400
           "2026-11-01T04:30:00Z",  // 11-01 00:30:00 -0400
           "2026-11-01T04:45:00Z",  // 11-01 00:45:00 -0400
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T05:15:00Z",  // 11-01 01:15:00 -0400
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-01T05:45:00Z",  // 11-01 01:45:00 -0400
           "2026-11-01T06:00:00Z",  // 11-01 01:00:00 -0500
           "2026-11-01T06:15:00Z",  // 11-01 01:15:00 -0500
           "2026-11-01T06:30:00Z",  // 11-01 01:30:00 -0500
           "2026-11-01T06:45:00Z",  // 11-01 01:45:00 -0500
           "2026-11-01T07:00:00Z",  // 11-01 02:00:00 -0500
           "2026-11-01T07:15:00Z",  // 11-01 02:15:00 -0500
           "2026-11-01T07:30:00Z",  // 11-01 02:30:00 -0500
           "2026-11-01T07:45:00Z",  // 11-01 02:45:00 -0500
           "2026-11-01T08:00:00Z",  // 11-01 03:00:00 -0500
       }},
      {"NewYork2027SpringFixed0230InGapFiresAtTransition",
       "30 2 * * *",
       Zone("America/New_York"),
       "2027-03-13T17:00:00Z",  // 03-13 12:00:00 -0500
       {
           "2027-03-14T07:00:00Z",  // 03-14 03:00:00 -0400
           "2027-03-15T06:30:00Z",  // 03-15 02:30:00 -0400
           "2027-03-16T06:30:00Z",  // 03-16 02:30:00 -0400
       }},
      {"NewYork2027SpringFixed0230InGapSkippedWithSkipPolicy",
       "30 2 * * *",
       Zone("America/New_York", kSkipGap),
       "2027-03-13T17:00:00Z",  // 03-13 12:00:00 -0500
       {
           "2027-03-15T06:30:00Z",  // 03-15 02:30:00 -0400
           "2027-03-16T06:30:00Z",  // 03-16 02:30:00 -0400
       }},
      {"NewYork2027SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("America/New_York"),
       "2027-03-14T04:00:00Z",  // 03-13 23:00:00 -0500
       {
           "2027-03-14T05:00:00Z",  // 03-14 00:00:00 -0500
           "2027-03-14T06:00:00Z",  // 03-14 01:00:00 -0500
           "2027-03-14T07:00:00Z",  // 03-14 03:00:00 -0400
           "2027-03-14T08:00:00Z",  // 03-14 04:00:00 -0400
           "2027-03-14T09:00:00Z",  // 03-14 05:00:00 -0400
           "2027-03-14T10:00:00Z",  // 03-14 06:00:00 -0400
       }},
      {"NewYork2027SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("America/New_York"),
       "2027-03-14T05:00:00Z",  // 03-14 00:00:00 -0500
       {
           "2027-03-14T05:15:00Z",  // 03-14 00:15:00 -0500
           "2027-03-14T05:30:00Z",  // 03-14 00:30:00 -0500
           "2027-03-14T05:45:00Z",  // 03-14 00:45:00 -0500
           "2027-03-14T06:00:00Z",  // 03-14 01:00:00 -0500
           "2027-03-14T06:15:00Z",  // 03-14 01:15:00 -0500
           "2027-03-14T06:30:00Z",  // 03-14 01:30:00 -0500
           "2027-03-14T06:45:00Z",  // 03-14 01:45:00 -0500
           "2027-03-14T07:00:00Z",  // 03-14 03:00:00 -0400
           "2027-03-14T07:15:00Z",  // 03-14 03:15:00 -0400
           "2027-03-14T07:30:00Z",  // 03-14 03:30:00 -0400
           "2027-03-14T07:45:00Z",  // 03-14 03:45:00 -0400
           "2027-03-14T08:00:00Z",  // 03-14 04:00:00 -0400
           "2027-03-14T08:15:00Z",  // 03-14 04:15:00 -0400
           "2027-03-14T08:30:00Z",  // 03-14 04:30:00 -0400
           "2027-03-14T08:45:00Z",  // 03-14 04:45:00 -0400
           "2027-03-14T09:00:00Z",  // 03-14 05:00:00 -0400
       }},
      {"NewYork2027FallFixed0130RepeatedFiresFirstPassOnly",
       "30 1 * * *",
       Zone("America/New_York"),
       "2027-11-06T16:00:00Z",  // 11-06 12:00:00 -0400
       {
           "2027-11-07T05:30:00Z",  // 11-07 01:30:00 -0400
           "2027-11-08T06:30:00Z",  // 11-08 01:30:00 -0500
           "2027-11-09T06:30:00Z",  // 11-09 01:30:00 -0500
       }},
      {"NewYork2027FallFixed0130RepeatedFiresTwiceWithTwicePolicy",
       "30 1 * * *",
       Zone("America/New_York", kRepeatTwice),
       "2027-11-06T16:00:00Z",  // 11-06 12:00:00 -0400
       {
           "2027-11-07T05:30:00Z",  // 11-07 01:30:00 -0400
           "2027-11-07T06:30:00Z",  // 11-07 01:30:00 -0500
           "2027-11-08T06:30:00Z",  // 11-08 01:30:00 -0500
           "2027-11-09T06:30:00Z",  // 11-09 01:30:00 -0500
       }},
      {"NewYork2027FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("America/New_York"),
       "2027-11-07T03:00:00Z",  // 11-06 23:00:00 -0400
       {
           "2027-11-07T04:00:00Z",  // 11-07 00:00:00 -0400
           "2027-11-07T05:00:00Z",  // 11-07 01:00:00 -0400
           "2027-11-07T06:00:00Z",  // 11-07 01:00:00 -0500
           "2027-11-07T07:00:00Z",  // 11-07 02:00:00 -0500
           "2027-11-07T08:00:00Z",  // 11-07 03:00:00 -0500
           "2027-11-07T09:00:00Z",  // 11-07 04:00:00 -0500
       }},
      {"NewYork2027FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("America/New_York"),
       "2027-11-07T04:00:00Z",  // 11-07 00:00:00 -0400
       {
           "2027-11-07T04:15:00Z",  // 11-07 00:15:00 -0400
           "2027-11-07T04:30:00Z",  // 11-07 00:30:00 -0400
           "2027-11-07T04:45:00Z",  // 11-07 00:45:00 -0400
           "2027-11-07T05:00:00Z",  // 11-07 01:00:00 -0400
           "2027-11-07T05:15:00Z",  // 11-07 01:15:00 -0400
           "2027-11-07T05:30:00Z",  // 11-07 01:30:00 -0400
           "2027-11-07T05:45:00Z",  // 11-07 01:45:00 -0400
           "2027-11-07T06:00:00Z",  // 11-07 01:00:00 -0500
           "2027-11-07T06:15:00Z",  // 11-07 01:15:00 -0500
           "2027-11-07T06:30:00Z",  // 11-07 01:30:00 -0500
           "2027-11-07T06:45:00Z",  // 11-07 01:45:00 -0500
           "2027-11-07T07:00:00Z",  // 11-07 02:00:00 -0500
           "2027-11-07T07:15:00Z",  // 11-07 02:15:00 -0500
           "2027-11-07T07:30:00Z",  // 11-07 02:30:00 -0500
           "2027-11-07T07:45:00Z",  // 11-07 02:45:00 -0500
           "2027-11-07T08:00:00Z",  // 11-07 03:00:00 -0500
       }},
      {"Berlin2026SpringFixed0230InGapFiresAtTransition",
       "30 2 * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T11:00:00Z",  // 03-28 12:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
           "2026-03-31T00:30:00Z",  // 03-31 02:30:00 +0200
       }},
      {"Berlin2026SpringFixed0230InGapSkippedWithSkipPolicy",
       "30 2 * * *",
       Zone("Europe/Berlin", kSkipGap),
       "2026-03-28T11:00:00Z",  // 03-28 12:00:00 +0100
       {
           "2026-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
           "2026-03-31T00:30:00Z",  // 03-31 02:30:00 +0200
       }},
      {"Berlin2026SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T22:00:00Z",  // 03-28 23:00:00 +0100
       {
           "2026-03-28T23:00:00Z",  // 03-29 00:00:00 +0100
           "2026-03-29T00:00:00Z",  // 03-29 01:00:00 +0100
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-29T02:00:00Z",  // 03-29 04:00:00 +0200
           "2026-03-29T03:00:00Z",  // 03-29 05:00:00 +0200
           "2026-03-29T04:00:00Z",  // 03-29 06:00:00 +0200
       }},
      {"Berlin2026SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T23:00:00Z",  // 03-29 00:00:00 +0100
       {
           "2026-03-28T23:15:00Z",  // 03-29 00:15:00 +0100
           "2026-03-28T23:30:00Z",  // 03-29 00:30:00 +0100
           "2026-03-28T23:45:00Z",  // 03-29 00:45:00 +0100
           "2026-03-29T00:00:00Z",  // 03-29 01:00:00 +0100
           "2026-03-29T00:15:00Z",  // 03-29 01:15:00 +0100
           "2026-03-29T00:30:00Z",  // 03-29 01:30:00 +0100
           "2026-03-29T00:45:00Z",  // 03-29 01:45:00 +0100
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-29T01:15:00Z",  // 03-29 03:15:00 +0200
           "2026-03-29T01:30:00Z",  // 03-29 03:30:00 +0200
           "2026-03-29T01:45:00Z",  // 03-29 03:45:00 +0200
           "2026-03-29T02:00:00Z",  // 03-29 04:00:00 +0200
           "2026-03-29T02:15:00Z",  // 03-29 04:15:00 +0200
           "2026-03-29T02:30:00Z",  // 03-29 04:30:00 +0200
           "2026-03-29T02:45:00Z",  // 03-29 04:45:00 +0200
           "2026-03-29T03:00:00Z",  // 03-29 05:00:00 +0200
       }},
      {"Berlin2026SpringHourlyIgnoresSkipPolicy",
       "0 * * * *",
       Zone("Europe/Berlin", kSkipGap),
       "2026-03-28T22:00:00Z",  // 03-28 23:00:00 +0100
       {
           "2026-03-28T23:00:00Z",  // 03-29 00:00:00 +0100
           "2026-03-29T00:00:00Z",  // 03-29 01:00:00 +0100
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-29T02:00:00Z",  // 03-29 04:00:00 +0200
           "2026-03-29T03:00:00Z",  // 03-29 05:00:00 +0200
           "2026-03-29T04:00:00Z",  // 03-29 06:00:00 +0200
       }},
      {"Berlin2026SpringEvery15MinutesIgnoresSkipPolicy",
       "*/15 * * * *",
       Zone("Europe/Berlin", kSkipGap),
       "2026-03-28T23:00:00Z",  // 03-29 00:00:00 +0100
       {
           "2026-03-28T23:15:00Z",  // 03-29 00:15:00 +0100
           "2026-03-28T23:30:00Z",  // 03-29 00:30:00 +0100
           "2026-03-28T23:45:00Z",  // 03-29 00:45:00 +0100
           "2026-03-29T00:00:00Z",  // 03-29 01:00:00 +0100
           "2026-03-29T00:15:00Z",  // 03-29 01:15:00 +0100
           "2026-03-29T00:30:00Z",  // 03-29 01:30:00 +0100
           "2026-03-29T00:45:00Z",  // 03-29 01:45:00 +0100
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-29T01:15:00Z",  // 03-29 03:15:00 +0200
           "2026-03-29T01:30:00Z",  // 03-29 03:30:00 +0200
           "2026-03-29T01:45:00Z",  // 03-29 03:45:00 +0200
           "2026-03-29T02:00:00Z",  // 03-29 04:00:00 +0200
           "2026-03-29T02:15:00Z",  // 03-29 04:15:00 +0200
           "2026-03-29T02:30:00Z",  // 03-29 04:30:00 +0200
           "2026-03-29T02:45:00Z",  // 03-29 04:45:00 +0200
           "2026-03-29T03:00:00Z",  // 03-29 05:00:00 +0200
       }},
      {"Berlin2026FallFixed0230RepeatedFiresFirstPassOnly",
       "30 2 * * *",
       Zone("Europe/Berlin"),
       "2026-10-24T10:00:00Z",  // 10-24 12:00:00 +0200
       {
           "2026-10-25T00:30:00Z",  // 10-25 02:30:00 +0200
           "2026-10-26T01:30:00Z",  // 10-26 02:30:00 +0100
           "2026-10-27T01:30:00Z",  // 10-27 02:30:00 +0100
       }},
      {"Berlin2026FallFixed0230RepeatedFiresTwiceWithTwicePolicy",
       "30 2 * * *",
       Zone("Europe/Berlin", kRepeatTwice),
       "2026-10-24T10:00:00Z",  // 10-24 12:00:00 +0200
       {
           "2026-10-25T00:30:00Z",  // 10-25 02:30:00 +0200
           "2026-10-25T01:30:00Z",  // 10-25 02:30:00 +0100
           "2026-10-26T01:30:00Z",  // 10-26 02:30:00 +0100
           "2026-10-27T01:30:00Z",  // 10-27 02:30:00 +0100
       }},
      {"Berlin2026FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Europe/Berlin"),
       "2026-10-24T22:00:00Z",  // 10-25 00:00:00 +0200
       {
           "2026-10-24T23:00:00Z",  // 10-25 01:00:00 +0200
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T01:00:00Z",  // 10-25 02:00:00 +0100
           "2026-10-25T02:00:00Z",  // 10-25 03:00:00 +0100
           "2026-10-25T03:00:00Z",  // 10-25 04:00:00 +0100
           "2026-10-25T04:00:00Z",  // 10-25 05:00:00 +0100
       }},
      {"Berlin2026FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Europe/Berlin"),
       "2026-10-24T23:00:00Z",  // 10-25 01:00:00 +0200
       {
           "2026-10-24T23:15:00Z",  // 10-25 01:15:00 +0200
           "2026-10-24T23:30:00Z",  // 10-25 01:30:00 +0200
           "2026-10-24T23:45:00Z",  // 10-25 01:45:00 +0200
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T00:15:00Z",  // 10-25 02:15:00 +0200
           "2026-10-25T00:30:00Z",  // 10-25 02:30:00 +0200
           "2026-10-25T00:45:00Z",  // 10-25 02:45:00 +0200
           "2026-10-25T01:00:00Z",  // 10-25 02:00:00 +0100
           "2026-10-25T01:15:00Z",  // 10-25 02:15:00 +0100
           "2026-10-25T01:30:00Z",  // 10-25 02:30:00 +0100
           "2026-10-25T01:45:00Z",  // 10-25 02:45:00 +0100
           "2026-10-25T02:00:00Z",  // 10-25 03:00:00 +0100
           "2026-10-25T02:15:00Z",  // 10-25 03:15:00 +0100
           "2026-10-25T02:30:00Z",  // 10-25 03:30:00 +0100
           "2026-10-25T02:45:00Z",  // 10-25 03:45:00 +0100
           "2026-10-25T03:00:00Z",  // 10-25 04:00:00 +0100
       }},
      {"Berlin2026FallHourlyIgnoresTwicePolicy",
       "0 * * * *",
       Zone("Europe/Berlin", kRepeatTwice),
       "2026-10-24T22:00:00Z",  // 10-25 00:00:00 +0200
       {
           "2026-10-24T23:00:00Z",  // 10-25 01:00:00 +0200
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T01:00:00Z",  // 10-25 02:00:00 +0100
           "2026-10-25T02:00:00Z",  // 10-25 03:00:00 +0100
           "2026-10-25T03:00:00Z",  // 10-25 04:00:00 +0100
           "2026-10-25T04:00:00Z",  // 10-25 05:00:00 +0100
       }},
      {"Berlin2026FallEvery15MinutesIgnoresTwicePolicy",
       "*/15 * * * *",
       Zone("Europe/Berlin", kRepeatTwice),
       "2026-10-24T23:00:00Z",  // 10-25 01:00:00 +0200
       {
           "2026-10-24T23:15:00Z",  // 10-25 01:15:00 +0200
           "2026-10-24T23:30:00Z",  // 10-25 01:30:00 +0200
           "2026-10-24T23:45:00Z",  // 10-25 01:45:00 +0200
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T00:15:00Z",  // 10-25 02:15:00 +0200
           "2026-10-25T00:30:00Z",  // 10-25 02:30:00 +0200
           "2026-10-25T00:45:00Z",  // 10-25 02:45:00 +0200
           "2026-10-25T01:00:00Z",  // 10-25 02:00:00 +0100
           "2026-10-25T01:15:00Z",  // 10-25 02:15:00 +0100
           "2026-10-25T01:30:00Z",  // 10-25 02:30:00 +0100
           "2026-10-25T01:45:00Z",  // 10-25 02:45:00 +0100
           "2026-10-25T02:00:00Z",  // 10-25 03:00:00 +0100
           "2026-10-25T02:15:00Z",  // 10-25 03:15:00 +0100
           "2026-10-25T02:30:00Z",  // 10-25 03:30:00 +0100
           "2026-10-25T02:45:00Z",  // 10-25 03:45:00 +0100
           "2026-10-25T03:00:00Z",  // 10-25 04:00:00 +0100
       }},
      {"Berlin2027SpringFixed0230InGapFiresAtTransition",
       "30 2 * * *",
       Zone("Europe/Berlin"),
       "2027-03-27T11:00:00Z",  // 03-27 12:00:00 +0100
       {
           "2027-03-28T01:00:00Z",  // 03-28 03:00:00 +0200
           "2027-03-29T00:30:00Z",  // 03-29 02:30:00 +0200
           "2027-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
       }},
      {"Berlin2027SpringFixed0230InGapSkippedWithSkipPolicy",
       "30 2 * * *",
       Zone("Europe/Berlin", kSkipGap),
       "2027-03-27T11:00:00Z",  // 03-27 12:00:00 +0100
       {
           "2027-03-29T00:30:00Z",  // 03-29 02:30:00 +0200
           "2027-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
       }},
      {"Berlin2027SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Europe/Berlin"),
       "2027-03-27T22:00:00Z",  // 03-27 23:00:00 +0100
       {
           "2027-03-27T23:00:00Z",  // 03-28 00:00:00 +0100
           "2027-03-28T00:00:00Z",  // 03-28 01:00:00 +0100
           "2027-03-28T01:00:00Z",  // 03-28 03:00:00 +0200
           "2027-03-28T02:00:00Z",  // 03-28 04:00:00 +0200
           "2027-03-28T03:00:00Z",  // 03-28 05:00:00 +0200
           "2027-03-28T04:00:00Z",  // 03-28 06:00:00 +0200
       }},
      {"Berlin2027SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Europe/Berlin"),
       "2027-03-27T23:00:00Z",  // 03-28 00:00:00 +0100
       {
           "2027-03-27T23:15:00Z",  // 03-28 00:15:00 +0100
           "2027-03-27T23:30:00Z",  // 03-28 00:30:00 +0100
           "2027-03-27T23:45:00Z",  // 03-28 00:45:00 +0100
           "2027-03-28T00:00:00Z",  // 03-28 01:00:00 +0100
           "2027-03-28T00:15:00Z",  // 03-28 01:15:00 +0100
           "2027-03-28T00:30:00Z",  // 03-28 01:30:00 +0100
           "2027-03-28T00:45:00Z",  // 03-28 01:45:00 +0100
           "2027-03-28T01:00:00Z",  // 03-28 03:00:00 +0200
           "2027-03-28T01:15:00Z",  // 03-28 03:15:00 +0200
           "2027-03-28T01:30:00Z",  // 03-28 03:30:00 +0200
           "2027-03-28T01:45:00Z",  // 03-28 03:45:00 +0200
           "2027-03-28T02:00:00Z",  // 03-28 04:00:00 +0200
           "2027-03-28T02:15:00Z",  // 03-28 04:15:00 +0200
           "2027-03-28T02:30:00Z",  // 03-28 04:30:00 +0200
           "2027-03-28T02:45:00Z",  // 03-28 04:45:00 +0200
           "2027-03-28T03:00:00Z",  // 03-28 05:00:00 +0200
       }},
      {"Berlin2027FallFixed0230RepeatedFiresFirstPassOnly",
       "30 2 * * *",
       Zone("Europe/Berlin"),
       "2027-10-30T10:00:00Z",  // 10-30 12:00:00 +0200
       {
           "2027-10-31T00:30:00Z",  // 10-31 02:30:00 +0200
           "2027-11-01T01:30:00Z",  // 11-01 02:30:00 +0100
           "2027-11-02T01:30:00Z",  // 11-02 02:30:00 +0100
       }},
      {"Berlin2027FallFixed0230RepeatedFiresTwiceWithTwicePolicy",
       "30 2 * * *",
       Zone("Europe/Berlin", kRepeatTwice),
       "2027-10-30T10:00:00Z",  // 10-30 12:00:00 +0200
       {
           "2027-10-31T00:30:00Z",  // 10-31 02:30:00 +0200
           "2027-10-31T01:30:00Z",  // 10-31 02:30:00 +0100
           "2027-11-01T01:30:00Z",  // 11-01 02:30:00 +0100
           "2027-11-02T01:30:00Z",  // 11-02 02:30:00 +0100
       }},
      {"Berlin2027FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Europe/Berlin"),
       "2027-10-30T22:00:00Z",  // 10-31 00:00:00 +0200
       {
           "2027-10-30T23:00:00Z",  // 10-31 01:00:00 +0200
           "2027-10-31T00:00:00Z",  // 10-31 02:00:00 +0200
           "2027-10-31T01:00:00Z",  // 10-31 02:00:00 +0100
           "2027-10-31T02:00:00Z",  // 10-31 03:00:00 +0100
           "2027-10-31T03:00:00Z",  // 10-31 04:00:00 +0100
           "2027-10-31T04:00:00Z",  // 10-31 05:00:00 +0100
       }},
      {"Berlin2027FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Europe/Berlin"),
       "2027-10-30T23:00:00Z",  // 10-31 01:00:00 +0200
       {
           "2027-10-30T23:15:00Z",  // 10-31 01:15:00 +0200
           "2027-10-30T23:30:00Z",  // 10-31 01:30:00 +0200
           "2027-10-30T23:45:00Z",  // 10-31 01:45:00 +0200
           "2027-10-31T00:00:00Z",  // 10-31 02:00:00 +0200
           "2027-10-31T00:15:00Z",  // 10-31 02:15:00 +0200
           "2027-10-31T00:30:00Z",  // 10-31 02:30:00 +0200
           "2027-10-31T00:45:00Z",  // 10-31 02:45:00 +0200
           "2027-10-31T01:00:00Z",  // 10-31 02:00:00 +0100
           "2027-10-31T01:15:00Z",  // 10-31 02:15:00 +0100
           "2027-10-31T01:30:00Z",  // 10-31 02:30:00 +0100
           "2027-10-31T01:45:00Z",  // 10-31 02:45:00 +0100
           "2027-10-31T02:00:00Z",  // 10-31 03:00:00 +0100
           "2027-10-31T02:15:00Z",  // 10-31 03:15:00 +0100
           "2027-10-31T02:30:00Z",  // 10-31 03:30:00 +0100
           "2027-10-31T02:45:00Z",  // 10-31 03:45:00 +0100
           "2027-10-31T03:00:00Z",  // 10-31 04:00:00 +0100
       }},
      {"LordHowe2026SpringFixed0215InGapFiresAtTransition",
       "15 2 * * *",
       Zone("Australia/Lord_Howe"),
       "2026-10-03T01:30:00Z",  // 10-03 12:00:00 +1030
       {
           "2026-10-03T15:30:00Z",  // 10-04 02:30:00 +1100
           "2026-10-04T15:15:00Z",  // 10-05 02:15:00 +1100
           "2026-10-05T15:15:00Z",  // 10-06 02:15:00 +1100
       }},
      {"LordHowe2026SpringFixed0215InGapSkippedWithSkipPolicy",
       "15 2 * * *",
       Zone("Australia/Lord_Howe", kSkipGap),
       "2026-10-03T01:30:00Z",  // 10-03 12:00:00 +1030
       {
           "2026-10-04T15:15:00Z",  // 10-05 02:15:00 +1100
           "2026-10-05T15:15:00Z",  // 10-06 02:15:00 +1100
       }},
      {"LordHowe2026SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Australia/Lord_Howe"),
       "2026-10-03T12:30:00Z",  // 10-03 23:00:00 +1030
       {
           "2026-10-03T13:30:00Z",  // 10-04 00:00:00 +1030
           "2026-10-03T14:30:00Z",  // 10-04 01:00:00 +1030
           "2026-10-03T16:00:00Z",  // 10-04 03:00:00 +1100
           "2026-10-03T17:00:00Z",  // 10-04 04:00:00 +1100
           "2026-10-03T18:00:00Z",  // 10-04 05:00:00 +1100
           "2026-10-03T19:00:00Z",  // 10-04 06:00:00 +1100
       }},
      {"LordHowe2026SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Australia/Lord_Howe"),
       "2026-10-03T13:30:00Z",  // 10-04 00:00:00 +1030
       {
           "2026-10-03T13:45:00Z",  // 10-04 00:15:00 +1030
           "2026-10-03T14:00:00Z",  // 10-04 00:30:00 +1030
           "2026-10-03T14:15:00Z",  // 10-04 00:45:00 +1030
           "2026-10-03T14:30:00Z",  // 10-04 01:00:00 +1030
           "2026-10-03T14:45:00Z",  // 10-04 01:15:00 +1030
           "2026-10-03T15:00:00Z",  // 10-04 01:30:00 +1030
           "2026-10-03T15:15:00Z",  // 10-04 01:45:00 +1030
           "2026-10-03T15:30:00Z",  // 10-04 02:30:00 +1100
           "2026-10-03T15:45:00Z",  // 10-04 02:45:00 +1100
           "2026-10-03T16:00:00Z",  // 10-04 03:00:00 +1100
           "2026-10-03T16:15:00Z",  // 10-04 03:15:00 +1100
           "2026-10-03T16:30:00Z",  // 10-04 03:30:00 +1100
           "2026-10-03T16:45:00Z",  // 10-04 03:45:00 +1100
           "2026-10-03T17:00:00Z",  // 10-04 04:00:00 +1100
           "2026-10-03T17:15:00Z",  // 10-04 04:15:00 +1100
           "2026-10-03T17:30:00Z",  // 10-04 04:30:00 +1100
       }},
      {"LordHowe2026SpringHourlyIgnoresSkipPolicy",
       "0 * * * *",
       Zone("Australia/Lord_Howe", kSkipGap),
       "2026-10-03T12:30:00Z",  // 10-03 23:00:00 +1030
       {
           "2026-10-03T13:30:00Z",  // 10-04 00:00:00 +1030
           "2026-10-03T14:30:00Z",  // 10-04 01:00:00 +1030
           "2026-10-03T16:00:00Z",  // 10-04 03:00:00 +1100
           "2026-10-03T17:00:00Z",  // 10-04 04:00:00 +1100
           "2026-10-03T18:00:00Z",  // 10-04 05:00:00 +1100
           "2026-10-03T19:00:00Z",  // 10-04 06:00:00 +1100
       }},
      {"LordHowe2026SpringEvery15MinutesIgnoresSkipPolicy",
       "*/15 * * * *",
       Zone("Australia/Lord_Howe", kSkipGap),
       "2026-10-03T13:30:00Z",  // 10-04 00:00:00 +1030
       {
           "2026-10-03T13:45:00Z",  // 10-04 00:15:00 +1030
           "2026-10-03T14:00:00Z",  // 10-04 00:30:00 +1030
           "2026-10-03T14:15:00Z",  // 10-04 00:45:00 +1030
           "2026-10-03T14:30:00Z",  // 10-04 01:00:00 +1030
           "2026-10-03T14:45:00Z",  // 10-04 01:15:00 +1030
           "2026-10-03T15:00:00Z",  // 10-04 01:30:00 +1030
           "2026-10-03T15:15:00Z",  // 10-04 01:45:00 +1030
           "2026-10-03T15:30:00Z",  // 10-04 02:30:00 +1100
           "2026-10-03T15:45:00Z",  // 10-04 02:45:00 +1100
           "2026-10-03T16:00:00Z",  // 10-04 03:00:00 +1100
           "2026-10-03T16:15:00Z",  // 10-04 03:15:00 +1100
           "2026-10-03T16:30:00Z",  // 10-04 03:30:00 +1100
           "2026-10-03T16:45:00Z",  // 10-04 03:45:00 +1100
           "2026-10-03T17:00:00Z",  // 10-04 04:00:00 +1100
           "2026-10-03T17:15:00Z",  // 10-04 04:15:00 +1100
           "2026-10-03T17:30:00Z",  // 10-04 04:30:00 +1100
       }},
      {"LordHowe2026FallFixed0145RepeatedFiresFirstPassOnly",
       "45 1 * * *",
       Zone("Australia/Lord_Howe"),
       "2026-04-04T01:00:00Z",  // 04-04 12:00:00 +1100
       {
           "2026-04-04T14:45:00Z",  // 04-05 01:45:00 +1100
           "2026-04-05T15:15:00Z",  // 04-06 01:45:00 +1030
           "2026-04-06T15:15:00Z",  // 04-07 01:45:00 +1030
       }},
      {"LordHowe2026FallFixed0145RepeatedFiresTwiceWithTwicePolicy",
       "45 1 * * *",
       Zone("Australia/Lord_Howe", kRepeatTwice),
       "2026-04-04T01:00:00Z",  // 04-04 12:00:00 +1100
       {
           "2026-04-04T14:45:00Z",  // 04-05 01:45:00 +1100
           "2026-04-04T15:15:00Z",  // 04-05 01:45:00 +1030
           "2026-04-05T15:15:00Z",  // 04-06 01:45:00 +1030
           "2026-04-06T15:15:00Z",  // 04-07 01:45:00 +1030
       }},
      {"LordHowe2026FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Australia/Lord_Howe"),
       "2026-04-04T12:00:00Z",  // 04-04 23:00:00 +1100
       {
           "2026-04-04T13:00:00Z",  // 04-05 00:00:00 +1100
           "2026-04-04T14:00:00Z",  // 04-05 01:00:00 +1100
           "2026-04-04T15:30:00Z",  // 04-05 02:00:00 +1030
           "2026-04-04T16:30:00Z",  // 04-05 03:00:00 +1030
           "2026-04-04T17:30:00Z",  // 04-05 04:00:00 +1030
           "2026-04-04T18:30:00Z",  // 04-05 05:00:00 +1030
       }},
      {"LordHowe2026FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Australia/Lord_Howe"),
       "2026-04-04T13:00:00Z",  // 04-05 00:00:00 +1100
       {
           "2026-04-04T13:15:00Z",  // 04-05 00:15:00 +1100
           "2026-04-04T13:30:00Z",  // 04-05 00:30:00 +1100
           "2026-04-04T13:45:00Z",  // 04-05 00:45:00 +1100
           "2026-04-04T14:00:00Z",  // 04-05 01:00:00 +1100
           "2026-04-04T14:15:00Z",  // 04-05 01:15:00 +1100
           "2026-04-04T14:30:00Z",  // 04-05 01:30:00 +1100
           "2026-04-04T14:45:00Z",  // 04-05 01:45:00 +1100
           "2026-04-04T15:00:00Z",  // 04-05 01:30:00 +1030
           "2026-04-04T15:15:00Z",  // 04-05 01:45:00 +1030
           "2026-04-04T15:30:00Z",  // 04-05 02:00:00 +1030
           "2026-04-04T15:45:00Z",  // 04-05 02:15:00 +1030
           "2026-04-04T16:00:00Z",  // 04-05 02:30:00 +1030
           "2026-04-04T16:15:00Z",  // 04-05 02:45:00 +1030
           "2026-04-04T16:30:00Z",  // 04-05 03:00:00 +1030
           "2026-04-04T16:45:00Z",  // 04-05 03:15:00 +1030
           "2026-04-04T17:00:00Z",  // 04-05 03:30:00 +1030
       }},
      {"LordHowe2026FallHourlyIgnoresTwicePolicy",
       "0 * * * *",
       Zone("Australia/Lord_Howe", kRepeatTwice),
       "2026-04-04T12:00:00Z",  // 04-04 23:00:00 +1100
       {
           "2026-04-04T13:00:00Z",  // 04-05 00:00:00 +1100
           "2026-04-04T14:00:00Z",  // 04-05 01:00:00 +1100
           "2026-04-04T15:30:00Z",  // 04-05 02:00:00 +1030
           "2026-04-04T16:30:00Z",  // 04-05 03:00:00 +1030
           "2026-04-04T17:30:00Z",  // 04-05 04:00:00 +1030
           "2026-04-04T18:30:00Z",  // 04-05 05:00:00 +1030
       }},
      {"LordHowe2026FallEvery15MinutesIgnoresTwicePolicy",
       "*/15 * * * *",
       Zone("Australia/Lord_Howe", kRepeatTwice),
       "2026-04-04T13:00:00Z",  // 04-05 00:00:00 +1100
       {
           "2026-04-04T13:15:00Z",  // 04-05 00:15:00 +1100
           "2026-04-04T13:30:00Z",  // 04-05 00:30:00 +1100
           "2026-04-04T13:45:00Z",  // 04-05 00:45:00 +1100
           "2026-04-04T14:00:00Z",  // 04-05 01:00:00 +1100
           "2026-04-04T14:15:00Z",  // 04-05 01:15:00 +1100
           "2026-04-04T14:30:00Z",  // 04-05 01:30:00 +1100
           "2026-04-04T14:45:00Z",  // 04-05 01:45:00 +1100
           "2026-04-04T15:00:00Z",  // 04-05 01:30:00 +1030
           "2026-04-04T15:15:00Z",  // 04-05 01:45:00 +1030
           "2026-04-04T15:30:00Z",  // 04-05 02:00:00 +1030
           "2026-04-04T15:45:00Z",  // 04-05 02:15:00 +1030
           "2026-04-04T16:00:00Z",  // 04-05 02:30:00 +1030
           "2026-04-04T16:15:00Z",  // 04-05 02:45:00 +1030
           "2026-04-04T16:30:00Z",  // 04-05 03:00:00 +1030
           "2026-04-04T16:45:00Z",  // 04-05 03:15:00 +1030
           "2026-04-04T17:00:00Z",  // 04-05 03:30:00 +1030
       }},
      {"LordHowe2027SpringFixed0215InGapFiresAtTransition",
       "15 2 * * *",
       Zone("Australia/Lord_Howe"),
       "2027-10-02T01:30:00Z",  // 10-02 12:00:00 +1030
       {
           "2027-10-02T15:30:00Z",  // 10-03 02:30:00 +1100
           "2027-10-03T15:15:00Z",  // 10-04 02:15:00 +1100
           "2027-10-04T15:15:00Z",  // 10-05 02:15:00 +1100
       }},
      {"LordHowe2027SpringFixed0215InGapSkippedWithSkipPolicy",
       "15 2 * * *",
       Zone("Australia/Lord_Howe", kSkipGap),
       "2027-10-02T01:30:00Z",  // 10-02 12:00:00 +1030
       {
           "2027-10-03T15:15:00Z",  // 10-04 02:15:00 +1100
           "2027-10-04T15:15:00Z",  // 10-05 02:15:00 +1100
       }},
      {"LordHowe2027SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Australia/Lord_Howe"),
       "2027-10-02T12:30:00Z",  // 10-02 23:00:00 +1030
       {
           "2027-10-02T13:30:00Z",  // 10-03 00:00:00 +1030
           "2027-10-02T14:30:00Z",  // 10-03 01:00:00 +1030
           "2027-10-02T16:00:00Z",  // 10-03 03:00:00 +1100
           "2027-10-02T17:00:00Z",  // 10-03 04:00:00 +1100
           "2027-10-02T18:00:00Z",  // 10-03 05:00:00 +1100
           "2027-10-02T19:00:00Z",  // 10-03 06:00:00 +1100
       }},
      {"LordHowe2027SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Australia/Lord_Howe"),
       "2027-10-02T13:30:00Z",  // 10-03 00:00:00 +1030
       {
           "2027-10-02T13:45:00Z",  // 10-03 00:15:00 +1030
           "2027-10-02T14:00:00Z",  // 10-03 00:30:00 +1030
           "2027-10-02T14:15:00Z",  // 10-03 00:45:00 +1030
           "2027-10-02T14:30:00Z",  // 10-03 01:00:00 +1030
           "2027-10-02T14:45:00Z",  // 10-03 01:15:00 +1030
           "2027-10-02T15:00:00Z",  // 10-03 01:30:00 +1030
           "2027-10-02T15:15:00Z",  // 10-03 01:45:00 +1030
           "2027-10-02T15:30:00Z",  // 10-03 02:30:00 +1100
           "2027-10-02T15:45:00Z",  // 10-03 02:45:00 +1100
           "2027-10-02T16:00:00Z",  // 10-03 03:00:00 +1100
           "2027-10-02T16:15:00Z",  // 10-03 03:15:00 +1100
           "2027-10-02T16:30:00Z",  // 10-03 03:30:00 +1100
           "2027-10-02T16:45:00Z",  // 10-03 03:45:00 +1100
           "2027-10-02T17:00:00Z",  // 10-03 04:00:00 +1100
           "2027-10-02T17:15:00Z",  // 10-03 04:15:00 +1100
           "2027-10-02T17:30:00Z",  // 10-03 04:30:00 +1100
       }},
      {"LordHowe2027FallFixed0145RepeatedFiresFirstPassOnly",
       "45 1 * * *",
       Zone("Australia/Lord_Howe"),
       "2027-04-03T01:00:00Z",  // 04-03 12:00:00 +1100
       {
           "2027-04-03T14:45:00Z",  // 04-04 01:45:00 +1100
           "2027-04-04T15:15:00Z",  // 04-05 01:45:00 +1030
           "2027-04-05T15:15:00Z",  // 04-06 01:45:00 +1030
       }},
      {"LordHowe2027FallFixed0145RepeatedFiresTwiceWithTwicePolicy",
       "45 1 * * *",
       Zone("Australia/Lord_Howe", kRepeatTwice),
       "2027-04-03T01:00:00Z",  // 04-03 12:00:00 +1100
       {
           "2027-04-03T14:45:00Z",  // 04-04 01:45:00 +1100
           "2027-04-03T15:15:00Z",  // 04-04 01:45:00 +1030
           "2027-04-04T15:15:00Z",  // 04-05 01:45:00 +1030
           "2027-04-05T15:15:00Z",  // 04-06 01:45:00 +1030
       }},
      {"LordHowe2027FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Australia/Lord_Howe"),
       "2027-04-03T12:00:00Z",  // 04-03 23:00:00 +1100
       {
           "2027-04-03T13:00:00Z",  // 04-04 00:00:00 +1100
           "2027-04-03T14:00:00Z",  // 04-04 01:00:00 +1100
           "2027-04-03T15:30:00Z",  // 04-04 02:00:00 +1030
           "2027-04-03T16:30:00Z",  // 04-04 03:00:00 +1030
           "2027-04-03T17:30:00Z",  // 04-04 04:00:00 +1030
           "2027-04-03T18:30:00Z",  // 04-04 05:00:00 +1030
       }},
      {"LordHowe2027FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Australia/Lord_Howe"),
       "2027-04-03T13:00:00Z",  // 04-04 00:00:00 +1100
       {
           "2027-04-03T13:15:00Z",  // 04-04 00:15:00 +1100
           "2027-04-03T13:30:00Z",  // 04-04 00:30:00 +1100
           "2027-04-03T13:45:00Z",  // 04-04 00:45:00 +1100
           "2027-04-03T14:00:00Z",  // 04-04 01:00:00 +1100
           "2027-04-03T14:15:00Z",  // 04-04 01:15:00 +1100
           "2027-04-03T14:30:00Z",  // 04-04 01:30:00 +1100
           "2027-04-03T14:45:00Z",  // 04-04 01:45:00 +1100
           "2027-04-03T15:00:00Z",  // 04-04 01:30:00 +1030
           "2027-04-03T15:15:00Z",  // 04-04 01:45:00 +1030
           "2027-04-03T15:30:00Z",  // 04-04 02:00:00 +1030
           "2027-04-03T15:45:00Z",  // 04-04 02:15:00 +1030
           "2027-04-03T16:00:00Z",  // 04-04 02:30:00 +1030
           "2027-04-03T16:15:00Z",  // 04-04 02:45:00 +1030
           "2027-04-03T16:30:00Z",  // 04-04 03:00:00 +1030
           "2027-04-03T16:45:00Z",  // 04-04 03:15:00 +1030
           "2027-04-03T17:00:00Z",  // 04-04 03:30:00 +1030
       }},
      {"Chatham2026SpringFixed0300InGapFiresAtTransition",
       "0 3 * * *",
       Zone("Pacific/Chatham"),
       "2026-09-25T23:15:00Z",  // 09-26 12:00:00 +1245
       {
           "2026-09-26T14:00:00Z",  // 09-27 03:45:00 +1345
           "2026-09-27T13:15:00Z",  // 09-28 03:00:00 +1345
           "2026-09-28T13:15:00Z",  // 09-29 03:00:00 +1345
       }},
      {"Chatham2026SpringFixed0300InGapSkippedWithSkipPolicy",
       "0 3 * * *",
       Zone("Pacific/Chatham", kSkipGap),
       "2026-09-25T23:15:00Z",  // 09-26 12:00:00 +1245
       {
           "2026-09-27T13:15:00Z",  // 09-28 03:00:00 +1345
           "2026-09-28T13:15:00Z",  // 09-29 03:00:00 +1345
       }},
      {"Chatham2026SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Pacific/Chatham"),
       "2026-09-26T11:00:00Z",  // 09-26 23:45:00 +1245
       {
           "2026-09-26T11:15:00Z",  // 09-27 00:00:00 +1245
           "2026-09-26T12:15:00Z",  // 09-27 01:00:00 +1245
           "2026-09-26T13:15:00Z",  // 09-27 02:00:00 +1245
           "2026-09-26T14:15:00Z",  // 09-27 04:00:00 +1345
           "2026-09-26T15:15:00Z",  // 09-27 05:00:00 +1345
           "2026-09-26T16:15:00Z",  // 09-27 06:00:00 +1345
       }},
      {"Chatham2026SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Pacific/Chatham"),
       "2026-09-26T12:00:00Z",  // 09-27 00:45:00 +1245
       {
           "2026-09-26T12:15:00Z",  // 09-27 01:00:00 +1245
           "2026-09-26T12:30:00Z",  // 09-27 01:15:00 +1245
           "2026-09-26T12:45:00Z",  // 09-27 01:30:00 +1245
           "2026-09-26T13:00:00Z",  // 09-27 01:45:00 +1245
           "2026-09-26T13:15:00Z",  // 09-27 02:00:00 +1245
           "2026-09-26T13:30:00Z",  // 09-27 02:15:00 +1245
           "2026-09-26T13:45:00Z",  // 09-27 02:30:00 +1245
           "2026-09-26T14:00:00Z",  // 09-27 03:45:00 +1345
           "2026-09-26T14:15:00Z",  // 09-27 04:00:00 +1345
           "2026-09-26T14:30:00Z",  // 09-27 04:15:00 +1345
           "2026-09-26T14:45:00Z",  // 09-27 04:30:00 +1345
           "2026-09-26T15:00:00Z",  // 09-27 04:45:00 +1345
           "2026-09-26T15:15:00Z",  // 09-27 05:00:00 +1345
           "2026-09-26T15:30:00Z",  // 09-27 05:15:00 +1345
           "2026-09-26T15:45:00Z",  // 09-27 05:30:00 +1345
           "2026-09-26T16:00:00Z",  // 09-27 05:45:00 +1345
       }},
      {"Chatham2026SpringHourlyIgnoresSkipPolicy",
       "0 * * * *",
       Zone("Pacific/Chatham", kSkipGap),
       "2026-09-26T11:00:00Z",  // 09-26 23:45:00 +1245
       {
           "2026-09-26T11:15:00Z",  // 09-27 00:00:00 +1245
           "2026-09-26T12:15:00Z",  // 09-27 01:00:00 +1245
           "2026-09-26T13:15:00Z",  // 09-27 02:00:00 +1245
           "2026-09-26T14:15:00Z",  // 09-27 04:00:00 +1345
           "2026-09-26T15:15:00Z",  // 09-27 05:00:00 +1345
           "2026-09-26T16:15:00Z",  // 09-27 06:00:00 +1345
       }},
      {"Chatham2026SpringEvery15MinutesIgnoresSkipPolicy",
       "*/15 * * * *",
       Zone("Pacific/Chatham", kSkipGap),
       "2026-09-26T12:00:00Z",  // 09-27 00:45:00 +1245
       {
           "2026-09-26T12:15:00Z",  // 09-27 01:00:00 +1245
           "2026-09-26T12:30:00Z",  // 09-27 01:15:00 +1245
           "2026-09-26T12:45:00Z",  // 09-27 01:30:00 +1245
           "2026-09-26T13:00:00Z",  // 09-27 01:45:00 +1245
           "2026-09-26T13:15:00Z",  // 09-27 02:00:00 +1245
           "2026-09-26T13:30:00Z",  // 09-27 02:15:00 +1245
           "2026-09-26T13:45:00Z",  // 09-27 02:30:00 +1245
           "2026-09-26T14:00:00Z",  // 09-27 03:45:00 +1345
           "2026-09-26T14:15:00Z",  // 09-27 04:00:00 +1345
           "2026-09-26T14:30:00Z",  // 09-27 04:15:00 +1345
           "2026-09-26T14:45:00Z",  // 09-27 04:30:00 +1345
           "2026-09-26T15:00:00Z",  // 09-27 04:45:00 +1345
           "2026-09-26T15:15:00Z",  // 09-27 05:00:00 +1345
           "2026-09-26T15:30:00Z",  // 09-27 05:15:00 +1345
           "2026-09-26T15:45:00Z",  // 09-27 05:30:00 +1345
           "2026-09-26T16:00:00Z",  // 09-27 05:45:00 +1345
       }},
      {"Chatham2026FallFixed0300RepeatedFiresFirstPassOnly",
       "0 3 * * *",
       Zone("Pacific/Chatham"),
       "2026-04-03T22:15:00Z",  // 04-04 12:00:00 +1345
       {
           "2026-04-04T13:15:00Z",  // 04-05 03:00:00 +1345
           "2026-04-05T14:15:00Z",  // 04-06 03:00:00 +1245
           "2026-04-06T14:15:00Z",  // 04-07 03:00:00 +1245
       }},
      {"Chatham2026FallFixed0300RepeatedFiresTwiceWithTwicePolicy",
       "0 3 * * *",
       Zone("Pacific/Chatham", kRepeatTwice),
       "2026-04-03T22:15:00Z",  // 04-04 12:00:00 +1345
       {
           "2026-04-04T13:15:00Z",  // 04-05 03:00:00 +1345
           "2026-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2026-04-05T14:15:00Z",  // 04-06 03:00:00 +1245
           "2026-04-06T14:15:00Z",  // 04-07 03:00:00 +1245
       }},
      {"Chatham2026FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Pacific/Chatham"),
       "2026-04-04T11:00:00Z",  // 04-05 00:45:00 +1345
       {
           "2026-04-04T11:15:00Z",  // 04-05 01:00:00 +1345
           "2026-04-04T12:15:00Z",  // 04-05 02:00:00 +1345
           "2026-04-04T13:15:00Z",  // 04-05 03:00:00 +1345
           "2026-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2026-04-04T15:15:00Z",  // 04-05 04:00:00 +1245
           "2026-04-04T16:15:00Z",  // 04-05 05:00:00 +1245
       }},
      {"Chatham2026FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Pacific/Chatham"),
       "2026-04-04T12:00:00Z",  // 04-05 01:45:00 +1345
       {
           "2026-04-04T12:15:00Z",  // 04-05 02:00:00 +1345
           "2026-04-04T12:30:00Z",  // 04-05 02:15:00 +1345
           "2026-04-04T12:45:00Z",  // 04-05 02:30:00 +1345
           "2026-04-04T13:00:00Z",  // 04-05 02:45:00 +1345
           "2026-04-04T13:15:00Z",  // 04-05 03:00:00 +1345
           "2026-04-04T13:30:00Z",  // 04-05 03:15:00 +1345
           "2026-04-04T13:45:00Z",  // 04-05 03:30:00 +1345
           "2026-04-04T14:00:00Z",  // 04-05 02:45:00 +1245
           "2026-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2026-04-04T14:30:00Z",  // 04-05 03:15:00 +1245
           "2026-04-04T14:45:00Z",  // 04-05 03:30:00 +1245
           "2026-04-04T15:00:00Z",  // 04-05 03:45:00 +1245
           "2026-04-04T15:15:00Z",  // 04-05 04:00:00 +1245
           "2026-04-04T15:30:00Z",  // 04-05 04:15:00 +1245
           "2026-04-04T15:45:00Z",  // 04-05 04:30:00 +1245
           "2026-04-04T16:00:00Z",  // 04-05 04:45:00 +1245
       }},
      {"Chatham2026FallHourlyIgnoresTwicePolicy",
       "0 * * * *",
       Zone("Pacific/Chatham", kRepeatTwice),
       "2026-04-04T11:00:00Z",  // 04-05 00:45:00 +1345
       {
           "2026-04-04T11:15:00Z",  // 04-05 01:00:00 +1345
           "2026-04-04T12:15:00Z",  // 04-05 02:00:00 +1345
           "2026-04-04T13:15:00Z",  // 04-05 03:00:00 +1345
           "2026-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2026-04-04T15:15:00Z",  // 04-05 04:00:00 +1245
           "2026-04-04T16:15:00Z",  // 04-05 05:00:00 +1245
       }},
      {"Chatham2026FallEvery15MinutesIgnoresTwicePolicy",
       "*/15 * * * *",
       Zone("Pacific/Chatham", kRepeatTwice),
       "2026-04-04T12:00:00Z",  // 04-05 01:45:00 +1345
       {
           "2026-04-04T12:15:00Z",  // 04-05 02:00:00 +1345
           "2026-04-04T12:30:00Z",  // 04-05 02:15:00 +1345
           "2026-04-04T12:45:00Z",  // 04-05 02:30:00 +1345
           "2026-04-04T13:00:00Z",  // 04-05 02:45:00 +1345
           "2026-04-04T13:15:00Z",  // 04-05 03:00:00 +1345
           "2026-04-04T13:30:00Z",  // 04-05 03:15:00 +1345
           "2026-04-04T13:45:00Z",  // 04-05 03:30:00 +1345
           "2026-04-04T14:00:00Z",  // 04-05 02:45:00 +1245
           "2026-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2026-04-04T14:30:00Z",  // 04-05 03:15:00 +1245
           "2026-04-04T14:45:00Z",  // 04-05 03:30:00 +1245
           "2026-04-04T15:00:00Z",  // 04-05 03:45:00 +1245
           "2026-04-04T15:15:00Z",  // 04-05 04:00:00 +1245
           "2026-04-04T15:30:00Z",  // 04-05 04:15:00 +1245
           "2026-04-04T15:45:00Z",  // 04-05 04:30:00 +1245
           "2026-04-04T16:00:00Z",  // 04-05 04:45:00 +1245
       }},
      {"Chatham2027SpringFixed0300InGapFiresAtTransition",
       "0 3 * * *",
       Zone("Pacific/Chatham"),
       "2027-09-24T23:15:00Z",  // 09-25 12:00:00 +1245
       {
           "2027-09-25T14:00:00Z",  // 09-26 03:45:00 +1345
           "2027-09-26T13:15:00Z",  // 09-27 03:00:00 +1345
           "2027-09-27T13:15:00Z",  // 09-28 03:00:00 +1345
       }},
      {"Chatham2027SpringFixed0300InGapSkippedWithSkipPolicy",
       "0 3 * * *",
       Zone("Pacific/Chatham", kSkipGap),
       "2027-09-24T23:15:00Z",  // 09-25 12:00:00 +1245
       {
           "2027-09-26T13:15:00Z",  // 09-27 03:00:00 +1345
           "2027-09-27T13:15:00Z",  // 09-28 03:00:00 +1345
       }},
      {"Chatham2027SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Pacific/Chatham"),
       "2027-09-25T11:00:00Z",  // 09-25 23:45:00 +1245
       {
           "2027-09-25T11:15:00Z",  // 09-26 00:00:00 +1245
           "2027-09-25T12:15:00Z",  // 09-26 01:00:00 +1245
           "2027-09-25T13:15:00Z",  // 09-26 02:00:00 +1245
           "2027-09-25T14:15:00Z",  // 09-26 04:00:00 +1345
           "2027-09-25T15:15:00Z",  // 09-26 05:00:00 +1345
           "2027-09-25T16:15:00Z",  // 09-26 06:00:00 +1345
       }},
      {"Chatham2027SpringEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Pacific/Chatham"),
       "2027-09-25T12:00:00Z",  // 09-26 00:45:00 +1245
       {
           "2027-09-25T12:15:00Z",  // 09-26 01:00:00 +1245
           "2027-09-25T12:30:00Z",  // 09-26 01:15:00 +1245
           "2027-09-25T12:45:00Z",  // 09-26 01:30:00 +1245
           "2027-09-25T13:00:00Z",  // 09-26 01:45:00 +1245
           "2027-09-25T13:15:00Z",  // 09-26 02:00:00 +1245
           "2027-09-25T13:30:00Z",  // 09-26 02:15:00 +1245
           "2027-09-25T13:45:00Z",  // 09-26 02:30:00 +1245
           "2027-09-25T14:00:00Z",  // 09-26 03:45:00 +1345
           "2027-09-25T14:15:00Z",  // 09-26 04:00:00 +1345
           "2027-09-25T14:30:00Z",  // 09-26 04:15:00 +1345
           "2027-09-25T14:45:00Z",  // 09-26 04:30:00 +1345
           "2027-09-25T15:00:00Z",  // 09-26 04:45:00 +1345
           "2027-09-25T15:15:00Z",  // 09-26 05:00:00 +1345
           "2027-09-25T15:30:00Z",  // 09-26 05:15:00 +1345
           "2027-09-25T15:45:00Z",  // 09-26 05:30:00 +1345
           "2027-09-25T16:00:00Z",  // 09-26 05:45:00 +1345
       }},
      {"Chatham2027FallFixed0300RepeatedFiresFirstPassOnly",
       "0 3 * * *",
       Zone("Pacific/Chatham"),
       "2027-04-02T22:15:00Z",  // 04-03 12:00:00 +1345
       {
           "2027-04-03T13:15:00Z",  // 04-04 03:00:00 +1345
           "2027-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2027-04-05T14:15:00Z",  // 04-06 03:00:00 +1245
       }},
      {"Chatham2027FallFixed0300RepeatedFiresTwiceWithTwicePolicy",
       "0 3 * * *",
       Zone("Pacific/Chatham", kRepeatTwice),
       "2027-04-02T22:15:00Z",  // 04-03 12:00:00 +1345
       {
           "2027-04-03T13:15:00Z",  // 04-04 03:00:00 +1345
           "2027-04-03T14:15:00Z",  // 04-04 03:00:00 +1245
           "2027-04-04T14:15:00Z",  // 04-05 03:00:00 +1245
           "2027-04-05T14:15:00Z",  // 04-06 03:00:00 +1245
       }},
      {"Chatham2027FallHourlyRunsInRealTime",
       "0 * * * *",
       Zone("Pacific/Chatham"),
       "2027-04-03T11:00:00Z",  // 04-04 00:45:00 +1345
       {
           "2027-04-03T11:15:00Z",  // 04-04 01:00:00 +1345
           "2027-04-03T12:15:00Z",  // 04-04 02:00:00 +1345
           "2027-04-03T13:15:00Z",  // 04-04 03:00:00 +1345
           "2027-04-03T14:15:00Z",  // 04-04 03:00:00 +1245
           "2027-04-03T15:15:00Z",  // 04-04 04:00:00 +1245
           "2027-04-03T16:15:00Z",  // 04-04 05:00:00 +1245
       }},
      {"Chatham2027FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Pacific/Chatham"),
       "2027-04-03T12:00:00Z",  // 04-04 01:45:00 +1345
       {
           "2027-04-03T12:15:00Z",  // 04-04 02:00:00 +1345
           "2027-04-03T12:30:00Z",  // 04-04 02:15:00 +1345
           "2027-04-03T12:45:00Z",  // 04-04 02:30:00 +1345
           "2027-04-03T13:00:00Z",  // 04-04 02:45:00 +1345
           "2027-04-03T13:15:00Z",  // 04-04 03:00:00 +1345
           "2027-04-03T13:30:00Z",  // 04-04 03:15:00 +1345
           "2027-04-03T13:45:00Z",  // 04-04 03:30:00 +1345
           "2027-04-03T14:00:00Z",  // 04-04 02:45:00 +1245
           "2027-04-03T14:15:00Z",  // 04-04 03:00:00 +1245
           "2027-04-03T14:30:00Z",  // 04-04 03:15:00 +1245
           "2027-04-03T14:45:00Z",  // 04-04 03:30:00 +1245
           "2027-04-03T15:00:00Z",  // 04-04 03:45:00 +1245
           "2027-04-03T15:15:00Z",  // 04-04 04:00:00 +1245
           "2027-04-03T15:30:00Z",  // 04-04 04:15:00 +1245
           "2027-04-03T15:45:00Z",  // 04-04 04:30:00 +1245
           "2027-04-03T16:00:00Z",  // 04-04 04:45:00 +1245
       }},
      {"NewYork2026SpringFixedFromOneSecondBeforeTransition",
       "30 2 * * *",
       Zone("America/New_York"),
       "2026-03-08T06:59:59Z",  // 03-08 01:59:59 -0500
       {
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-09T06:30:00Z",  // 03-09 02:30:00 -0400
       }},
      {"NewYork2026SpringFixedFromHalfASecondBeforeTransition",
       "30 2 * * *",
       Zone("America/New_York"),
       "2026-03-08T06:59:59.5Z",  // 03-08 01:59:59 -0500
       {
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-09T06:30:00Z",  // 03-09 02:30:00 -0400
       }},
      {"Berlin2026SpringFixedFromOneSecondBeforeTransition",
       "30 2 * * *",
       Zone("Europe/Berlin"),
       "2026-03-29T00:59:59Z",  // 03-29 01:59:59 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
       }},
      {"LordHowe2026SpringFixedFromOneSecondBeforeTransition",
       "15 2 * * *",
       Zone("Australia/Lord_Howe"),
       "2026-10-03T15:29:59Z",  // 10-04 01:59:59 +1030
       {
           "2026-10-03T15:30:00Z",  // 10-04 02:30:00 +1100
           "2026-10-04T15:15:00Z",  // 10-05 02:15:00 +1100
       }},
      {"Chatham2026SpringFixedFromOneSecondBeforeTransition",
       "0 3 * * *",
       Zone("Pacific/Chatham"),
       "2026-09-26T13:59:59Z",  // 09-27 02:44:59 +1245
       {
           "2026-09-26T14:00:00Z",  // 09-27 03:45:00 +1345
           "2026-09-27T13:15:00Z",  // 09-28 03:00:00 +1345
       }},
      {"NewYork2026SpringFixedFromTheTransitionInstant",
       "30 2 * * *",
       Zone("America/New_York"),
       "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
       {
           "2026-03-09T06:30:00Z",  // 03-09 02:30:00 -0400
           "2026-03-10T06:30:00Z",  // 03-10 02:30:00 -0400
       }},
      {"NewYork2026FallFixedFromInsideSecondPassSkipsRepeat",
       "30 1 * * *",
       Zone("America/New_York"),
       "2026-11-01T06:15:00Z",  // 11-01 01:15:00 -0500
       {
           "2026-11-02T06:30:00Z",  // 11-02 01:30:00 -0500
           "2026-11-03T06:30:00Z",  // 11-03 01:30:00 -0500
       }},
      {"NewYork2026FallFixedFromInsideFirstPass",
       "30 1 * * *",
       Zone("America/New_York"),
       "2026-11-01T05:15:00Z",  // 11-01 01:15:00 -0400
       {
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-02T06:30:00Z",  // 11-02 01:30:00 -0500
       }},
      {"NewYork2026FallFixedFromBetweenPassesWithTwicePolicy",
       "30 1 * * *",
       Zone("America/New_York", kRepeatTwice),
       "2026-11-01T05:45:00Z",  // 11-01 01:45:00 -0400
       {
           "2026-11-01T06:30:00Z",  // 11-01 01:30:00 -0500
           "2026-11-02T06:30:00Z",  // 11-02 01:30:00 -0500
       }},
      {"NewYork2026FallFixedHourRangeFiresRepeatedHourOnce",
       "0 0-4 * * *",
       Zone("America/New_York"),
       "2026-11-01T03:00:00Z",  // 10-31 23:00:00 -0400
       {
           "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T07:00:00Z",  // 11-01 02:00:00 -0500
           "2026-11-01T08:00:00Z",  // 11-01 03:00:00 -0500
           "2026-11-01T09:00:00Z",  // 11-01 04:00:00 -0500
       }},
      {"NewYork2026FallFixedHourRangeWithTwicePolicy",
       "0 0-4 * * *",
       Zone("America/New_York", kRepeatTwice),
       "2026-11-01T03:00:00Z",  // 10-31 23:00:00 -0400
       {
           "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T06:00:00Z",  // 11-01 01:00:00 -0500
           "2026-11-01T07:00:00Z",  // 11-01 02:00:00 -0500
           "2026-11-01T08:00:00Z",  // 11-01 03:00:00 -0500
           "2026-11-01T09:00:00Z",  // 11-01 04:00:00 -0500
       }},
      {"NewYork2026FallEvery15MinutesOfFixedHourOnce",
       "*/15 1 * * *",
       Zone("America/New_York"),
       "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
       {
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T05:15:00Z",  // 11-01 01:15:00 -0400
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-01T05:45:00Z",  // 11-01 01:45:00 -0400
           "2026-11-02T06:00:00Z",  // 11-02 01:00:00 -0500
       }},
      {"NewYork2026FallEvery15MinutesOfFixedHourTwice",
       "*/15 1 * * *",
       Zone("America/New_York", kRepeatTwice),
       "2026-11-01T04:00:00Z",  // 11-01 00:00:00 -0400
       {
           "2026-11-01T05:00:00Z",  // 11-01 01:00:00 -0400
           "2026-11-01T05:15:00Z",  // 11-01 01:15:00 -0400
           "2026-11-01T05:30:00Z",  // 11-01 01:30:00 -0400
           "2026-11-01T05:45:00Z",  // 11-01 01:45:00 -0400
           "2026-11-01T06:00:00Z",  // 11-01 01:00:00 -0500
           "2026-11-01T06:15:00Z",  // 11-01 01:15:00 -0500
           "2026-11-01T06:30:00Z",  // 11-01 01:30:00 -0500
           "2026-11-01T06:45:00Z",  // 11-01 01:45:00 -0500
           "2026-11-02T06:00:00Z",  // 11-02 01:00:00 -0500
       }},
      {"NewYork2026SpringEvery15MinutesOfFixedHourFiresOnceAtTransition",
       "*/15 2 * * *",
       Zone("America/New_York"),
       "2026-03-08T05:00:00Z",  // 03-08 00:00:00 -0500
       {
           "2026-03-08T07:00:00Z",  // 03-08 03:00:00 -0400
           "2026-03-09T06:00:00Z",  // 03-09 02:00:00 -0400
           "2026-03-09T06:15:00Z",  // 03-09 02:15:00 -0400
       }},
      {"NewYork2026SpringEvery15MinutesOfFixedHourSkipped",
       "*/15 2 * * *",
       Zone("America/New_York", kSkipGap),
       "2026-03-08T05:00:00Z",  // 03-08 00:00:00 -0500
       {
           "2026-03-09T06:00:00Z",  // 03-09 02:00:00 -0400
           "2026-03-09T06:15:00Z",  // 03-09 02:15:00 -0400
           "2026-03-09T06:30:00Z",  // 03-09 02:30:00 -0400
       }},
      {"Berlin2026SpringGapAndAfterGapFireOnceAtTransition",
       "0,30 2,3 * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T23:00:00Z",  // 03-29 00:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-29T01:30:00Z",  // 03-29 03:30:00 +0200
           "2026-03-30T00:00:00Z",  // 03-30 02:00:00 +0200
           "2026-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
       }},
      {"Berlin2026SpringGapSkippedAfterGapStillFires",
       "0,30 2,3 * * *",
       Zone("Europe/Berlin", kSkipGap),
       "2026-03-28T23:00:00Z",  // 03-29 00:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-29T01:30:00Z",  // 03-29 03:30:00 +0200
           "2026-03-30T00:00:00Z",  // 03-30 02:00:00 +0200
           "2026-03-30T00:30:00Z",  // 03-30 02:30:00 +0200
       }},
      {"Berlin2026SpringAtGapStartFiresAtTransition",
       "0 2 * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T12:00:00Z",  // 03-28 13:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-30T00:00:00Z",  // 03-30 02:00:00 +0200
       }},
      {"Berlin2026SpringAtGapEndIsAnOrdinaryTime",
       "0 3 * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T12:00:00Z",  // 03-28 13:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-30T01:00:00Z",  // 03-30 03:00:00 +0200
           "2026-03-31T01:00:00Z",  // 03-31 03:00:00 +0200
       }},
      {"Berlin2026SpringWithSecondsFieldFiresAtTransition",
       "30 15 2 * * *",
       Zone("Europe/Berlin"),
       "2026-03-28T12:00:00Z",  // 03-28 13:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-03-30T00:15:30Z",  // 03-30 02:15:30 +0200
           "2026-03-31T00:15:30Z",  // 03-31 02:15:30 +0200
       }},
      {"Berlin2026SpringSundayOnlyFiresAtTransitionThenWeekly",
       "30 2 * * SUN",
       Zone("Europe/Berlin"),
       "2026-03-22T12:00:00Z",  // 03-22 13:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2026-04-05T00:30:00Z",  // 04-05 02:30:00 +0200
           "2026-04-12T00:30:00Z",  // 04-12 02:30:00 +0200
       }},
      {"Berlin2026SpringYearlyDateOnTransitionDay",
       "30 2 29 3 *",
       Zone("Europe/Berlin"),
       "2026-01-01T00:00:00Z",  // 01-01 01:00:00 +0100
       {
           "2026-03-29T01:00:00Z",  // 03-29 03:00:00 +0200
           "2027-03-29T00:30:00Z",  // 03-29 02:30:00 +0200
           "2028-03-29T00:30:00Z",  // 03-29 02:30:00 +0200
       }},
      {"Berlin2026FallEveryTwoHoursRunsInRealTime",
       "0 */2 * * *",
       Zone("Europe/Berlin"),
       "2026-10-24T21:00:00Z",  // 10-24 23:00:00 +0200
       {
           "2026-10-24T22:00:00Z",  // 10-25 00:00:00 +0200
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T01:00:00Z",  // 10-25 02:00:00 +0100
           "2026-10-25T03:00:00Z",  // 10-25 04:00:00 +0100
           "2026-10-25T05:00:00Z",  // 10-25 06:00:00 +0100
       }},
      {"Berlin2026FallEveryTenMinutesOfRepeatedHourOnce",
       "*/10 2 * * *",
       Zone("Europe/Berlin"),
       "2026-10-24T23:58:00Z",  // 10-25 01:58:00 +0200
       {
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T00:10:00Z",  // 10-25 02:10:00 +0200
           "2026-10-25T00:20:00Z",  // 10-25 02:20:00 +0200
           "2026-10-25T00:30:00Z",  // 10-25 02:30:00 +0200
           "2026-10-25T00:40:00Z",  // 10-25 02:40:00 +0200
           "2026-10-25T00:50:00Z",  // 10-25 02:50:00 +0200
           "2026-10-26T01:00:00Z",  // 10-26 02:00:00 +0100
           "2026-10-26T01:10:00Z",  // 10-26 02:10:00 +0100
       }},
      {"Berlin2026FallEveryTenMinutesOfRepeatedHourTwice",
       "*/10 2 * * *",
       Zone("Europe/Berlin", kRepeatTwice),
       "2026-10-24T23:58:00Z",  // 10-25 01:58:00 +0200
       {
           "2026-10-25T00:00:00Z",  // 10-25 02:00:00 +0200
           "2026-10-25T00:10:00Z",  // 10-25 02:10:00 +0200
           "2026-10-25T00:20:00Z",  // 10-25 02:20:00 +0200
           "2026-10-25T00:30:00Z",  // 10-25 02:30:00 +0200
           "2026-10-25T00:40:00Z",  // 10-25 02:40:00 +0200
           "2026-10-25T00:50:00Z",  // 10-25 02:50:00 +0200
           "2026-10-25T01:00:00Z",  // 10-25 02:00:00 +0100
           "2026-10-25T01:10:00Z",  // 10-25 02:10:00 +0100
           "2026-10-25T01:20:00Z",  // 10-25 02:20:00 +0100
           "2026-10-25T01:30:00Z",  // 10-25 02:30:00 +0100
           "2026-10-25T01:40:00Z",  // 10-25 02:40:00 +0100
           "2026-10-25T01:50:00Z",  // 10-25 02:50:00 +0100
           "2026-10-26T01:00:00Z",  // 10-26 02:00:00 +0100
           "2026-10-26T01:10:00Z",  // 10-26 02:10:00 +0100
       }},
      {"LordHowe2026SpringHalfHourAfterGapIsOrdinary",
       "30 2 * * *",
       Zone("Australia/Lord_Howe"),
       "2026-10-02T12:00:00Z",  // 10-02 22:30:00 +1030
       {
           "2026-10-02T16:00:00Z",  // 10-03 02:30:00 +1030
           "2026-10-03T15:30:00Z",  // 10-04 02:30:00 +1100
           "2026-10-04T15:30:00Z",  // 10-05 02:30:00 +1100
       }},
      {"LordHowe2026FallHalfHourlyRunsInRealTime",
       "*/30 * * * *",
       Zone("Australia/Lord_Howe"),
       "2026-04-04T13:00:00Z",  // 04-05 00:00:00 +1100
       {
           "2026-04-04T13:30:00Z",  // 04-05 00:30:00 +1100
           "2026-04-04T14:00:00Z",  // 04-05 01:00:00 +1100
           "2026-04-04T14:30:00Z",  // 04-05 01:30:00 +1100
           "2026-04-04T15:00:00Z",  // 04-05 01:30:00 +1030
           "2026-04-04T15:30:00Z",  // 04-05 02:00:00 +1030
           "2026-04-04T16:00:00Z",  // 04-05 02:30:00 +1030
           "2026-04-04T16:30:00Z",  // 04-05 03:00:00 +1030
           "2026-04-04T17:00:00Z",  // 04-05 03:30:00 +1030
       }},
      {"LordHowe2026SpringHalfHourlyRunsInRealTime",
       "*/30 * * * *",
       Zone("Australia/Lord_Howe"),
       "2026-10-03T14:00:00Z",  // 10-04 00:30:00 +1030
       {
           "2026-10-03T14:30:00Z",  // 10-04 01:00:00 +1030
           "2026-10-03T15:00:00Z",  // 10-04 01:30:00 +1030
           "2026-10-03T15:30:00Z",  // 10-04 02:30:00 +1100
           "2026-10-03T16:00:00Z",  // 10-04 03:00:00 +1100
           "2026-10-03T16:30:00Z",  // 10-04 03:30:00 +1100
           "2026-10-03T17:00:00Z",  // 10-04 04:00:00 +1100
       }},
      {"NewYork2038SpringAfterTheInt32EpochFiresAtTransition",
       "30 2 * * *",
       Zone("America/New_York"),
       "2038-03-13T12:00:00Z",  // 03-13 07:00:00 -0500
       {
           "2038-03-14T07:00:00Z",  // 03-14 03:00:00 -0400
           "2038-03-15T06:30:00Z",  // 03-15 02:30:00 -0400
       }},
      {"Berlin2399FallRepeatedFiresOnce",
       "30 2 * * *",
       Zone("Europe/Berlin"),
       "2399-10-29T12:00:00Z",  // 10-29 14:00:00 +0200
       {
           "2399-10-30T00:30:00Z",  // 10-30 02:30:00 +0200
           "2399-10-31T00:30:00Z",  // 10-31 02:30:00 +0200
           "2399-11-01T01:30:00Z",  // 11-01 02:30:00 +0100
       }},
      {"Berlin2399FallEvery15MinutesRunsInRealTime",
       "*/15 * * * *",
       Zone("Europe/Berlin"),
       "2399-10-30T23:30:00Z",  // 10-31 01:30:00 +0200
       {
           "2399-10-30T23:45:00Z",  // 10-31 01:45:00 +0200
           "2399-10-31T00:00:00Z",  // 10-31 02:00:00 +0200
           "2399-10-31T00:15:00Z",  // 10-31 02:15:00 +0200
           "2399-10-31T00:30:00Z",  // 10-31 02:30:00 +0200
           "2399-10-31T00:45:00Z",  // 10-31 02:45:00 +0200
           "2399-10-31T01:00:00Z",  // 10-31 02:00:00 +0100
           "2399-10-31T01:15:00Z",  // 10-31 02:15:00 +0100
           "2399-10-31T01:30:00Z",  // 10-31 02:30:00 +0100
       }},
      {"Santiago2026SpringMidnightDoesNotExistDailyFiresAtTransition",
       "@daily",
       Zone("America/Santiago"),
       "2026-09-04T12:00:00Z",  // 09-04 08:00:00 -0400
       {
           "2026-09-05T04:00:00Z",  // 09-05 00:00:00 -0400
           "2026-09-06T04:00:00Z",  // 09-06 01:00:00 -0300
           "2026-09-07T03:00:00Z",  // 09-07 00:00:00 -0300
       }},
      {"Santiago2026SpringMidnightDoesNotExistSkipped",
       "0 0 * * *",
       Zone("America/Santiago", kSkipGap),
       "2026-09-04T12:00:00Z",  // 09-04 08:00:00 -0400
       {
           "2026-09-05T04:00:00Z",  // 09-05 00:00:00 -0400
           "2026-09-07T03:00:00Z",  // 09-07 00:00:00 -0300
       }},
      {"Santiago2026SpringHourlyRunsInRealTime",
       "0 * * * *",
       Zone("America/Santiago"),
       "2026-09-06T01:00:00Z",  // 09-05 21:00:00 -0400
       {
           "2026-09-06T02:00:00Z",  // 09-05 22:00:00 -0400
           "2026-09-06T03:00:00Z",  // 09-05 23:00:00 -0400
           "2026-09-06T04:00:00Z",  // 09-06 01:00:00 -0300
           "2026-09-06T05:00:00Z",  // 09-06 02:00:00 -0300
           "2026-09-06T06:00:00Z",  // 09-06 03:00:00 -0300
           "2026-09-06T07:00:00Z",  // 09-06 04:00:00 -0300
       }},
      {"Santiago2026FallElevenPmRepeatedFiresOnce",
       "0 23 * * *",
       Zone("America/Santiago"),
       "2026-04-03T12:00:00Z",  // 04-03 09:00:00 -0300
       {
           "2026-04-04T02:00:00Z",  // 04-03 23:00:00 -0300
           "2026-04-05T02:00:00Z",  // 04-04 23:00:00 -0300
           "2026-04-06T03:00:00Z",  // 04-05 23:00:00 -0400
       }},
      {"Santiago2026FallElevenPmRepeatedFiresTwice",
       "0 23 * * *",
       Zone("America/Santiago", kRepeatTwice),
       "2026-04-03T12:00:00Z",  // 04-03 09:00:00 -0300
       {
           "2026-04-04T02:00:00Z",  // 04-03 23:00:00 -0300
           "2026-04-05T02:00:00Z",  // 04-04 23:00:00 -0300
           "2026-04-05T03:00:00Z",  // 04-04 23:00:00 -0400
           "2026-04-06T03:00:00Z",  // 04-05 23:00:00 -0400
       }},
      {"Santiago2026FallMidnightAfterRepeatedHourFiresOnce",
       "0 0 * * *",
       Zone("America/Santiago"),
       "2026-04-03T12:00:00Z",  // 04-03 09:00:00 -0300
       {
           "2026-04-04T03:00:00Z",  // 04-04 00:00:00 -0300
           "2026-04-05T04:00:00Z",  // 04-05 00:00:00 -0400
           "2026-04-06T04:00:00Z",  // 04-06 00:00:00 -0400
       }},
      {"Chatham2026SpringQuarterPastTwoIsBeforeGap",
       "15 2 * * *",
       Zone("Pacific/Chatham"),
       "2026-09-25T12:00:00Z",  // 09-26 00:45:00 +1245
       {
           "2026-09-25T13:30:00Z",  // 09-26 02:15:00 +1245
           "2026-09-26T13:30:00Z",  // 09-27 02:15:00 +1245
           "2026-09-27T12:30:00Z",  // 09-28 02:15:00 +1345
       }},
      {"Chatham2026FallFortyFivePastTwoRepeatedOnce",
       "45 2 * * *",
       Zone("Pacific/Chatham"),
       "2026-04-03T12:00:00Z",  // 04-04 01:45:00 +1345
       {
           "2026-04-03T13:00:00Z",  // 04-04 02:45:00 +1345
           "2026-04-04T13:00:00Z",  // 04-05 02:45:00 +1345
           "2026-04-05T14:00:00Z",  // 04-06 02:45:00 +1245
       }},
      {"Chatham2026FallFortyFivePastTwoTwice",
       "45 2 * * *",
       Zone("Pacific/Chatham", kRepeatTwice),
       "2026-04-03T12:00:00Z",  // 04-04 01:45:00 +1345
       {
           "2026-04-03T13:00:00Z",  // 04-04 02:45:00 +1345
           "2026-04-04T13:00:00Z",  // 04-05 02:45:00 +1345
           "2026-04-04T14:00:00Z",  // 04-05 02:45:00 +1245
           "2026-04-05T14:00:00Z",  // 04-06 02:45:00 +1245
       }},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(DaylightSaving, CronSequence,
                         ::testing::ValuesIn(DstCases()), CaseName);

struct TransitionCase {
  const char* zone;
  const char* at;      // first instant with the new offset
  int minutes_before;  // offset east of UTC
  int minutes_after;
};

TEST(CronDst, ZoneTransitionsAreTheOnesTheTablesAssume) {
  const TransitionCase kTransitions[] = {
      {"America/New_York", "2026-03-08T07:00:00Z", -300, -240},
      {"America/New_York", "2026-11-01T06:00:00Z", -240, -300},
      {"America/New_York", "2027-03-14T07:00:00Z", -300, -240},
      {"America/New_York", "2027-11-07T06:00:00Z", -240, -300},
      {"Europe/Berlin", "2026-03-29T01:00:00Z", 60, 120},
      {"Europe/Berlin", "2026-10-25T01:00:00Z", 120, 60},
      {"Europe/Berlin", "2027-03-28T01:00:00Z", 60, 120},
      {"Europe/Berlin", "2027-10-31T01:00:00Z", 120, 60},
      {"Australia/Lord_Howe", "2026-04-04T15:00:00Z", 660, 630},
      {"Australia/Lord_Howe", "2026-10-03T15:30:00Z", 630, 660},
      {"Australia/Lord_Howe", "2027-04-03T15:00:00Z", 660, 630},
      {"Australia/Lord_Howe", "2027-10-02T15:30:00Z", 630, 660},
      {"Pacific/Chatham", "2026-04-04T14:00:00Z", 825, 765},
      {"Pacific/Chatham", "2026-09-26T14:00:00Z", 765, 825},
      {"Pacific/Chatham", "2027-04-03T14:00:00Z", 825, 765},
      {"Pacific/Chatham", "2027-09-25T14:00:00Z", 765, 825},
  };
  for (const char* zone : {"America/New_York", "Europe/Berlin",
                           "Australia/Lord_Howe", "Pacific/Chatham"}) {
    Schedule s = MustParse("0 0 * * *", Zone(zone));
    std::vector<std::string> got, want;
    for (const OffsetChange& c : s.OffsetChangesBetween(
             T("2026-01-01T00:00:00Z"), T("2028-01-01T00:00:00Z"))) {
      got.push_back(absl::StrCat(Rfc(c.at), " ",
                                 absl::ToInt64Minutes(c.offset_before), " -> ",
                                 absl::ToInt64Minutes(c.offset_after)));
    }
    for (const TransitionCase& t : kTransitions) {
      if (absl::string_view(t.zone) != zone) continue;
      want.push_back(
          absl::StrCat(t.at, " ", t.minutes_before, " -> ", t.minutes_after));
    }
    EXPECT_THAT(got, ElementsAreArray(want)) << zone;
  }
}

TEST(CronDst, MatchesIgnoresDaylightSaving) {
  // 02:30 on 2026-03-29 never happens in Berlin, but it matches the fields.
  Schedule s = MustParse("30 2 * * *", Zone("Europe/Berlin"));
  EXPECT_TRUE(s.Matches(absl::CivilSecond(2026, 3, 29, 2, 30, 0)));
  EXPECT_FALSE(s.Matches(absl::CivilSecond(2026, 3, 29, 3, 0, 0)));
  EXPECT_FALSE(s.Matches(absl::CivilSecond(2026, 3, 29, 2, 30, 1)));
}

TEST(CronDst, FixedHoursAreThoseNotWrittenWithAStar) {
  struct Row {
    const char* expr;
    bool wildcard;
  };
  const Row kRows[] = {
      {"*/15 * * * *", true},  {"0 * * * *", true},     {"0 */2 * * *", true},
      {"@hourly", true},       {"0 0 * * * *", true},   {"30 2 * * *", false},
      {"0 0-23 * * *", false}, {"0 1,13 * * *", false}, {"@daily", false},
      {"@weekly", false},
  };
  for (const Row& r : kRows) {
    EXPECT_EQ(MustParse(r.expr).hour_is_wildcard(), r.wildcard) << r.expr;
  }
}

TEST(CronDst, PolicyIsKeptAsGiven) {
  Schedule s = MustParse("30 2 * * *",
                         Zone("UTC", {GapPolicy::kSkip, RepeatPolicy::kTwice}));
  EXPECT_EQ(s.dst_policy().gap, GapPolicy::kSkip);
  EXPECT_EQ(s.dst_policy().repeat, RepeatPolicy::kTwice);
  Schedule d = MustParse("30 2 * * *");
  EXPECT_EQ(d.dst_policy().gap, GapPolicy::kRunAtTransition);
  EXPECT_EQ(d.dst_policy().repeat, RepeatPolicy::kOnce);
}

// ---------------------------------------------------------------------------------------------
// Hashed fields, intervals, zones and accessors: properties rather than lists.

// The set bits of a field's mask.
std::vector<int> Bits(uint64_t mask) {
  std::vector<int> out;
  for (int i = 0; i < 64; ++i) {
    if ((mask >> i) & 1) out.push_back(i);
  }
  return out;
}

TEST(CronHash, SameKeyGivesTheSameSchedule) {
  for (absl::string_view expr :
       {"H * * * *", "H H * * *", "H/15 * * * *", "H(0-29) 3 * * *"}) {
    Schedule a = MustParse(expr, Keyed("backup-db"));
    Schedule b = MustParse(expr, Keyed("backup-db"));
    EXPECT_EQ(a.fields().minutes, b.fields().minutes) << expr;
    EXPECT_EQ(a.fields().hours, b.fields().hours) << expr;
    EXPECT_EQ(a.NextN(T("2026-01-01T00:00:00Z"), 5),
              b.NextN(T("2026-01-01T00:00:00Z"), 5))
        << expr;
  }
}

TEST(CronHash, HashedMinuteFiresOncePerHourAtThatMinute) {
  Schedule s = MustParse("H * * * *", Keyed("job-42"));
  const std::vector<int> minutes = Bits(s.fields().minutes);
  ASSERT_EQ(minutes.size(), 1u);
  const absl::Time hour = T("2026-01-01T10:00:00Z");
  std::vector<absl::Time> want;
  for (int h = 0; h < 3; ++h)
    want.push_back(hour + absl::Hours(h) + absl::Minutes(minutes[0]));
  EXPECT_EQ(s.NextN(hour - absl::Seconds(1), 3), want);
}

TEST(CronHash, HashedValuesStayInTheirRange) {
  for (int i = 0; i < 1000; ++i) {
    const std::string key = absl::StrCat("job-", i);
    const ParseOptions o = Keyed(key);
    const std::vector<int> minute =
        Bits(MustParse("H(0-29) * * * *", o).fields().minutes);
    ASSERT_EQ(minute.size(), 1u) << key;
    EXPECT_LE(minute[0], 29) << key;

    const std::vector<int> hour =
        Bits(MustParse("0 H(9-17) * * *", o).fields().hours);
    ASSERT_EQ(hour.size(), 1u) << key;
    EXPECT_GE(hour[0], 9) << key;
    EXPECT_LE(hour[0], 17) << key;

    // Every month has days 1-28, so a hashed day of month fires every month.
    const std::vector<int> dom = Bits(MustParse("0 0 H * *", o).fields().dom);
    ASSERT_EQ(dom.size(), 1u) << key;
    EXPECT_GE(dom[0], 1) << key;
    EXPECT_LE(dom[0], 28) << key;

    const std::vector<int> dow = Bits(MustParse("0 0 * * H", o).fields().dow);
    ASSERT_EQ(dow.size(), 1u) << key;
    EXPECT_LE(dow[0], 6) << key;

    const std::vector<int> quarter =
        Bits(MustParse("H/15 * * * *", o).fields().minutes);
    ASSERT_EQ(quarter.size(), 4u) << key;
    EXPECT_LT(quarter[0], 15) << key;
    for (int k = 1; k < 4; ++k)
      EXPECT_EQ(quarter[k], quarter[0] + 15 * k) << key;

    const std::vector<int> ranged =
        Bits(MustParse("H(0-29)/10 * * * *", o).fields().minutes);
    ASSERT_EQ(ranged.size(), 3u) << key;
    EXPECT_LT(ranged[0], 10) << key;
    EXPECT_EQ(ranged[1], ranged[0] + 10) << key;
    EXPECT_EQ(ranged[2], ranged[0] + 20) << key;
  }
}

TEST(CronHash, DifferentKeysSpreadOut) {
  std::vector<int> per_minute(60), per_hour(24);
  for (int i = 0; i < 1000; ++i) {
    const std::string key = absl::StrCat("tenant-7/job-", i);
    const ParseOptions o = Keyed(key);
    for (int m : Bits(MustParse("H * * * *", o).fields().minutes))
      ++per_minute[m];
    for (int h : Bits(MustParse("0 H * * *", o).fields().hours)) ++per_hour[h];
  }
  // 1000 keys over 60 minutes: about 16.7 each. A fair hash leaves no minute
  // empty with overwhelming probability and piles nowhere near 50 on one.
  const int used_minutes = static_cast<int>(std::count_if(
      per_minute.begin(), per_minute.end(), [](int n) { return n > 0; }));
  EXPECT_GE(used_minutes, 55);
  EXPECT_LE(*std::max_element(per_minute.begin(), per_minute.end()), 50);
  const int used_hours = static_cast<int>(std::count_if(
      per_hour.begin(), per_hour.end(), [](int n) { return n > 0; }));
  EXPECT_EQ(used_hours, 24);
  EXPECT_LE(*std::max_element(per_hour.begin(), per_hour.end()), 100);
}

TEST(CronHash, MinuteAndHourOfOneKeyAreChosenIndependently) {
  // 1000 keys over 60 x 24 independent (minute, hour) cells fill about
  // 1440 * (1 - e^-0.69), i.e. 720, distinct pairs. Were both taken from one
  // number (h % 60, h % 24), the pair would depend on h % 120 only: at most
  // 120.
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < 1000; ++i) {
    const Schedule s = MustParse("H H * * *", Keyed(absl::StrCat("job-", i)));
    pairs.insert({Bits(s.fields().minutes)[0], Bits(s.fields().hours)[0]});
  }
  EXPECT_GE(pairs.size(), 600u);
}

absl::Duration Remainder(absl::Duration num, absl::Duration den) {
  absl::Duration rem;
  absl::IDivDuration(num, den, &rem);
  return rem;
}

TEST(CronEvery, FireTimesAreAnchorPlusWholePeriodsWhateverAfterIs) {
  const absl::Time anchor = T("2026-03-01T00:00:07Z");
  for (absl::string_view expr : {"@every 90s", "@every 1h30m", "@every 7m"}) {
    Schedule s = MustParse(expr, Anchored(anchor));
    ASSERT_TRUE(s.is_interval()) << expr;
    const absl::Duration period = s.interval();
    for (absl::Duration d = absl::Hours(-3); d < absl::Hours(3);
         d += absl::Seconds(37) + absl::Milliseconds(250)) {
      const absl::Time after = anchor + d;
      const absl::Time next = s.Next(after);
      EXPECT_GT(next, after) << expr << " after " << Rfc(after);
      EXPECT_LE(next, after + period) << expr << " after " << Rfc(after);
      EXPECT_EQ(Remainder(next - anchor, period), absl::ZeroDuration())
          << expr << ": " << Rfc(next) << " is not anchor + k * period";
      const absl::Time prev = s.Prev(after);
      EXPECT_LT(prev, after) << expr << " before " << Rfc(after);
      EXPECT_GE(prev, after - period) << expr << " before " << Rfc(after);
      EXPECT_EQ(Remainder(prev - anchor, period), absl::ZeroDuration())
          << expr << ": " << Rfc(prev) << " is not anchor + k * period";
    }
  }
}

TEST(CronEvery, StaysWithin1970To2399LikeEveryOtherSchedule) {
  // Fire times are epoch + k hours; the contract bounds them to the years
  // 1970-2399 as for field schedules: no first fire time before 1970 and no
  // last one after 2399.
  Schedule s = MustParse("@every 1h");
  EXPECT_EQ(Rfc(s.Next(T("2399-12-31T22:30:00Z"))), "2399-12-31T23:00:00Z");
  EXPECT_EQ(Rfc(s.Next(T("2399-12-31T23:30:00Z"))), "InfiniteFuture");
  EXPECT_EQ(Rfc(s.Prev(T("1970-01-01T00:30:00Z"))), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc(s.Prev(T("1970-01-01T00:00:00Z"))), "InfinitePast");
  EXPECT_EQ(Rfc(s.Next(absl::InfinitePast())), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc(s.Prev(absl::InfiniteFuture())), "2399-12-31T23:00:00Z");
  EXPECT_EQ(Rfc(s.Next(absl::InfiniteFuture())), "InfiniteFuture");
  EXPECT_EQ(Rfc(s.Prev(absl::InfinitePast())), "InfinitePast");
}

TEST(CronEvery, IntervalAndAccessors) {
  Schedule s = MustParse("@every 1h30m");
  EXPECT_TRUE(s.is_interval());
  EXPECT_EQ(s.interval(), absl::Minutes(90));
  EXPECT_FALSE(s.Matches(absl::CivilSecond(2026, 1, 1, 0, 0, 0)));
  Schedule cron = MustParse("0 * * * *");
  EXPECT_FALSE(cron.is_interval());
}

TEST(CronZone, PrefixOverridesTheCallersZone) {
  EXPECT_EQ(
      MustParse("CRON_TZ=Europe/Berlin 0 9 * * *", Zone("America/New_York"))
          .zone_name(),
      "Europe/Berlin");
  EXPECT_EQ(
      MustParse("TZ=Asia/Tokyo 0 9 * * *", Zone("Europe/Berlin")).zone_name(),
      "Asia/Tokyo");
  EXPECT_EQ(MustParse("0 9 * * *", Zone("America/New_York")).zone_name(),
            "America/New_York");
  EXPECT_EQ(MustParse("0 9 * * *").zone_name(), "UTC");
}

TEST(CronZone, UnknownZoneIsNotFound) {
  EXPECT_THAT(
      Schedule::Parse("0 9 * * *", Zone("Mars/Olympus_Mons")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("Mars/Olympus_Mons")));
  EXPECT_THAT(
      Schedule::Parse("CRON_TZ=Mars/Olympus_Mons 0 9 * * *"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("Mars/Olympus_Mons")));
}

TEST(CronDialect, InferredFromTheFieldCount) {
  EXPECT_EQ(MustParse("0 9 * * *").dialect(), Dialect::kVixie);
  EXPECT_EQ(MustParse("0 0 9 * * *").dialect(), Dialect::kSeconds);
  EXPECT_EQ(MustParse("0 0 9 * * * 2030").dialect(), Dialect::kSeconds);
  EXPECT_EQ(MustParse("0 0 9 ? * 2", Quartz()).dialect(), Dialect::kQuartz);
  EXPECT_EQ(MustParse("@daily").dialect(), Dialect::kVixie);
}

TEST(CronDialect, QuartzZeroIsRejectedAndSevenIsSaturday) {
  EXPECT_THAT(
      Schedule::Parse("0 0 12 ? * 0", Quartz()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("day-of-week")));
  EXPECT_EQ(Bits(MustParse("0 0 12 ? * 7", Quartz()).fields().dow),
            std::vector<int>{6});
  EXPECT_EQ(Bits(MustParse("0 0 12 ? * 1", Quartz()).fields().dow),
            std::vector<int>{0});
}

TEST(CronFields, WeekdaySevenAndZeroAreTheSameBit) {
  EXPECT_EQ(MustParse("0 0 * * 7").fields().dow,
            MustParse("0 0 * * 0").fields().dow);
  EXPECT_EQ(Bits(MustParse("0 0 * * 5-7").fields().dow),
            (std::vector<int>{0, 5, 6}));
  EXPECT_EQ(Bits(MustParse("0 0 * * 0-7").fields().dow),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(CronFields, ExpressionIsKeptVerbatim) {
  EXPECT_EQ(MustParse("CRON_TZ=UTC  */5 * * * *").expression(),
            "CRON_TZ=UTC  */5 * * * *");
}

}  // namespace
}  // namespace chime::cron
