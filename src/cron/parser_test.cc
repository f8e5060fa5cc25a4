// Tests of the schedule-expression parser: the errors a user sees for every
// malformed form, and the syntax tree for well-formed ones.
//
// Errors go through the public Schedule::Parse (which runs ParseExpression and
// then resolves the zone and rejects schedules that never fire), because that
// is what a user sees. The format is
//   "<field>: <problem> (field N, column C)"
// with N the field's position as written and C the 1-based column of the
// offending text in the whole expression (a CRON_TZ= prefix and extra spaces
// count).
#include "src/cron/parser.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/cron_options.h"
#include "testing/status_matchers.h"

namespace chime::cron::internal {
namespace {

using ::chime::testing::AllDays;
using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::Keyed;
using ::chime::testing::StatusIs;
using ::chime::testing::WithDialect;
using ::chime::testing::Zone;
using ::testing::HasSubstr;

TEST(CronParser, DayOfMonthOutOfRangeNamesFieldAndColumn) {
  EXPECT_THAT(ParseExpression("0 0 32 * *", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "day-of-month: 32 is outside 1-31 (field 3, column 5)"));
}

// ---------------------------------------------------------------------------------------------
// Exact messages for a representative set.

struct ExactErrorCase {
  const char* name;
  const char* expr;
  ParseOptions options;
  absl::StatusCode code;
  const char* message;
};

void PrintTo(const ExactErrorCase& c, std::ostream* os) {
  *os << "\"" << c.expr << "\"";
}

class CronParserExactError : public ::testing::TestWithParam<ExactErrorCase> {};

TEST_P(CronParserExactError, MessageSaysWhatWhereAndWhatWouldBeAccepted) {
  const ExactErrorCase& c = GetParam();
  EXPECT_THAT(Schedule::Parse(c.expr, c.options), StatusIs(c.code, c.message))
      << c.expr;
}

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

const std::vector<ExactErrorCase>& ExactErrorCases() {
  static const auto* const cases = new std::vector<ExactErrorCase>{
      {"DayOfMonthTooLarge",
       "0 0 32 * *",
       {},
       kInvalid,
       "day-of-month: 32 is outside 1-31 (field 3, column 5)"},
      {"DayOfMonthZero",
       "0 0 0 * *",
       {},
       kInvalid,
       "day-of-month: 0 is outside 1-31 (field 3, column 5)"},
      {"MinuteTooLarge",
       "60 * * * *",
       {},
       kInvalid,
       "minute: 60 is outside 0-59 (field 1, column 1)"},
      {"HourTooLarge",
       "0 24 * * *",
       {},
       kInvalid,
       "hour: 24 is outside 0-23 (field 2, column 3)"},
      {"MonthTooLarge",
       "0 0 1 13 *",
       {},
       kInvalid,
       "month: 13 is outside 1-12 (field 4, column 7)"},
      {"DayOfWeekTooLarge",
       "0 0 * * 8",
       {},
       kInvalid,
       "day-of-week: 8 is outside 0-7 (field 5, column 9)"},
      {"SecondTooLarge",
       "60 0 0 * * *",
       {},
       kInvalid,
       "second: 60 is outside 0-59 (field 1, column 1)"},
      {"YearAfter2399",
       "0 0 0 1 1 ? 2400",
       {},
       kInvalid,
       "year: 2400 is outside 1970-2399 (field 7, column 13)"},
      {"YearBefore1970",
       "0 0 0 1 1 ? 1969",
       {},
       kInvalid,
       "year: 1969 is outside 1970-2399 (field 7, column 13)"},
      {"QuartzWeekdayZero", "0 0 0 ? * 0", WithDialect(Dialect::kQuartz),
       kInvalid,
       "day-of-week: 0 is outside 1-7 (Quartz dialect: 1 = Sunday) (field 6, "
       "column 11)"},
      {"UnknownMonthName",
       "0 0 1 FOO *",
       {},
       kInvalid,
       "month: \"FOO\" is not a month name (expected 1-12 or JAN-DEC) (field "
       "4, column 7)"},
      {"UnknownDayName",
       "0 0 * * FUN",
       {},
       kInvalid,
       "day-of-week: \"FUN\" is not a day name (expected 0-7 or SUN-SAT) "
       "(field 5, column 9)"},
      {"StepZero",
       "*/0 * * * *",
       {},
       kInvalid,
       "minute: step 0 is not allowed (expected 1 or more) (field 1, column "
       "3)"},
      {"StepLargerThanTheField",
       "*/61 * * * *",
       {},
       kInvalid,
       "minute: step 61 is larger than the field's range 0-59; steps never "
       "carry into the next "
       "field, for a fixed interval use @every (field 1, column 3)"},
      {"BackwardsDayOfMonthRange",
       "0 0 20-10 * *",
       {},
       kInvalid,
       "day-of-month: range 20-10 goes backwards (day-of-month ranges cannot "
       "wrap; write it as "
       "two ranges) (field 3, column 5)"},
      {"QuestionMarkInMinute",
       "? * * * *",
       {},
       kInvalid,
       "minute: \"?\" is only allowed in day-of-month and day-of-week (field "
       "1, column 1)"},
      {"LastInHour",
       "0 L * * *",
       {},
       kInvalid,
       "hour: \"L\" is not a number (expected a value, a range a-b, a step */n "
       "or a-b/n, a list "
       "a,b, * or H; values 0-23) (field 2, column 3)"},
      {"SixthWeekdayOfMonth",
       "0 0 * * 1#6",
       {},
       kInvalid,
       "day-of-week: #6 is outside 1-5 (a month has at most five of each "
       "weekday) (field 5, "
       "column 11)"},
      {"LastMinus31",
       "0 0 L-31 * *",
       {},
       kInvalid,
       "day-of-month: L-31 is outside L-0 to L-30 (field 3, column 7)"},
      {"ColumnsCountTheZonePrefix",
       "CRON_TZ=UTC 0 0 32 * *",
       {},
       kInvalid,
       "day-of-month: 32 is outside 1-31 (field 3, column 17)"},
      {"ColumnsCountExtraSpaces",
       "0  0   32 * *",
       {},
       kInvalid,
       "day-of-month: 32 is outside 1-31 (field 3, column 8)"},
      {"ColumnPointsIntoAList",
       "0 0 1,15,32 * *",
       {},
       kInvalid,
       "day-of-month: 32 is outside 1-31 (field 3, column 10)"},
      {"FourFields",
       "* * * *",
       {},
       kInvalid,
       "expected 5, 6 or 7 fields, found 4 in \"* * * *\""},
      {"EightFields",
       "0 0 0 1 1 ? 2030 5",
       {},
       kInvalid,
       "expected 5, 6 or 7 fields, found 8 in \"0 0 0 1 1 ? 2030 5\""},
      // More tokens than an expression can have are all counted.
      {"ElevenFieldsAfterAZone",
       "TZ=UTC 1 2 3 4 5 6 7 8 9 10 11",
       {},
       kInvalid,
       "expected 5, 6 or 7 fields, found 11 in \"TZ=UTC 1 2 3 4 5 6 7 8 9 10 "
       "11\""},
      {"SixFieldsInVixieDialect", "0 0 0 * * *", WithDialect(Dialect::kVixie),
       kInvalid,
       "expected 5 fields (minute hour day-of-month month day-of-week), found "
       "6 in "
       "\"0 0 0 * * *\""},
      {"FiveFieldsInSecondsDialect", "0 0 * * *",
       WithDialect(Dialect::kSeconds), kInvalid,
       "expected 6 or 7 fields (second minute hour day-of-month month "
       "day-of-week [year]), "
       "found 5 in \"0 0 * * *\""},
      {"UnknownMacro",
       "@fortnightly",
       {},
       kInvalid,
       "unknown macro \"@fortnightly\" (column 1; expected @yearly, @annually, "
       "@monthly, "
       "@weekly, @daily, @midnight, @hourly or @every <duration>)"},
      {"EveryWithoutDuration",
       "@every",
       {},
       kInvalid,
       "@every takes one duration, e.g. @every 90s (column 1; expected "
       "@yearly, @annually, "
       "@monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)"},
      {"EveryZeroSeconds",
       "@every 0s",
       {},
       kInvalid,
       "@every: duration \"0s\" must be positive (column 8)"},
      {"EveryUnknownUnit",
       "@every 5x",
       {},
       kInvalid,
       "@every: duration \"5x\" needs a unit after 5 (expected d, h, m, s or "
       "ms, e.g. 90s or "
       "1h30m) (column 8)"},
      {"EveryNegative",
       "@every -1s",
       {},
       kInvalid,
       "@every: expected a number at offset 0 of duration \"-1s\" (column 8)"},
      {"Empty",
       "",
       {},
       kInvalid,
       "empty schedule (expected 5, 6 or 7 fields, or a macro such as @daily)"},
      {"OnlySpaces",
       "  \t ",
       {},
       kInvalid,
       "empty schedule (expected 5, 6 or 7 fields, or a macro such as @daily)"},
      {"NeverFires",
       "0 0 30 2 *",
       {},
       kInvalid,
       "schedule \"0 0 30 2 *\" never fires: no date from 1970 to 2399 matches "
       "its day-of-month, "
       "month, day-of-week and year fields together"},
      {"UnknownZoneInPrefix",
       "CRON_TZ=Mars/Olympus 0 9 * * *",
       {},
       absl::StatusCode::kNotFound,
       "time zone: unknown time zone \"Mars/Olympus\" (expected an IANA name "
       "such as "
       "\"Europe/Berlin\" or \"UTC\") (column 9)"},
      {"UnknownZoneInOptions", "0 9 * * *", Zone("Mars/Olympus"),
       absl::StatusCode::kNotFound,
       "time zone: unknown time zone \"Mars/Olympus\" (expected an IANA name "
       "such as "
       "\"Europe/Berlin\" or \"UTC\")"},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Errors, CronParserExactError,
                         ::testing::ValuesIn(ExactErrorCases()),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

// ---------------------------------------------------------------------------------------------
// Many more malformed forms: each message names the field and the column,
// quotes the offending text, and says what would be accepted.

struct ErrorCase {
  const char* name;
  const char* expr;
  ParseOptions options;
  std::vector<const char*> says;  // substrings the message must contain
};

void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << "\"" << c.expr << "\"";
}

class CronParserError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CronParserError, IsInvalidArgumentNamingFieldColumnTextAndAlternatives) {
  const ErrorCase& c = GetParam();
  const absl::Status status = Schedule::Parse(c.expr, c.options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
      << c.expr << ": " << status;
  for (const char* s : c.says) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(s)) << c.expr;
  }
}

const ParseOptions kQuartz = WithDialect(Dialect::kQuartz);

const std::vector<ErrorCase>& ErrorCases() {
  static const auto* const cases = new std::vector<ErrorCase>{
      // Out of range, in every field.
      {"Second61",
       "61 * * * * *",
       {},
       {"second:", "(field 1, column 1)", "61", "0-59"}},
      {"MinuteInSixFields",
       "0 99 * * * *",
       {},
       {"minute:", "(field 2, column 3)", "99", "0-59"}},
      {"HourInSixFields",
       "0 0 25 * * *",
       {},
       {"hour:", "(field 3, column 5)", "25", "0-23"}},
      {"DayOfMonthInSixFields",
       "0 0 0 0 * *",
       {},
       {"day-of-month:", "(field 4, column 7)", "0 is outside", "1-31"}},
      {"MonthZero",
       "0 0 0 1 0 *",
       {},
       {"month:", "(field 5, column 9)", "0 is outside", "1-12"}},
      {"DayOfWeekNine",
       "0 0 0 ? * 9",
       {},
       {"day-of-week:", "(field 6, column 11)", "9", "0-7"}},
      {"YearInSevenFields",
       "0 0 0 1 1 ? 3000",
       {},
       {"year:", "(field 7, column 13)", "3000", "1970-2399"}},
      {"YearInAList",
       "0 0 0 1 1 ? 2030,2400",
       {},
       {"year:", "(field 7, column 18)", "2400", "1970-2399"}},
      {"DayOfMonthInAList",
       "0 0 1,32 * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "32", "1-31"}},
      {"DayOfMonthAtRangeEnd",
       "0 0 1-32 * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "32", "1-31"}},
      {"HourAtRangeEnd",
       "0 9-24 * * *",
       {},
       {"hour:", "(field 2, column 5)", "24", "0-23"}},
      {"DayOfWeekAtRangeEnd",
       "0 0 * * 1-8",
       {},
       {"day-of-week:", "(field 5, column 11)", "8", "0-7"}},
      {"DayOfWeekBeforeStep",
       "0 0 * * 8/2",
       {},
       {"day-of-week:", "(field 5, column 9)", "8", "0-7"}},
      {"HugeNumberIsQuotedAsWritten",
       "99999999999 * * * *",
       {},
       {"minute:", "(field 1, column 1)", "99999999999 is outside", "0-59"}},
      {"QuartzWeekdayEight",
       "0 0 0 ? * 8",
       kQuartz,
       {"day-of-week:", "(field 6, column 11)", "8", "1-7"}},
      {"QuartzWeekdayZeroInRange",
       "0 0 0 ? * 0-5",
       kQuartz,
       {"day-of-week:", "(field 6, column 11)", "0 is outside", "1-7"}},
      {"NearestWeekdayOutOfRange",
       "0 0 32W * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "32", "1-31"}},
      {"NearestWeekdayZero",
       "0 0 0W * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "0 is outside", "1-31"}},
      {"LastOfWeekdayOutOfRange",
       "0 0 * * 8L",
       {},
       {"day-of-week:", "(field 5, column 9)", "8", "0-7"}},
      {"NthOfWeekdayOutOfRange",
       "0 0 * * 9#2",
       {},
       {"day-of-week:", "(field 5, column 9)", "9", "0-7"}},

      // Unknown names, and names in fields that have none.
      {"LongMonthName",
       "0 0 1 JANUARY *",
       {},
       {"month:", "(field 4, column 7)", "JANUARY", "JAN-DEC"}},
      {"MisspelledMonth",
       "0 0 1 JNE *",
       {},
       {"month:", "(field 4, column 7)", "JNE", "JAN-DEC"}},
      {"DayNameInMonth",
       "0 0 1 MON *",
       {},
       {"month:", "(field 4, column 7)", "MON", "JAN-DEC"}},
      {"MonthNameInDayOfMonth",
       "0 0 JAN * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "JAN", "1-31"}},
      {"MonthNameInDayOfWeek",
       "0 0 * * JAN",
       {},
       {"day-of-week:", "(field 5, column 9)", "JAN", "SUN-SAT"}},
      {"LongDayName",
       "0 0 * * MONDAY",
       {},
       {"day-of-week:", "(field 5, column 12)", "\"D\""}},
      {"UnknownDayAtRangeEnd",
       "0 0 * * MON-FUN",
       {},
       {"day-of-week:", "(field 5, column 13)", "FUN", "SUN-SAT"}},
      {"WordInMinute",
       "x * * * *",
       {},
       {"minute:", "(field 1, column 1)", "\"x\"", "0-59"}},

      // Steps: zero, missing, larger than the field.
      {"StepZeroInHour",
       "0 */0 * * *",
       {},
       {"hour:", "(field 2, column 5)", "step 0", "1 or more"}},
      {"StepZeroAfterHash",
       "H/0 * * * *",
       {},
       {"minute:", "(field 1, column 3)", "step 0"}},
      {"StepMissing",
       "*/ * * * *",
       {},
       {"minute:", "(field 1, column 3)", "step", "expected"}},
      {"StepNotANumber",
       "*/x * * * *",
       {},
       {"minute:", "(field 1, column 3)", "step", "expected"}},
      {"StepMissingAfterRange",
       "0 0 1-10/ * *",
       {},
       {"day-of-month:", "(field 3, column 10)", "step", "expected"}},
      {"StepLargerThanSeconds",
       "*/61 * * * * *",
       {},
       {"second:", "(field 1, column 3)", "step 61", "0-59"}},
      {"StepLargerThanHours",
       "0 */25 * * *",
       {},
       {"hour:", "(field 2, column 5)", "step 25", "0-23"}},
      {"StepLargerThanDays",
       "0 0 */32 * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "step 32", "1-31"}},
      {"StepLargerThanMonths",
       "0 0 1 */13 *",
       {},
       {"month:", "(field 4, column 9)", "step 13", "1-12"}},
      {"StepLargerThanWeekdays",
       "0 0 * * */9",
       {},
       {"day-of-week:", "(field 5, column 11)", "step 9", "0-7"}},
      {"StepLargerThanYears",
       "0 0 0 1 1 ? */431",
       {},
       {"year:", "(field 7, column 15)", "step 431", "1970-2399"}},
      {"StepOnRangeLargerThanTheField",
       "0 0 1-10/40 * *",
       {},
       {"day-of-month:", "(field 3, column 10)", "step 40", "1-31"}},
      {"QuestionMarkWithStep",
       "0 0 ?/2 * *",
       {},
       {"day-of-month:", "(field 3, column 6)", "\"?\"", "step"}},
      {"LastDayWithStep",
       "0 0 L/2 * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "\"L\"", "step"}},
      {"LastMinusWithStep",
       "0 0 L-3/2 * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "\"L\"", "step"}},

      // Backwards ranges where the field does not wrap.
      {"BackwardsDayOfMonthRangeAcrossMonthEnd",
       "0 0 31-1 * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "31-1", "two ranges"}},
      {"BackwardsYearRange",
       "0 0 0 1 1 ? 2030-2020",
       {},
       {"year:", "(field 7, column 13)", "2030-2020", "two ranges"}},

      // `?` outside the day fields.
      {"QuestionMarkInSecond",
       "? 0 0 * * *",
       {},
       {"second:", "(field 1, column 1)", "\"?\"",
        "day-of-month and day-of-week"}},
      {"QuestionMarkInHour",
       "0 ? * * *",
       {},
       {"hour:", "(field 2, column 3)", "\"?\"",
        "day-of-month and day-of-week"}},
      {"QuestionMarkInMonth",
       "0 0 1 ? *",
       {},
       {"month:", "(field 4, column 7)", "\"?\"",
        "day-of-month and day-of-week"}},
      {"QuestionMarkInYear",
       "0 0 0 1 1 ? ?",
       {},
       {"year:", "(field 7, column 13)", "\"?\"",
        "day-of-month and day-of-week"}},

      // `L`, `W`, `#` where they do not belong or are malformed.
      {"LastInMinute",
       "L * * * *",
       {},
       {"minute:", "(field 1, column 1)", "\"L\"", "0-59"}},
      {"LastInMonth",
       "0 0 1 L *",
       {},
       {"month:", "(field 4, column 7)", "\"L\"", "JAN-DEC"}},
      {"LastInYear",
       "0 0 0 1 1 ? L",
       {},
       {"year:", "(field 7, column 13)", "\"L\"", "1970-2399"}},
      {"LastWeekdayInDayOfWeek",
       "0 0 * * LW",
       {},
       {"day-of-week:", "(field 5, column 9)", "\"LW\"", "SUN-SAT"}},
      {"NearestWeekdayInDayOfWeek",
       "0 0 * * 5W",
       {},
       {"day-of-week:", "(field 5, column 10)", "\"W\"", "d#k"}},
      {"HashInDayOfMonth",
       "0 0 1#2 * *",
       {},
       {"day-of-month:", "(field 3, column 6)", "\"#\"", "nW"}},
      {"NthZero",
       "0 0 * * 1#0",
       {},
       {"day-of-week:", "(field 5, column 11)", "#0", "1-5"}},
      {"NthMissing",
       "0 0 * * 1#",
       {},
       {"day-of-week:", "(field 5, column 11)", "#", "1-5"}},
      {"NthSixQuartz",
       "0 0 0 ? * 6#6",
       kQuartz,
       {"day-of-week:", "(field 6, column 13)", "#6", "1-5"}},
      {"LastMinusMissing",
       "0 0 L- * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "L-", "0-30"}},
      {"LastMinus99",
       "0 0 L-99 * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "L-99", "L-0 to L-30"}},

      // List and range punctuation.
      {"EmptyListItem",
       "1,,2 * * * *",
       {},
       {"minute:", "(field 1, column 3)", "empty list item", "expected"}},
      {"TrailingComma",
       "0 0 1, * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "empty list item", "expected"}},
      {"LeadingComma",
       "0 0 ,1 * *",
       {},
       {"day-of-month:", "(field 3, column 5)", "empty list item", "expected"}},
      {"DoubleCommaInWeekdays",
       "0 0 * * MON,,FRI",
       {},
       {"day-of-week:", "(field 5, column 13)", "empty list item", "expected"}},
      {"RangeWithoutEnd",
       "0 0 1- * *",
       {},
       {"day-of-month:", "(field 3, column 7)", "missing value", "1-31"}},
      {"RangeOfRanges",
       "5-10-15 * * * *",
       {},
       {"minute:", "(field 1, column 5)", "\"-\"", "0-59"}},
      {"NegativeNumber",
       "-5 * * * *",
       {},
       {"minute:", "(field 1, column 1)", "\"-\"", "0-59"}},
      {"LetterAfterNumber",
       "0 0 1x * *",
       {},
       {"day-of-month:", "(field 3, column 6)", "\"x\"", "1-31"}},
      {"SlashAfterStar",
       "*/5/2 * * * *",
       {},
       {"minute:", "(field 1, column 4)", "\"/\"", "0-59"}},

      // `H`.
      {"HashRangeBackwards",
       "H(30-10) * * * *",
       {},
       {"minute:", "(field 1, column 1)", "a <= b"}},
      {"HashRangeUnclosed",
       "H(0-29 * * * *",
       {},
       {"minute:", "(field 1, column 7)", "\")\""}},
      {"HashRangeWithoutDash",
       "H(0) * * * *",
       {},
       {"minute:", "(field 1, column 4)", "\"-\""}},
      {"HashRangeOutOfField",
       "H(0-99) * * * *",
       {},
       {"minute:", "(field 1, column 5)", "99", "0-59"}},
      {"HashInYear",
       "0 0 0 1 1 ? H",
       {},
       {"year:", "(field 7, column 13)", "H"}},

      // Field counts.
      {"ThreeFields", "* * *", {}, {"expected 5, 6 or 7 fields", "found 3"}},
      {"SevenFieldsInVixieDialect",
       "0 0 0 1 1 ? 2030",
       WithDialect(Dialect::kVixie),
       {"expected 5 fields", "found 7"}},
      {"FiveFieldsInQuartzDialect",
       "0 0 * * ?",
       kQuartz,
       {"expected 6 or 7 fields", "found 5"}},
      {"EightFieldsInQuartzDialect",
       "0 0 0 1 1 ? 2030 5",
       kQuartz,
       {"expected 6 or 7 fields", "found 8"}},
      {"OnlyAZonePrefix", "CRON_TZ=UTC", {}, {"empty schedule", "macro"}},

      // Macros and @every.
      {"MacroWithTrailingText",
       "@daily 5",
       {},
       {"@daily", "column 8", "@hourly"}},
      {"LoneAtSign", "@", {}, {"unknown macro \"@\"", "column 1", "@daily"}},
      {"UnknownMacroAfterPrefix",
       "CRON_TZ=UTC @weekly2",
       {},
       {"unknown macro \"@weekly2\"", "column 13", "@weekly"}},
      {"EveryWithTwoDurations",
       "@every 1h 5m",
       {},
       {"@every", "one duration", "column 1"}},
      {"EveryWithoutUnit",
       "@every 90",
       {},
       {"@every:", "\"90\"", "column 8", "d, h, m, s or ms"}},
      {"EveryWithTrailingNumber",
       "@every 1h30",
       {},
       {"@every:", "\"1h30\"", "column 8", "d, h, m, s or ms"}},
      {"EveryZeroMilliseconds",
       "@every 0ms",
       {},
       {"@every:", "\"0ms\"", "positive", "column 8"}},
      {"EveryFraction",
       "@every 1.5h",
       {},
       {"@every:", "\"1.5h\"", "column 8", "d, h, m, s or ms"}},
      {"EveryUnitWithoutNumber",
       "@every s",
       {},
       {"@every:", "\"s\"", "column 8", "number"}},
      {"EveryTooLong",
       "@every 99999999999999d",
       {},
       {"@every:", "too long", "column 8"}},

      // Zone prefixes without a zone.
      {"CronTzWithoutZone",
       "CRON_TZ= 0 9 * * *",
       {},
       {"CRON_TZ=", "zone name", "column 1", "CRON_TZ=Europe/Berlin"}},
      {"TzWithoutZone",
       "TZ= 0 9 * * *",
       {},
       {"TZ=", "zone name", "column 1", "TZ=Europe/Berlin"}},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Errors, CronParserError,
                         ::testing::ValuesIn(ErrorCases()),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

// ---------------------------------------------------------------------------------------------
// Unknown zones are NotFound, naming the zone.

TEST(CronParserZone, UnknownZoneIsNotFoundAndNamed) {
  EXPECT_THAT(
      Schedule::Parse("CRON_TZ=Not/AZone 0 9 * * *"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"Not/AZone\"")));
  EXPECT_THAT(Schedule::Parse("TZ=Europe/Berln 0 9 * * *"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("\"Europe/Berln\" (expected")));
  EXPECT_THAT(Schedule::Parse("TZ=Europe/Berln 0 9 * * *"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("(column 4)")));
  EXPECT_THAT(
      Schedule::Parse("0 9 * * *", Zone("Europe/Berln")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"Europe/Berln\"")));
  EXPECT_THAT(
      Schedule::Parse("@every 1h", Zone("Europe/Berln")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"Europe/Berln\"")));
  // The prefix wins over the options, also when the options name a zone that
  // does not exist.
  EXPECT_THAT(Schedule::Parse("CRON_TZ=UTC 0 9 * * *", Zone("Europe/Berln")),
              IsOk());
}

// ---------------------------------------------------------------------------------------------
// Schedules that never fire are rejected at once, not by searching the
// centuries.

struct NeverCase {
  const char* name;
  const char* expr;
  ParseOptions options;
};

void PrintTo(const NeverCase& c, std::ostream* os) {
  *os << "\"" << c.expr << "\"";
}

class CronParserNeverFires : public ::testing::TestWithParam<NeverCase> {};

TEST_P(CronParserNeverFires, IsRejectedWithinMilliseconds) {
  const NeverCase& c = GetParam();
  const absl::Time start = absl::Now();
  const absl::Status status = Schedule::Parse(c.expr, c.options).status();
  const absl::Duration took = absl::Now() - start;
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("never fires")))
      << c.expr;
  EXPECT_THAT(std::string(status.message()), HasSubstr(c.expr));
  // Microseconds in practice; 10 ms leaves room for sanitizers and a loaded
  // machine.
  EXPECT_LT(took, absl::Milliseconds(10)) << c.expr;
}

const std::vector<NeverCase>& NeverCases() {
  static const auto* const cases = new std::vector<NeverCase>{
      {"February30", "0 0 30 2 *", {}},
      {"February31AndApril31", "0 0 31 2,4 *", {}},
      {"The31stOfThirtyDayMonths", "0 0 31 4,6,9,11 *", {}},
      {"February29In2100", "0 0 0 29 2 ? 2100", {}},
      {"February29InNoLeapYear", "0 0 0 29 2 ? 2100-2103", {}},
      {"NearestWeekdayToFebruary30", "0 0 30W 2 *", {}},
      {"ThirtyBeforeTheEndOfFebruary", "0 0 L-29 2 *", {}},
      {"FifthSaturdayOfFebruary2027", "0 0 0 ? 2 6#5 2027", {}},
      {"February30WithEverySecond", "* * * 30 2 *", {}},
  };
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Errors, CronParserNeverFires,
                         ::testing::ValuesIn(NeverCases()),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

TEST(CronParserNeverFires, DayMatchAllThatNoDaySatisfiesIsRejected) {
  // With DayMatch::kAll no shortcut through the fields applies: the check
  // evaluates each distinct month shape (month, length, weekday of the 1st)
  // once. The bound is generous for a loaded CI machine; it still fails for
  // anything that searches month by month, day by day or second by second.
  for (absl::string_view expr :
       {"0 0 1 * 1#2", "0 0 L * 1#1", "0 0 31 * 2#1"}) {
    const absl::Time start = absl::Now();
    EXPECT_THAT(
        Schedule::Parse(expr, AllDays()),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("never fires")))
        << expr;
    EXPECT_LT(absl::Now() - start, absl::Milliseconds(100)) << expr;
  }
}

TEST(CronParserNeverFires, RareButPossibleSchedulesAreAccepted) {
  EXPECT_THAT(Schedule::Parse("0 0 0 29 2 ? 2100-2104"),
              IsOk());  // 2104 is a leap year
  EXPECT_THAT(Schedule::Parse("0 0 29 2 1", AllDays()),
              IsOk());  // Monday 2044-02-29
  EXPECT_THAT(Schedule::Parse("0 0 0 ? 2 2#5 *"),
              IsOk());  // a fifth Tuesday in Feb 2028
  EXPECT_THAT(Schedule::Parse("0 0 13 * 5", AllDays()),
              IsOk());  // Friday the 13th
  EXPECT_THAT(Schedule::Parse("59 59 23 31 12 ? 2399"), IsOk());
  EXPECT_THAT(Schedule::Parse("0 0 0 1 1 ? 1970"), IsOk());
}

// ---------------------------------------------------------------------------------------------
// The syntax tree.

const Field& F(const ParsedExpression& p, FieldId id) {
  return p.fields[static_cast<int>(id)];
}

TEST(CronParserTree, FiveFieldsImplySecondZeroAndEveryYear) {
  auto p = ParseExpression("*/15 9-17 * * MON-FRI", {});
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->dialect, Dialect::kVixie);
  EXPECT_EQ(p->zone, "UTC");
  EXPECT_TRUE(p->macro.empty());

  const Field& second = F(*p, FieldId::kSecond);
  EXPECT_TRUE(second.text.empty());
  EXPECT_TRUE(second.star());  // implied
  ASSERT_EQ(second.items.size(), 1u);
  EXPECT_EQ(second.items[0].lo, 0);
  EXPECT_EQ(second.items[0].hi, 0);

  const Field& minute = F(*p, FieldId::kMinute);
  EXPECT_EQ(minute.text, "*/15");
  EXPECT_EQ(minute.column, 1);
  ASSERT_EQ(minute.items.size(), 1u);
  EXPECT_TRUE(minute.items[0].star);
  EXPECT_EQ(minute.items[0].lo, 0);
  EXPECT_EQ(minute.items[0].hi, 59);
  EXPECT_EQ(minute.items[0].step, 15);

  const Field& hour = F(*p, FieldId::kHour);
  EXPECT_EQ(hour.text, "9-17");
  EXPECT_EQ(hour.column, 6);
  EXPECT_FALSE(hour.star());
  ASSERT_EQ(hour.items.size(), 1u);
  EXPECT_EQ(hour.items[0].lo, 9);
  EXPECT_EQ(hour.items[0].hi, 17);
  EXPECT_EQ(hour.items[0].step, 1);
  EXPECT_FALSE(hour.items[0].single);

  EXPECT_EQ(F(*p, FieldId::kDayOfMonth).column, 11);
  EXPECT_TRUE(F(*p, FieldId::kDayOfMonth).star());
  EXPECT_EQ(F(*p, FieldId::kMonth).column, 13);

  const Field& dow = F(*p, FieldId::kDayOfWeek);
  EXPECT_EQ(dow.column, 15);
  ASSERT_EQ(dow.items.size(), 1u);
  EXPECT_EQ(dow.items[0].lo, 1);
  EXPECT_EQ(dow.items[0].hi, 5);

  const Field& year = F(*p, FieldId::kYear);
  EXPECT_TRUE(year.text.empty());
  ASSERT_EQ(year.items.size(), 1u);
  EXPECT_TRUE(year.items[0].star);
  EXPECT_EQ(year.items[0].lo, kMinYear);
  EXPECT_EQ(year.items[0].hi, kMaxYear);
}

TEST(CronParserTree, PrefixSevenFieldsAndColumns) {
  auto p = ParseExpression("CRON_TZ=Europe/Berlin 30 0 9 * * * 2030",
                           Zone("Asia/Tokyo"));
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->zone, "Europe/Berlin");
  EXPECT_EQ(p->dialect, Dialect::kSeconds);
  EXPECT_EQ(F(*p, FieldId::kSecond).text, "30");
  EXPECT_EQ(F(*p, FieldId::kSecond).column, 23);
  EXPECT_EQ(F(*p, FieldId::kHour).column, 28);
  EXPECT_EQ(F(*p, FieldId::kYear).text, "2030");
  EXPECT_EQ(F(*p, FieldId::kYear).column, 36);
  ASSERT_EQ(F(*p, FieldId::kYear).items.size(), 1u);
  EXPECT_TRUE(F(*p, FieldId::kYear).items[0].single);
  EXPECT_EQ(F(*p, FieldId::kYear).items[0].lo, 2030);
}

TEST(CronParserTree, TzPrefixIsCaseInsensitive) {
  auto p = ParseExpression("tz=America/New_York 0 9 * * *", {});
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->zone, "America/New_York");
}

TEST(CronParserTree, MacroExpandsToFieldsPointingAtTheMacro) {
  auto p = ParseExpression("TZ=UTC @daily", {});
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->macro, "@daily");
  EXPECT_EQ(p->dialect, Dialect::kVixie);
  for (FieldId id : {FieldId::kMinute, FieldId::kHour, FieldId::kDayOfMonth,
                     FieldId::kMonth, FieldId::kDayOfWeek}) {
    EXPECT_EQ(F(*p, id).column, 8) << FieldName(id);
  }
  const Field& hour = F(*p, FieldId::kHour);
  ASSERT_EQ(hour.items.size(), 1u);
  EXPECT_EQ(hour.items[0].lo, 0);
  EXPECT_EQ(hour.items[0].hi, 0);
  EXPECT_FALSE(hour.star());
  EXPECT_TRUE(F(*p, FieldId::kDayOfMonth).star());
}

TEST(CronParserTree, WeeklyIsSunday) {
  auto p = ParseExpression("@weekly", {});
  ASSERT_THAT(p, IsOk());
  const Field& dow = F(*p, FieldId::kDayOfWeek);
  ASSERT_EQ(dow.items.size(), 1u);
  EXPECT_EQ(dow.items[0].lo, 0);
  EXPECT_FALSE(dow.star());
}

TEST(CronParserTree, EveryCarriesItsPeriod) {
  auto p = ParseExpression("@every 1h30m", {});
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->macro, "@every");
  EXPECT_EQ(p->every_ms, 90 * 60 * 1000);
}

TEST(CronParserTree, DaySpecials) {
  auto p = ParseExpression("0 0 L-3,LW,15W,L * 5L,FRI#2,7#1", {});
  ASSERT_THAT(p, IsOk());
  const auto& dom = F(*p, FieldId::kDayOfMonth).items;
  ASSERT_EQ(dom.size(), 4u);
  EXPECT_EQ(dom[0].kind, Item::Kind::kLastDay);
  EXPECT_EQ(dom[0].n, 3);
  EXPECT_EQ(dom[1].kind, Item::Kind::kLastWeekday);
  EXPECT_EQ(dom[2].kind, Item::Kind::kNearestWeekday);
  EXPECT_EQ(dom[2].lo, 15);
  EXPECT_EQ(dom[3].kind, Item::Kind::kLastDay);
  EXPECT_EQ(dom[3].n, 0);
  const auto& dow = F(*p, FieldId::kDayOfWeek).items;
  ASSERT_EQ(dow.size(), 3u);
  EXPECT_EQ(dow[0].kind, Item::Kind::kLastOfWeekday);
  EXPECT_EQ(dow[0].lo, 5);
  EXPECT_EQ(dow[1].kind, Item::Kind::kNthOfWeekday);
  EXPECT_EQ(dow[1].lo, 5);
  EXPECT_EQ(dow[1].n, 2);
  EXPECT_EQ(dow[2].kind, Item::Kind::kNthOfWeekday);
  EXPECT_EQ(dow[2].lo, 0);  // 7 is Sunday
  EXPECT_EQ(dow[2].n, 1);
}

TEST(CronParserTree, WrappingRanges) {
  auto p = ParseExpression("0 22-2 * NOV-FEB FRI-MON", {});
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(F(*p, FieldId::kHour).items[0].lo, 22);
  EXPECT_EQ(F(*p, FieldId::kHour).items[0].hi, 2);
  EXPECT_EQ(F(*p, FieldId::kMonth).items[0].lo, 11);
  EXPECT_EQ(F(*p, FieldId::kMonth).items[0].hi, 2);
  EXPECT_EQ(F(*p, FieldId::kDayOfWeek).items[0].lo, 5);
  EXPECT_EQ(F(*p, FieldId::kDayOfWeek).items[0].hi, 1);

  auto weekend = ParseExpression("0 0 * * SAT-SUN", {});
  ASSERT_THAT(weekend, IsOk());
  EXPECT_EQ(F(*weekend, FieldId::kDayOfWeek).items[0].lo, 6);
  EXPECT_EQ(F(*weekend, FieldId::kDayOfWeek).items[0].hi, 0);
}

TEST(CronParserTree, QuartzWeekdaysAreNormalizedToSundayZero) {
  auto p =
      ParseExpression("0 0 0 ? * 6#3,1,2-6", WithDialect(Dialect::kQuartz));
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->dialect, Dialect::kQuartz);
  const auto& dow = F(*p, FieldId::kDayOfWeek).items;
  ASSERT_EQ(dow.size(), 3u);
  EXPECT_EQ(dow[0].kind, Item::Kind::kNthOfWeekday);
  EXPECT_EQ(dow[0].lo, 5);  // Friday
  EXPECT_EQ(dow[0].n, 3);
  EXPECT_EQ(dow[1].lo, 0);  // Sunday
  EXPECT_EQ(dow[2].lo, 1);  // Monday
  EXPECT_EQ(dow[2].hi, 5);  // Friday
}

TEST(CronParserTree, QuestionMarkIsAStar) {
  auto p = ParseExpression("0 0 ? * 1", {});
  ASSERT_THAT(p, IsOk());
  EXPECT_TRUE(F(*p, FieldId::kDayOfMonth).star());
  EXPECT_TRUE(F(*p, FieldId::kDayOfMonth).items[0].star);
  EXPECT_FALSE(F(*p, FieldId::kDayOfWeek).star());
}

TEST(CronParserTree, ListItemsInOrder) {
  auto p = ParseExpression("1,5-7,*/20,30/10 * * * *", {});
  ASSERT_THAT(p, IsOk());
  const auto& m = F(*p, FieldId::kMinute).items;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(m[0].single);
  EXPECT_EQ(m[0].lo, 1);
  EXPECT_EQ(m[1].lo, 5);
  EXPECT_EQ(m[1].hi, 7);
  EXPECT_TRUE(m[2].star);
  EXPECT_EQ(m[2].step, 20);
  EXPECT_EQ(m[3].lo, 30);  // `a/s` runs to the end of the field
  EXPECT_EQ(m[3].hi, 59);
  EXPECT_EQ(m[3].step, 10);
  EXPECT_FALSE(m[3].star);
}

TEST(CronParserTree, HashedItemsAreMarkedAndInRange) {
  auto p = ParseExpression("H(0-29)/10 H * * *", Keyed("nightly-report"));
  ASSERT_THAT(p, IsOk());
  const Item& minute = F(*p, FieldId::kMinute).items[0];
  EXPECT_TRUE(minute.hashed);
  EXPECT_EQ(minute.step, 10);
  EXPECT_GE(minute.lo, 0);
  EXPECT_LT(minute.lo, 10);
  EXPECT_EQ(minute.hi, 29);
  const Item& hour = F(*p, FieldId::kHour).items[0];
  EXPECT_TRUE(hour.hashed);
  EXPECT_TRUE(hour.single);
  EXPECT_EQ(hour.lo, hour.hi);
  EXPECT_LE(hour.lo, 23);
}

TEST(CronParserTree, FieldNamesAndDomains) {
  EXPECT_EQ(FieldName(FieldId::kSecond), "second");
  EXPECT_EQ(FieldName(FieldId::kDayOfMonth), "day-of-month");
  EXPECT_EQ(FieldName(FieldId::kDayOfWeek), "day-of-week");
  EXPECT_EQ(FieldName(FieldId::kYear), "year");
  EXPECT_EQ(FieldMin(FieldId::kDayOfMonth), 1);
  EXPECT_EQ(FieldMax(FieldId::kDayOfWeek), 7);
  EXPECT_EQ(FieldMin(FieldId::kYear), kMinYear);
  EXPECT_EQ(FieldMax(FieldId::kYear), kMaxYear);
}

// ---------------------------------------------------------------------------------------------
// Durations for @every.

TEST(CronParserDuration, ParsesUnitsAndSums) {
  EXPECT_THAT(ParseDurationMs("90s"), IsOkAndHolds(90'000));
  EXPECT_THAT(ParseDurationMs("1h30m"), IsOkAndHolds(5'400'000));
  EXPECT_THAT(ParseDurationMs("1d"), IsOkAndHolds(86'400'000));
  EXPECT_THAT(ParseDurationMs("500ms"), IsOkAndHolds(500));
  EXPECT_THAT(ParseDurationMs("1m30s250ms"), IsOkAndHolds(90'250));
  EXPECT_THAT(ParseDurationMs("2h2h"), IsOkAndHolds(4 * 3'600'000));
}

TEST(CronParserDuration, RejectsMalformedDurations) {
  for (absl::string_view bad :
       {"", "0s", "0ms", "5x", "-1s", "s", "90", "1h30", "1.5h", " 1s"}) {
    EXPECT_THAT(ParseDurationMs(bad),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

}  // namespace
}  // namespace chime::cron::internal
