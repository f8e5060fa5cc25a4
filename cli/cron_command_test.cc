#include "cli/cron_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "cli/app.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace chime::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

// Expected instants below come from Python's zoneinfo, e.g.
//   datetime(2026, 3, 28, 2, 30, tzinfo=ZoneInfo("Europe/Berlin"))
//       .astimezone(timezone.utc)
// and from the DST rules in include/chime/cron.h. Europe/Berlin springs forward
// on Sunday 2026-03-29 at 01:00Z (02:00 CET -> 03:00 CEST) and falls back on
// Sunday 2026-10-25 at 01:00Z (03:00 CEST -> 02:00 CET).

// "Now" for every in-process run: Saturday 2026-03-28 00:00:00Z.
const absl::Time kNow = absl::FromUnixSeconds(1774656000);

struct Result {
  int status;
  std::string out;
  std::string err;
};

Result Chime(std::vector<std::string> args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  const Io io{in, out, err, kNow};
  std::vector<const char*> argv = {"chime"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  const int status =
      RunCli(static_cast<int>(argv.size()), argv.data(), io, {AddCronCommand});
  return {status, out.str(), err.str()};
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// ---- cron next ----

TEST(CronNext, PrintsLocalTimeWithOffsetAndUtcAcrossSpringForward) {
  const Result r = Chime({"cron", "next", "30 2 * * *", "--tz", "Europe/Berlin",
                          "--from", "2026-03-28T00:00:00Z", "-n", "3"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.err, IsEmpty());
  // 02:30 does not exist on the 29th: the fixed-hour fire runs at the
  // transition, 03:00 CEST.
  EXPECT_THAT(
      Lines(r.out),
      ElementsAre(
          "Sat 2026-03-28 02:30:00 CET (+01:00)    2026-03-28T01:30:00Z",
          "Sun 2026-03-29 03:00:00 CEST (+02:00)   2026-03-29T01:00:00Z",
          "Mon 2026-03-30 02:30:00 CEST (+02:00)   2026-03-30T00:30:00Z"));
}

TEST(CronNext, JsonPrintsExpressionZoneAndUtcTimes) {
  const Result r =
      Chime({"cron", "next", "30 2 * * *", "--tz", "Europe/Berlin", "--from",
             "2026-03-28T00:00:00Z", "-n", "3", "--json"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "{\"expr\":\"30 2 * * "
            "*\",\"tz\":\"Europe/Berlin\",\"next\":[\"2026-03-28T01:30:00Z\","
            "\"2026-03-29T01:00:00Z\",\"2026-03-30T00:30:00Z\"]}\n");
}

TEST(CronNext, DefaultsToFiveTimesAfterNowInUtc) {
  const Result r = Chime({"cron", "next", "0 12 * * *", "--json"});
  EXPECT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tz"], "UTC");
  EXPECT_EQ(j["next"],
            nlohmann::json({"2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z",
                            "2026-03-30T12:00:00Z", "2026-03-31T12:00:00Z",
                            "2026-04-01T12:00:00Z"}));
}

TEST(CronNext, FromAcceptsAnOffsetAndListsTimesStrictlyAfterIt) {
  // 2026-03-28T13:00:00+01:00 is 12:00Z: the 12:00Z fire of that day is not
  // after it.
  const Result r = Chime({"cron", "next", "0 12 * * *", "--from",
                          "2026-03-28T13:00:00+01:00", "-n", "1", "--json"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("\"next\":[\"2026-03-29T12:00:00Z\"]"));
}

TEST(CronNext, CronTzPrefixOverridesTzAndIsReported) {
  const Result r = Chime(
      {"cron", "next", "CRON_TZ=America/New_York 0 9 * * MON-FRI", "--tz",
       "Europe/Berlin", "--from", "2026-03-06T00:00:00Z", "-n", "2", "--json"});
  EXPECT_EQ(r.status, 0);
  // Friday 09:00 EST, then Monday 09:00 EDT (New York sprang forward on Sunday
  // 2026-03-08).
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "\"tz\":\"America/New_York\",\"next\":[\"2026-03-06T14:00:00Z\","
          "\"2026-03-09T13:00:00Z\"]"));
}

TEST(CronNext, DstGapSkipOmitsTheNonexistentFire) {
  const Result r = Chime({"cron", "next", "30 2 * * *", "--tz", "Europe/Berlin",
                          "-n", "2", "--dst-gap", "skip", "--json"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out,
              HasSubstr("[\"2026-03-28T01:30:00Z\",\"2026-03-30T00:30:00Z\"]"));
}

TEST(CronNext, DstRepeatTwiceFiresInBothPasses) {
  const Result r = Chime({"cron", "next", "30 2 * * *", "--tz", "Europe/Berlin",
                          "--from", "2026-10-24T12:00:00Z", "-n", "3",
                          "--dst-repeat", "twice", "--json"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out,
              HasSubstr("[\"2026-10-25T00:30:00Z\",\"2026-10-25T01:30:00Z\","
                        "\"2026-10-26T01:30:00Z\"]"));
}

TEST(CronNext, DialectQuartzNumbersSundayAsOne) {
  // Day-of-week 2 is Monday in Quartz and Tuesday otherwise; 2026-03-30 is a
  // Monday.
  const Result quartz = Chime({"cron", "next", "0 0 12 ? * 2", "--dialect",
                               "quartz", "-n", "1", "--json"});
  const Result seconds =
      Chime({"cron", "next", "0 0 12 ? * 2", "-n", "1", "--json"});
  EXPECT_THAT(quartz.out, HasSubstr("[\"2026-03-30T12:00:00Z\"]"));
  EXPECT_THAT(seconds.out, HasSubstr("[\"2026-03-31T12:00:00Z\"]"));
}

TEST(CronNext, SaysSoWhenTheScheduleEnds) {
  const Result r = Chime({"cron", "next", "0 0 0 1 1 ? 2399", "-n", "3"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(Lines(r.out),
              ElementsAre(HasSubstr("2399-01-01T00:00:00Z"),
                          "(no more fire times before the end of 2399)"));
}

// ---- errors and exit codes ----

TEST(CronNext, BadExpressionPrintsTheEngineMessageAndExits2) {
  const Result r = Chime({"cron", "next", "0 0 32 * *"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_EQ(r.err,
            "chime: day-of-month: 32 is outside 1-31 (field 3, column 5)\n");
}

TEST(CronNext, UnknownZoneExits2) {
  const Result r =
      Chime({"cron", "next", "0 2 * * *", "--tz", "Mars/Olympus_Mons"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, StartsWith("chime: time zone: "));
  EXPECT_THAT(r.err, HasSubstr("Mars/Olympus_Mons"));
}

TEST(CronNext, BadFromExits2NamingTheOption) {
  const Result r =
      Chime({"cron", "next", "0 2 * * *", "--from", "2026-03-29 00:30"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, StartsWith("chime: --from: time \"2026-03-29 00:30\": "));
}

TEST(CronNext, UsageErrorsExit2) {
  // No subcommand, no cron subcommand, an unknown option, -n out of range,
  // -n not a number, an unquoted expression, explain without EXPR.
  EXPECT_EQ(Chime({}).status, 2);
  EXPECT_EQ(Chime({"cron"}).status, 2);
  EXPECT_EQ(Chime({"cron", "next", "* * * * *", "--bogus"}).status, 2);
  EXPECT_EQ(Chime({"cron", "next", "* * * * *", "-n", "0"}).status, 2);
  EXPECT_EQ(Chime({"cron", "next", "* * * * *", "-n", "many"}).status, 2);
  EXPECT_EQ(Chime({"cron", "next", "*", "*", "*", "*", "*"}).status, 2);
  EXPECT_EQ(Chime({"cron", "explain"}).status, 2);
  const Result dialect =
      Chime({"cron", "next", "* * * * *", "--dialect", "unix"});
  EXPECT_EQ(dialect.status, 2);
  EXPECT_THAT(dialect.err,
              HasSubstr("\"unix\" is not one of auto|quartz|seconds|vixie"));
  const Result missing = Chime({"cron", "next"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err, HasSubstr("missing EXPR"));
}

TEST(CronNext, OptionNamesAreCaseInsensitive) {
  EXPECT_EQ(Chime({"cron", "next", "* * * * *", "--dst-gap", "SKIP",
                   "--day-match", "All"})
                .status,
            0);
}

TEST(CronNext, HelpDocumentsExitStatusAndExits0) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"cron", "next", "--help"},
                                             {"cron", "explain", "--help"}}) {
    const Result r = Chime(args);
    EXPECT_EQ(r.status, 0) << absl::StrJoin(args, " ");
    EXPECT_THAT(r.out, HasSubstr("Exit status: 0 success"))
        << absl::StrJoin(args, " ");
    EXPECT_THAT(r.out, HasSubstr("2 usage error or bad input"))
        << absl::StrJoin(args, " ");
  }
}

// ---- cron explain ----

TEST(CronExplain, FixedHourScheduleOnSpringForwardRunsAtTheTransition) {
  const Result r =
      Chime({"cron", "explain", "30 2 * * *", "--tz", "Europe/Berlin", "--from",
             "2026-03-28T00:00:00Z", "-n", "3"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("Expression:  30 2 * * *\n"));
  EXPECT_THAT(r.out, HasSubstr("Time zone:   Europe/Berlin\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "  Sun 2026-03-29 03:00:00 CEST (+02:00)   2026-03-29T01:00:00Z\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr("  2026-03-29 02:00 -> 03:00 CET->CEST (+01:00 -> +02:00): "
                "clocks spring "
                "forward; wall times 02:00-02:59 do not exist; this schedule "
                "names fixed "
                "hours, so a fire in that gap runs at 03:00 (gap policy "
                "run_at_transition): its fire at 02:30 runs at 03:00 CEST\n"));
}

TEST(CronExplain, SeveralFixedHourFiresInTheGapRunOnceAtTheTransition) {
  const Result r =
      Chime({"cron", "explain", "*/15 2 * * *", "--tz", "Europe/Berlin",
             "--from", "2026-03-29T00:00:00Z", "-n", "2"});
  EXPECT_EQ(r.status, 0);
  // 02:00, 02:15, 02:30 and 02:45 do not exist: one run at 03:00 CEST, then
  // Monday 02:00 CEST.
  EXPECT_THAT(r.out, HasSubstr("2026-03-29T01:00:00Z\n"
                               "  Mon 2026-03-30 02:00:00 CEST (+02:00)   "
                               "2026-03-30T00:00:00Z\n"));
  EXPECT_THAT(r.out, HasSubstr("its fires at 02:00, 02:15, 02:30 and 1 more "
                               "run at 03:00 CEST, once\n"));
}

TEST(CronExplain, FixedHourScheduleOnSpringForwardWithSkipPolicy) {
  const Result r =
      Chime({"cron", "explain", "30 2 * * *", "--tz", "Europe/Berlin", "--from",
             "2026-03-28T00:00:00Z", "-n", "3", "--dst-gap", "skip"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, Not(HasSubstr("2026-03-29T01:00:00Z")));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "this schedule names fixed hours, so a fire in that gap does not "
          "run that day (gap policy skip): its fire at 02:30 is skipped\n"));
}

TEST(CronExplain, FixedHourScheduleOnFallBackRunsOnceAtTheFirstOccurrence) {
  const Result r =
      Chime({"cron", "explain", "30 2 * * *", "--tz", "Europe/Berlin", "--from",
             "2026-10-24T12:00:00Z", "-n", "2"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "  Sun 2026-10-25 02:30:00 CEST (+02:00)   2026-10-25T00:30:00Z\n"
          "  Mon 2026-10-26 02:30:00 CET (+01:00)    2026-10-26T01:30:00Z\n"));
  EXPECT_THAT(r.out, HasSubstr("  2026-10-25 03:00 -> 02:00 CEST->CET (+02:00 "
                               "-> +01:00): clocks fall "
                               "back; wall times 02:00-02:59 happen twice; "
                               "fixed-hour fires in it run "
                               "once, at the first occurrence (repeat policy "
                               "once): this schedule's fire "
                               "at 02:30 runs in CEST (+02:00) only\n"));
}

TEST(CronExplain, WildcardHourScheduleOnFallBackRunsInBothPasses) {
  const Result r =
      Chime({"cron", "explain", "*/30 * * * *", "--tz", "Europe/Berlin",
             "--from", "2026-10-25T00:00:00Z", "-n", "4"});
  EXPECT_EQ(r.status, 0);
  // 02:30 CEST, then 02:00 and 02:30 again in CET, then 03:00 CET.
  EXPECT_THAT(r.out, HasSubstr("2026-10-25T00:30:00Z\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "  Sun 2026-10-25 02:00:00 CET (+01:00)    2026-10-25T01:00:00Z\n"
          "  Sun 2026-10-25 02:30:00 CET (+01:00)    2026-10-25T01:30:00Z\n"
          "  Sun 2026-10-25 03:00:00 CET (+01:00)    2026-10-25T02:00:00Z\n"));
  EXPECT_THAT(r.out, HasSubstr("clocks fall back; wall times 02:00-02:59 "
                               "happen twice; this schedule runs "
                               "in real time: its fires at 02:00 and 02:30 "
                               "happen in both passes, first "
                               "at CEST (+02:00) then at CET (+01:00)\n"));
}

TEST(CronExplain, WildcardHourScheduleOnSpringForwardLosesTheMissingHour) {
  const Result r =
      Chime({"cron", "explain", "0 * * * *", "--tz", "Europe/Berlin", "--from",
             "2026-03-28T23:30:00Z", "-n", "3"});
  EXPECT_EQ(r.status, 0);
  // 01:00 CET, then 03:00 CEST one real hour later: there is no 02:00.
  EXPECT_THAT(r.out, HasSubstr("2026-03-29T00:00:00Z\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "  Sun 2026-03-29 03:00:00 CEST (+02:00)   2026-03-29T01:00:00Z\n"
          "  Sun 2026-03-29 04:00:00 CEST (+02:00)   2026-03-29T02:00:00Z\n"));
  EXPECT_THAT(r.out, HasSubstr("clocks spring forward; wall times 02:00-02:59 "
                               "do not exist; this schedule "
                               "runs in real time: its fire at 02:00 does not "
                               "happen that day; its other "
                               "fires are unaffected\n"));
}

TEST(CronExplain, FixedHoursOutsideTheGapAreUnaffected) {
  const Result r =
      Chime({"cron", "explain", "0 9 * * *", "--tz", "Europe/Berlin", "--from",
             "2026-03-28T12:00:00Z", "-n", "2"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "(gap policy run_at_transition); none of its times falls in the "
          "gap, so it is unaffected\n"));
}

TEST(CronExplain, EveryScheduleIgnoresDaylightSaving) {
  const Result r =
      Chime({"cron", "explain", "@every 90m", "--tz", "Europe/Berlin", "--from",
             "2026-03-28T23:00:00Z", "-n", "3"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "an @every schedule counts real time, so it is not affected: it "
          "keeps firing every 1h30m\n"));
}

TEST(CronExplain, SaysSoWhenNoOffsetChangeIsCrossed) {
  const Result r = Chime({"cron", "explain", "0 12 * * *", "-n", "2"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out,
              HasSubstr("Next 2 fire times after 2026-03-28T00:00:00Z:\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "No UTC offset change in UTC between 2026-03-28T00:00:00Z and the "
          "last fire time.\n"));
}

TEST(CronExplain, BadExpressionExits2) {
  const Result r = Chime({"cron", "explain", "0 0 30 2 *"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, StartsWith("chime: "));
  EXPECT_THAT(r.err, HasSubstr("never fires"));
  EXPECT_THAT(r.out, IsEmpty());
}

// ---- batch mode ----

Result Batch(const std::string& input, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"cron", "next", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Chime(args, input);
}

TEST(CronBatch, AnswersEachLineInOrderEchoingIds) {
  const Result r = Batch(
      "{\"id\":1,\"expr\":\"30 2 * * "
      "*\",\"tz\":\"Europe/Berlin\",\"start\":\"2026-03-28T00:00:00Z\","
      "\"n\":3}\n"
      "{\"id\":\"b\",\"expr\":\"0 12 * * "
      "*\",\"start\":\"2026-03-28T12:00:00Z\",\"n\":2}\n"
      "{\"id\":{\"job\":[1,2]},\"expr\":\"0 0 12 ? * "
      "2\",\"dialect\":\"quartz\",\"n\":1}\n"
      "{\"id\":null,\"expr\":\"0 0 12 ? * "
      "2\",\"dialect\":\"seconds\",\"n\":1}\n"
      "{\"expr\":\"@daily\",\"start\":\"2026-03-28T02:00:00+02:00\"}\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_THAT(
      Lines(r.out),
      ElementsAre(
          "{\"id\":1,\"next\":[\"2026-03-28T01:30:00Z\",\"2026-03-29T01:00:"
          "00Z\","
          "\"2026-03-30T00:30:00Z\"]}",
          // UTC by default; strictly after the start, so not
          // 2026-03-28T12:00:00Z itself.
          "{\"id\":\"b\",\"next\":[\"2026-03-29T12:00:00Z\",\"2026-03-30T12:00:"
          "00Z\"]}",
          // No start: now. Same expression, other dialect: Monday, then
          // Tuesday.
          "{\"id\":{\"job\":[1,2]},\"next\":[\"2026-03-30T12:00:00Z\"]}",
          "{\"id\":null,\"next\":[\"2026-03-31T12:00:00Z\"]}",
          // No id, no tz, no n: five midnights UTC after 2026-03-28T00:00:00Z.
          "{\"next\":[\"2026-03-29T00:00:00Z\",\"2026-03-30T00:00:00Z\",\"2026-"
          "03-31T00:00:00Z\","
          "\"2026-04-01T00:00:00Z\",\"2026-04-02T00:00:00Z\"]}"));
}

TEST(CronBatch, SameExpressionInOtherZonesGetsOtherAnswers) {
  const Result r = Batch(
      "{\"id\":1,\"expr\":\"0 9 * * *\",\"tz\":\"Europe/Berlin\",\"n\":1}\n"
      "{\"id\":2,\"expr\":\"0 9 * * *\",\"tz\":\"America/New_York\",\"n\":1}\n"
      "{\"id\":3,\"expr\":\"0 9 * * *\",\"tz\":\"Europe/Berlin\",\"n\":1}\n");
  // 09:00 CET = 08:00Z; 09:00 EDT = 13:00Z.
  EXPECT_THAT(Lines(r.out),
              ElementsAre("{\"id\":1,\"next\":[\"2026-03-28T08:00:00Z\"]}",
                          "{\"id\":2,\"next\":[\"2026-03-28T13:00:00Z\"]}",
                          "{\"id\":3,\"next\":[\"2026-03-28T08:00:00Z\"]}"));
}

TEST(CronBatch, BadCasesGetAnErrorLineAndTheBatchGoesOn) {
  const Result r = Batch(
      "{\"id\":1,\"expr\":\"0 2 * * *\"\n"
      "[1,2]\n"
      "{\"id\":3}\n"
      "{\"id\":4,\"expr\":42}\n"
      "{\"id\":5,\"expr\":\"0 2 * * *\",\"start\":\"yesterday\"}\n"
      "{\"id\":6,\"expr\":\"0 0 32 * *\"}\n"
      "{\"id\":7,\"expr\":\"0 2 * * *\",\"tz\":\"Mars/Olympus_Mons\"}\n"
      "{\"id\":8,\"expr\":\"0 2 * * *\",\"n\":-1}\n"
      "{\"id\":9,\"expr\":\"0 2 * * *\",\"n\":2.5}\n"
      "{\"id\":10,\"expr\":\"0 2 * * *\",\"dialect\":\"unix\"}\n"
      "\n"
      "   \n"
      "{\"id\":13,\"expr\":\"0 2 * * *\",\"n\":1}\n");
  EXPECT_EQ(r.status, 0);
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 11u) << r.out;
  EXPECT_THAT(
      lines[0],
      StartsWith("{\"error\":\"line 1: invalid JSON: parse error at line 1, "));
  EXPECT_EQ(lines[1],
            "{\"error\":\"line 2: expected a JSON object, found array\"}");
  EXPECT_EQ(lines[2], "{\"id\":3,\"error\":\"missing \\\"expr\\\"\"}");
  EXPECT_EQ(lines[3], "{\"id\":4,\"error\":\"\\\"expr\\\" must be a string\"}");
  EXPECT_THAT(
      lines[4],
      StartsWith("{\"id\":5,\"error\":\"start: time \\\"yesterday\\\": "));
  EXPECT_EQ(lines[5],
            "{\"id\":6,\"error\":\"day-of-month: 32 is outside 1-31 (field 3, "
            "column 5)\"}");
  EXPECT_THAT(lines[6], StartsWith("{\"id\":7,\"error\":\"time zone: "));
  EXPECT_EQ(
      lines[7],
      "{\"id\":8,\"error\":\"\\\"n\\\" must be an integer from 0 to 10000\"}");
  EXPECT_EQ(
      lines[8],
      "{\"id\":9,\"error\":\"\\\"n\\\" must be an integer from 0 to 10000\"}");
  EXPECT_THAT(lines[9],
              StartsWith("{\"id\":10,\"error\":\"\\\"dialect\\\" must be "));
  EXPECT_EQ(lines[10], "{\"id\":13,\"next\":[\"2026-03-28T02:00:00Z\"]}");
}

TEST(CronBatch, ReturnsFewerTimesWhenTheScheduleEnds) {
  const Result r = Batch("{\"id\":1,\"expr\":\"0 0 0 1 1 ? 2399\",\"n\":3}\n");
  EXPECT_EQ(r.out, "{\"id\":1,\"next\":[\"2399-01-01T00:00:00Z\"]}\n");
}

TEST(CronBatch, CommandLineOptionsAreDefaultsForEveryLine) {
  const Result r = Batch(
      "{\"id\":1,\"expr\":\"30 2 * * *\"}\n"
      "{\"id\":2,\"expr\":\"30 2 * * *\",\"tz\":\"UTC\"}\n",
      {"--tz", "Europe/Berlin", "-n", "2", "--from", "2026-03-28T12:00:00Z",
       "--dst-gap", "skip"});
  EXPECT_THAT(Lines(r.out), ElementsAre("{\"id\":1,\"next\":[\"2026-03-30T00:"
                                        "30:00Z\",\"2026-03-31T00:30:00Z\"]}",
                                        "{\"id\":2,\"next\":[\"2026-03-29T02:"
                                        "30:00Z\",\"2026-03-30T02:30:00Z\"]}"));
}

TEST(CronBatch, EscapedAndPlainSpellingsOfALineGetTheSameAnswer) {
  // The second spelling of each case forces the general JSON parser (an escape,
  // a nested value, a literal, whitespace, a repeated key): the answers must
  // not change.
  const std::vector<std::pair<std::string, std::string>> kSpellings = {
      {R"({"id":1,"expr":"30 2 * * *","tz":"Europe/Berlin","n":3})",
       R"({"id":1,"expr":"30 2 * * *","tz":"Europe\/Berlin","n":3})"},
      {R"({"id":"x","expr":"0 12 * * *","start":"2026-03-28T12:00:00Z"})",
       R"({"pad":[true,null],"id":"x","expr":"0 12 * * *","start":"2026-03-28T12:00:00Z"})"},
      {R"({"id":-7,"expr":"0 0 32 * *"})",
       R"( { "id" : -7 , "expr" : "0 0 32 * *" , "z":false } )"},
      {R"({"id":2,"expr":"0 2 * * *","n":0})",
       R"({"id":2,"expr":"0 2 * * *","n":5,"n":0})"},
      {R"({"id":3,"expr":"@hourly","n":"2"})",
       R"({"id":3,"expr":"@hourly","n":"\u0032"})"},
  };
  for (const auto& [plain, general] : kSpellings) {
    EXPECT_EQ(Batch(plain + "\n").out, Batch(general + "\n").out) << plain;
  }
}

TEST(CronBatch, EveryAnswerIsStrictlyIncreasingUtcSeconds) {
  std::string input;
  const char* kExprs[] = {"*/7 * * * *",  "30 2 * * *",    "0 0 29 2 *",
                          "0 9 L * *",    "0 0 0 ? * 6#5", "H H * * *",
                          "@every 1h15m", "*/20 1-3 * * *"};
  const char* kZones[] = {"UTC", "Europe/Berlin", "America/New_York",
                          "Australia/Lord_Howe"};
  int id = 0;
  for (const char* expr : kExprs) {
    for (const char* zone : kZones) {
      input += absl::StrCat(
          "{\"id\":", id++, ",\"expr\":\"", expr, "\",\"tz\":\"", zone,
          "\",\"start\":\"2026-03-20T00:00:00Z\",\"n\":40}\n");
    }
  }
  const std::vector<std::string> lines = Lines(Batch(input).out);
  ASSERT_EQ(lines.size(), static_cast<size_t>(id));
  for (const std::string& line : lines) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ASSERT_TRUE(j.contains("next")) << line;
    ASSERT_EQ(j["next"].size(), 40u) << line;
    absl::Time previous =
        absl::FromUnixSeconds(1773964800);  // 2026-03-20T00:00:00Z
    for (const auto& t : j["next"]) {
      absl::Time parsed;
      std::string err;
      ASSERT_TRUE(absl::ParseTime("%Y-%m-%dT%H:%M:%SZ", t.get<std::string>(),
                                  &parsed, &err))
          << line;
      EXPECT_GT(parsed, previous) << line;
      previous = parsed;
    }
  }
}

// ---- the real binary ----

struct ChildResult {
  int status;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

ChildResult RunChime(const std::string& args, const std::string& input) {
  // CTest runs tests in parallel processes: every call gets its own files.
  static int calls = 0;
  const std::string base =
      absl::StrCat(::testing::TempDir(), "/chime_", getpid(), "_", ++calls);
  const std::string in = base + "_in", out = base + "_out", err = base + "_err";
  std::ofstream(in) << input;
  const std::string command = absl::StrCat("'", CHIME_BINARY, "' ", args, " < ",
                                           in, " > ", out, " 2> ", err);
  const int rc = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(rc)) << command;
  return {WEXITSTATUS(rc), ReadFile(out), ReadFile(err)};
}

TEST(ChimeBinary, CronNextPrintsFireTimesAndExitsZero) {
  const ChildResult r = RunChime(
      "cron next '30 2 * * *' --tz Europe/Berlin --from 2026-03-28T00:00:00Z "
      "-n 2 --json",
      "");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"expr\":\"30 2 * * "
            "*\",\"tz\":\"Europe/Berlin\",\"next\":[\"2026-03-28T01:30:00Z\","
            "\"2026-03-29T01:00:00Z\"]}\n");
}

TEST(ChimeBinary, BadExpressionAndUsageErrorsExitTwo) {
  const ChildResult bad = RunChime("cron next '61 * * * *'", "");
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, StartsWith("chime: minute: 61 is outside 0-59"));
  EXPECT_EQ(RunChime("cron next '* * * * *' --no-such-option", "").status, 2);
}

TEST(ChimeBinary, BatchModeReadsStdinAndWritesOneLinePerCase) {
  const ChildResult r = RunChime(
      "cron next --json",
      "{\"id\":1,\"expr\":\"30 2 * * "
      "*\",\"tz\":\"Europe/Berlin\",\"start\":\"2026-03-28T00:00:00Z\","
      "\"n\":2}\n"
      "not json\n"
      "{\"id\":3,\"expr\":\"0 12 * * "
      "*\",\"start\":\"2026-03-28T12:00:00Z\",\"n\":1}\n");
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0],
            "{\"id\":1,\"next\":[\"2026-03-28T01:30:00Z\",\"2026-03-29T01:00:"
            "00Z\"]}");
  EXPECT_THAT(lines[1], StartsWith("{\"error\":\"line 2: invalid JSON"));
  EXPECT_EQ(lines[2], "{\"id\":3,\"next\":[\"2026-03-29T12:00:00Z\"]}");
}

}  // namespace
}  // namespace chime::cli
