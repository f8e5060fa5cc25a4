// Schedule::Describe(): every feature of the schedule language, each as an
// exact sentence.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "chime/cron.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/cron_options.h"

namespace chime::cron {
namespace {

using ::chime::testing::AllDays;
using ::chime::testing::Keyed;
using ::chime::testing::Quartz;
using ::chime::testing::Utc;
using ::chime::testing::Zone;

struct Row {
  absl::string_view expr;
  absl::string_view want;
  ParseOptions options = {};
};

void ExpectDescriptions(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    absl::StatusOr<Schedule> s = Schedule::Parse(row.expr, row.options);
    ASSERT_TRUE(s.ok()) << row.expr << ": " << s.status();
    EXPECT_EQ(s->Describe(), row.want) << "expression: " << row.expr;
  }
}

int LowestBit(uint64_t bits) {
  for (int v = 0; v < 64; ++v) {
    if ((bits >> v) & 1) return v;
  }
  return -1;
}

TEST(CronDescribe, ExamplesFromThePublicHeaderReadAsDocumented) {
  ExpectDescriptions({
      {"0 9 * * MON-FRI", "At 09:00, Monday through Friday, Europe/Berlin",
       Zone("Europe/Berlin")},
      {"*/5 * * * *", "Every 5 minutes, UTC"},
      {"* * * * *", "Every minute, UTC"},
      {"* * * * * *", "Every second, UTC"},
      {"30 8-18 * * 1-5",
       "At 30 minutes past the hour, between 08:00 and 18:59, Monday through "
       "Friday, UTC"},
  });
}

TEST(CronDescribe, FixedTimesReadAsClockTimes) {
  ExpectDescriptions({
      {"0 9 * * *", "At 09:00, UTC"},
      {"0 0 9 * * *", "At 09:00, UTC"},  // seconds 0 are not written
      {"30 0 9 * * *", "At 09:00:30, UTC"},
      {"0 8,17 * * *", "At 08:00 and 17:00, UTC"},
      {"0,30 9,17 * * *", "At 09:00, 09:30, 17:00 and 17:30, UTC"},
      {"0,30 0 9 * * *", "At 09:00:00 and 09:00:30, UTC"},
      // Once an hour in a few hours that no range describes: the clock times
      // themselves.
      {"30 1-3,5 * * *", "At 01:30, 02:30, 03:30 and 05:30, UTC"},
  });
}

TEST(CronDescribe, IntervalsWithinTheDay) {
  ExpectDescriptions({
      {"*/10 * * * * *", "Every 10 seconds, UTC"},
      {"0 * * * *", "Every hour, UTC"},
      {"0 */2 * * *", "Every 2 hours, UTC"},
      {"30 */2 * * *", "At 30 minutes past the hour, every 2 hours, UTC"},
      {"1 * * * *", "At 1 minute past the hour, UTC"},
      {"30 5 * * * *", "At 5 minutes and 30 seconds past the hour, UTC"},
      {"30 1 * * * *", "At 1 minute and 30 seconds past the hour, UTC"},
      {"30 * * * * *", "At 30 seconds past the minute, UTC"},
      {"30 */5 * * * *", "At 30 seconds past the minute, every 5 minutes, UTC"},
      {"0,15,45 * * * *", "At minutes 0, 15 and 45 past the hour, UTC"},
      {"10-50/10 * * * *",
       "Every 10 minutes between minutes 10 and 50 past the hour, UTC"},
      {"10-20 * * * *",
       "Every minute between minutes 10 and 20 past the hour, UTC"},
      // `5/15` is `5-59/15`.
      {"0/5 * * * *", "Every 5 minutes, UTC"},  // `0/5` is `*/5`
      {"0 0/5 14,18 * * ?", "Every 5 minutes, during hours 14 and 18, UTC"},
      {"5/15 * * * *",
       "Every 15 minutes between minutes 5 and 59 past the hour, UTC"},
      {"0-10,50-59 * * * *",
       "At minutes 0 through 10 and 50 through 59 past the hour, UTC"},
      {"50-10 * * * *",
       "At minutes 0 through 10 and 50 through 59 past the hour, UTC"},
      {"0,1,5 * * * *", "At minutes 0, 1 and 5 past the hour, UTC"},
      {"0-30 * * * * *",
       "Every second between seconds 0 and 30 past the minute, UTC"},
      {"0-30/10 * * * * *",
       "Every 10 seconds between seconds 0 and 30 past the minute, UTC"},
      {"0,30 * * * * *", "At seconds 0 and 30 past the minute, UTC"},
      {"* 0-4 * * * *",
       "Every second, during minutes 0 through 4 past the hour, UTC"},
      {"*/20 7 * * * *",
       "Every 20 seconds, during minute 7 past the hour, UTC"},
      {"30 0,15 * * * *",
       "At 30 seconds past the minute, at minutes 0 and 15 past the hour, UTC"},
  });
}

TEST(CronDescribe, HourRangesReadAsWindows) {
  ExpectDescriptions({
      {"0 9-17 * * *", "Every hour, between 09:00 and 17:59, UTC"},
      {"0 8-18/2 * * *", "Every 2 hours between 08:00 and 18:59, UTC"},
      {"15 8-18/2 * * *",
       "At 15 minutes past the hour, every 2 hours between 08:00 and 18:59, "
       "UTC"},
      {"0 22-2 * * *", "Every hour, between 22:00 and 02:59, UTC"},
      {"45 22-2 * * *",
       "At 45 minutes past the hour, between 22:00 and 02:59, UTC"},
      {"* 9 * * *", "Every minute, between 09:00 and 09:59, UTC"},
      {"0-30 9 * * *", "Every minute between 09:00 and 09:30, UTC"},
      {"10-50/10 9 * * *", "Every 10 minutes between 09:10 and 09:50, UTC"},
      {"*/15 9-17 * * 1-5",
       "Every 15 minutes, between 09:00 and 17:59, Monday through Friday, UTC"},
      {"*/30 22-2 * * *", "Every 30 minutes, between 22:00 and 02:59, UTC"},
      {"*/15 */6 * * *", "Every 15 minutes, during hours 0, 6, 12 and 18, UTC"},
      {"* 5 9 * * *", "Every second, between 09:05:00 and 09:05:59, UTC"},
      {"30 * 9 * * *",
       "At 30 seconds past the minute, between 09:00 and 09:59, UTC"},
      // More than eight hours with no single range: the hours are listed.
      {"0 0-5,12-17 * * *",
       "At 0 minutes past hours 0 through 5 and 12 through 17, UTC"},
      {"20 0-5,12-17 * * *",
       "At 20 minutes past hours 0 through 5 and 12 through 17, UTC"},
      // Too many clock times to list (6 minutes x 3 hours).
      {"0,10,20,30,40,50 0,6,12 * * *",
       "At minutes 0, 10, 20, 30, 40 and 50 past the hour, during hours 0, 6 "
       "and 12, UTC"},
      {"0 22-2/2 * * *", "At 00:00, 02:00 and 22:00, UTC"},
      {"0 23,0 * * *", "At 00:00 and 23:00, UTC"},
      {"*/30 23,0 * * *", "Every 30 minutes, between 23:00 and 00:59, UTC"},
  });
}

TEST(CronDescribe, DaysOfTheMonthIncludingLastAndNearestWeekday) {
  ExpectDescriptions({
      {"0 0 1 * *", "At 00:00, on day 1 of the month, UTC"},
      {"0 0 1,15 * *", "At 00:00, on days 1 and 15 of the month, UTC"},
      {"0 0 1-5 * *", "At 00:00, on days 1 through 5 of the month, UTC"},
      {"0 0 1-5,20 * *",
       "At 00:00, on days 1 through 5 and 20 of the month, UTC"},
      {"0 0 31 * *", "At 00:00, on day 31 of the month, UTC"},
      {"0 0 */2 * *",
       "At 00:00, on every 2nd day of the month from day 1 through 31, UTC"},
      {"0 0 10-20/3 * *",
       "At 00:00, on every 3rd day of the month from day 10 through 20, UTC"},
      {"0 0 0 L * ?", "At 00:00, on the last day of the month, UTC"},
      {"0 0 L-3 * *", "At 00:00, 3 days before the last day of the month, UTC"},
      {"0 0 L-1 * *", "At 00:00, 1 day before the last day of the month, UTC"},
      {"0 0 LW * *", "At 00:00, on the last weekday of the month, UTC"},
      {"0 0 15W * *",
       "At 00:00, on the weekday nearest day 15 of the month, UTC"},
      {"0 0 1,L * *", "At 00:00, on day 1 and the last day of the month, UTC"},
      {"0 0 1W,L-2 * *",
       "At 00:00, on the weekday nearest day 1 and 2 days before the last day "
       "of the month, UTC"},
  });
}

TEST(CronDescribe, DaysOfTheWeekIncludingLastAndNthWeekday) {
  ExpectDescriptions({
      {"0 0 * * 1", "At 00:00, only on Monday, UTC"},
      {"0 0 * * 0", "At 00:00, only on Sunday, UTC"},
      {"0 0 * * 7", "At 00:00, only on Sunday, UTC"},
      {"0 0 * * 1,3,5", "At 00:00, only on Monday, Wednesday and Friday, UTC"},
      {"0 0 * * SAT,SUN", "At 00:00, only on Saturday and Sunday, UTC"},
      {"0 0 * * sat-sun", "At 00:00, only on Saturday and Sunday, UTC"},
      {"0 0 * * FRI-MON", "At 00:00, Friday through Monday, UTC"},
      {"0 0 * * 5-7", "At 00:00, Friday through Sunday, UTC"},
      {"0 0 * * 1-3,5",
       "At 00:00, only on Monday through Wednesday and Friday, UTC"},
      {"0 0 * * */2",
       "At 00:00, only on Sunday, Tuesday, Thursday and Saturday, UTC"},
      {"0 0 ? * MON", "At 00:00, only on Monday, UTC"},
      {"0 0 * * L", "At 00:00, only on Saturday, UTC"},  // `L` alone is the
                                                         // last day of the week
      {"0 0 * * 6#3", "At 00:00, on the third Saturday of the month, UTC"},
      {"0 0 * * 1#1", "At 00:00, on the first Monday of the month, UTC"},
      {"0 0 * * 5L", "At 00:00, on the last Friday of the month, UTC"},
      {"0 0 * * FRIL", "At 00:00, on the last Friday of the month, UTC"},
      {"0 0 * * 1,5L",
       "At 00:00, on Monday and the last Friday of the month, UTC"},
      {"0 0 * * 0-6", "At 00:00, UTC"},
  });
}

TEST(CronDescribe, QuartzWeekdaysCountFromSunday) {
  ExpectDescriptions({
      {"0 0 12 ? * 1", "At 12:00, only on Sunday, UTC", Quartz()},
      {"0 0 12 ? * 2-6", "At 12:00, Monday through Friday, UTC", Quartz()},
      {"0 0 12 ? * 6L", "At 12:00, on the last Friday of the month, UTC",
       Quartz()},
      {"0 0 12 ? * 7#2", "At 12:00, on the second Saturday of the month, UTC",
       Quartz()},
      {"0 0 12 ? * MON", "At 12:00, only on Monday, UTC", Quartz()},
  });
}

TEST(CronDescribe, DayOfMonthOrDayOfWeekWhenBothAreRestricted) {
  ExpectDescriptions({
      {"0 12 13 * 5", "At 12:00, on day 13 of the month or on Friday, UTC"},
      {"0 12 13 * 5", "At 12:00, on day 13 of the month and on Friday, UTC",
       AllDays()},
      {"0 0 1 * 1#1",
       "At 00:00, on day 1 of the month or on the first Monday of the month, "
       "UTC"},
      {"0 0 L * MON-FRI",
       "At 00:00, on the last day of the month or on Monday through Friday, "
       "UTC"},
      // Either field matching every day lets every day through.
      {"0 0 13 * 0-6", "At 00:00, UTC"},
      {"0 0 1-31 * 5", "At 00:00, UTC"},
      // ... unless both must match.
      {"0 0 13 * 0-6", "At 00:00, on day 13 of the month, UTC", AllDays()},
  });
}

TEST(CronDescribe, FieldStartingWithStarMakesBothDayFieldsApply) {
  ExpectDescriptions({
      {"0 0 */2 * 1",
       "At 00:00, on every 2nd day of the month from day 1 through 31 and on "
       "Monday, UTC"},
      {"0 0 1-10 * */2",
       "At 00:00, on days 1 through 10 of the month and on Sunday, Tuesday, "
       "Thursday and "
       "Saturday, UTC"},
  });
}

TEST(CronDescribe, MonthsAreNamedAndWrappingRangesStayWhole) {
  ExpectDescriptions({
      {"0 0 1 1 *", "At 00:00, on day 1 of the month, only in January, UTC"},
      {"0 0 * 6-8 *", "At 00:00, only in June through August, UTC"},
      {"0 0 1 */3 *",
       "At 00:00, on day 1 of the month, only in January, April, July and "
       "October, UTC"},
      {"0 0 1 NOV-FEB *",
       "At 00:00, on day 1 of the month, only in November through February, "
       "UTC"},
      {"0 0 1 JAN,jul *",
       "At 00:00, on day 1 of the month, only in January and July, UTC"},
      {"0 0 1 12 *", "At 00:00, on day 1 of the month, only in December, UTC"},
      {"0 0 1 DEC,JAN *",
       "At 00:00, on day 1 of the month, only in December and January, UTC"},
  });
}

TEST(CronDescribe, YearsAreListedOrGivenAsRanges) {
  ExpectDescriptions({
      {"0 0 0 1 1 ? 2027",
       "At 00:00, on day 1 of the month, only in January, only in 2027, UTC"},
      {"0 0 0 * * ? 2030-2035", "At 00:00, in 2030 through 2035, UTC"},
      {"0 0 0 1 1 ? 2027,2029",
       "At 00:00, on day 1 of the month, only in January, in 2027 and 2029, "
       "UTC"},
      {"0 0 0 29 2 ? 2024/4",
       "At 00:00, on day 29 of the month, only in February, in every 4th year "
       "from 2024 through "
       "2399, UTC"},
      {"0 0 0 * * ? *", "At 00:00, UTC"},
  });
}

TEST(CronDescribe, MacrosReadLikeTheExpressionsTheyStandFor) {
  ExpectDescriptions({
      {"@yearly", "At 00:00, on day 1 of the month, only in January, UTC"},
      {"@annually", "At 00:00, on day 1 of the month, only in January, UTC"},
      {"@monthly", "At 00:00, on day 1 of the month, UTC"},
      {"@weekly", "At 00:00, only on Sunday, UTC"},
      {"@daily", "At 00:00, UTC"},
      {"@midnight", "At 00:00, UTC"},
      {"@hourly", "Every hour, UTC"},
      {"@DAILY", "At 00:00, UTC"},
  });
}

TEST(CronDescribe, FixedIntervalsNameTheirPeriod) {
  ExpectDescriptions({
      {"@every 1h30m", "Every 1h30m"},
      {"@every 90m", "Every 1h30m"},
      {"@every 90s", "Every 1m30s"},
      {"@every 1d", "Every 1d"},
      {"@every 500ms", "Every 500ms"},
      {"@every 1h", "Every 1h",
       Zone("Europe/Berlin")},  // a fixed period has no wall time
  });
}

TEST(CronDescribe, ZonePrefixWinsOverTheCallersZone) {
  ExpectDescriptions({
      {"CRON_TZ=America/New_York 0 9 * * *", "At 09:00, America/New_York",
       Zone("Europe/Berlin")},
      {"TZ=Asia/Tokyo @daily", "At 00:00, Asia/Tokyo"},
      {"0 9 * * *", "At 09:00, Australia/Lord_Howe",
       Zone("Australia/Lord_Howe")},
  });
}

TEST(CronDescribe, HashedFieldsDescribeTheResolvedValue) {
  const ParseOptions key = Keyed("backup-db");
  absl::StatusOr<Schedule> hashed = Schedule::Parse("H H * * *", key);
  ASSERT_TRUE(hashed.ok()) << hashed.status();
  const int minute = LowestBit(hashed->fields().minutes);
  const int hour = LowestBit(hashed->fields().hours);
  EXPECT_EQ(hashed->Describe(),
            absl::StrFormat("At %02d:%02d, UTC", hour, minute));

  absl::StatusOr<Schedule> phased = Schedule::Parse("H/15 * * * *", key);
  ASSERT_TRUE(phased.ok()) << phased.status();
  const int phase = LowestBit(phased->fields().minutes);
  ASSERT_LT(phase, 15);
  EXPECT_EQ(phased->Describe(),
            absl::StrCat("Every 15 minutes between minutes ", phase,
                         " and 59 past the hour, UTC"));

  absl::StatusOr<Schedule> ranged = Schedule::Parse("0 H(9-17) * * *", key);
  ASSERT_TRUE(ranged.ok()) << ranged.status();
  const int chosen = LowestBit(ranged->fields().hours);
  ASSERT_GE(chosen, 9);
  ASSERT_LE(chosen, 17);
  EXPECT_EQ(ranged->Describe(), absl::StrFormat("At %02d:00, UTC", chosen));
}

// Describe is a pure function of the expression and options: the same H
// resolution as Parse.
TEST(CronDescribe, HashedFieldsUseTheSchedulesOwnKey) {
  for (absl::string_view key : {"a", "b", "job-17", "nightly-report"}) {
    absl::StatusOr<Schedule> s = Schedule::Parse("H H * * *", Keyed(key));
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->Describe(),
              absl::StrFormat("At %02d:%02d, UTC", LowestBit(s->fields().hours),
                              LowestBit(s->fields().minutes)))
        << "key " << key;
  }
}

// The words describe which days fire; the engine must agree. "*/2" in
// day-of-month with "*" in day-of-week fires on the odd days (1, 3, 5, ...), as
// in Vixie cron.
TEST(CronDescribe, StarStepDayOfMonthFiresOnTheDescribedDays) {
  absl::StatusOr<Schedule> s = Schedule::Parse("0 0 */2 * *");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->Next(Utc(2026, 1, 1)), Utc(2026, 1, 3));
  EXPECT_EQ(s->Next(Utc(2026, 1, 31)), Utc(2026, 2, 1));  // 31 -> 1: both odd
}

// "0 0 */2 * 1": day-of-month starts with `*`, so both fields must match:
// odd-numbered Mondays. January 2026 has Mondays on the 5th, 12th, 19th and
// 26th.
TEST(CronDescribe, StarStepDayOfMonthWithWeekdayFiresOnDaysMatchingBoth) {
  absl::StatusOr<Schedule> s = Schedule::Parse("0 0 */2 * 1");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->Next(Utc(2026, 1, 1)), Utc(2026, 1, 5));
  EXPECT_EQ(s->Next(Utc(2026, 1, 5)), Utc(2026, 1, 19));
}

// "0 0 1-10 * */2": day-of-week starts with `*`, so both fields must match:
// days 1-10 that are a Sunday, Tuesday, Thursday or Saturday. 2026-01-01 is a
// Thursday, 01-03 a Saturday.
TEST(CronDescribe, StarStepDayOfWeekWithDaysFiresOnDaysMatchingBoth) {
  absl::StatusOr<Schedule> s = Schedule::Parse("0 0 1-10 * */2");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->Next(Utc(2025, 12, 31)), Utc(2026, 1, 1));
  EXPECT_EQ(s->Next(Utc(2026, 1, 1)), Utc(2026, 1, 3));
}

// Checks that `expr` (if it parses) gets a well-formed sentence. Returns
// whether it parsed.
bool ExpectWellFormedSentence(const std::string& expr, DayMatch match) {
  ParseOptions options;
  options.day_match = match;
  options.zone = "Asia/Kolkata";
  options.hash_key = "k";
  absl::StatusOr<Schedule> s = Schedule::Parse(expr, options);
  if (!s.ok()) return false;  // never fires, e.g. day 31 in February only
  const std::string d = s->Describe();
  EXPECT_FALSE(d.empty()) << expr;
  if (d.empty()) return true;
  EXPECT_TRUE(absl::ascii_isupper(static_cast<unsigned char>(d[0])))
      << expr << ": " << d;
  EXPECT_TRUE(absl::EndsWith(d, ", Asia/Kolkata")) << expr << ": " << d;
  for (absl::string_view bad : {", ,", "  ", " ,", "between minutes 50 and 10",
                                "between seconds 50 and 5"}) {
    EXPECT_FALSE(absl::StrContains(d, bad)) << expr << ": " << d;
  }
  return true;
}

// Every combination of common field forms gives a sentence: capitalized,
// ending in the zone, with no empty clause. (The exact wording is covered
// above; this guards the fallbacks against crashes and broken grammar.)
TEST(CronDescribe, EveryCombinationOfFieldFormsGivesASentence) {
  const std::vector<absl::string_view> seconds = {"0", "30", "*/15", "0,30",
                                                  "50-5"};
  const std::vector<absl::string_view> minutes = {
      "0", "7", "*", "*/5", "10-50/10", "0,15,45", "50-10", "H"};
  const std::vector<absl::string_view> hours = {
      "0",    "9",    "*",      "*/6",       "8-18",
      "22-2", "0,12", "8-18/2", "0-5,12-17", "H(0-5)"};
  const std::vector<absl::string_view> days = {
      "* *",       "? MON-FRI", "1 *",    "L-2 7", "LW,15W 5L,6#3",
      "1-5,L 1,3", "*/3 *",     "31 */2", "* 1,3", "13 FRI"};
  const std::vector<absl::string_view> months = {"*", "1", "NOV-FEB"};
  const std::vector<absl::string_view> years = {"*", "2030", "2027-2030"};
  int described = 0;
  int n = 0;  // month and year cycle with the other fields to keep it fast
  for (absl::string_view sec : seconds) {
    for (absl::string_view min : minutes) {
      for (absl::string_view hour : hours) {
        for (absl::string_view day : days) {
          ++n;
          // `day` is day-of-month and day-of-week; the month goes between.
          const size_t space = day.find(' ');
          const std::string expr = absl::StrCat(
              sec, " ", min, " ", hour, " ", day.substr(0, space), " ",
              months[n % months.size()], " ", day.substr(space + 1), " ",
              years[n / months.size() % years.size()]);
          for (DayMatch match : {DayMatch::kAny, DayMatch::kAll}) {
            if (ExpectWellFormedSentence(expr, match)) ++described;
          }
        }
      }
    }
  }
  EXPECT_GT(described, 7000);
}

}  // namespace
}  // namespace chime::cron
