// Tests of the scenario runner itself: the file format round-trips, mismatches
// are reported where they are, and mistakes in a scenario are errors rather
// than silent defaults.
#include "tests/scenarios/scenario_runner.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chime::scenarios {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ScenarioFile, RenderingTheExpectedOutputsGivesBackTheFileExactly) {
  const std::string text =
      "# comment\n"
      "\n"
      "add-job id=a cron=\"*/5 * * * *\"\n"
      "  overlap=skip\n"
      "----\n"
      "job a: generation 1\n"
      "\n"
      "\n"
      "# between cases\n"
      "counters\n"
      "----\n"
      "\n"
      "advance 1m\n"
      "----\n"
      "line one\n"
      "line two\n";
  auto file = ParseScenarioFile(text);
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<std::vector<std::string>> outputs;
  for (const auto& piece : file->pieces) {
    if (piece.scenario_case) outputs.push_back(piece.scenario_case->expected);
  }
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_THAT(outputs[0], ElementsAre("job a: generation 1"));
  EXPECT_TRUE(outputs[1].empty());
  EXPECT_THAT(outputs[2], ElementsAre("line one", "line two"));
  EXPECT_EQ(RenderScenarioFile(*file, outputs), text);
}

TEST(ScenarioFile, ACommandWithoutItsSeparatorIsAnErrorNamingTheLine) {
  auto file = ParseScenarioFile("# x\nadvance 1m\n\ncounters\n----\n");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("line 3"));
  EXPECT_THAT(file.status().message(), HasSubstr("line 2"));
}

TEST(ScenarioRunner, AMismatchIsReportedAsADiffAtTheCommandsLine) {
  const std::string text =
      "add-job id=a cron=\"0 * * * *\"\n"
      "----\n"
      "2026-01-01 00:00:00 persist #1 token=1\n"
      "  watermark a:1 2026-01-01T00:00:00Z\n"
      "job a: generation 1, next fire 2026-01-01T01:00:00Z\n"
      "\n"
      "next-fire a\n"
      "----\n"
      "next fire a 2026-01-01T02:00:00Z\n";
  auto result = RunScenarioText(text, "t.txt");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->cases, 2);
  EXPECT_THAT(result->diff, HasSubstr("t.txt:7: next-fire a"));
  EXPECT_THAT(result->diff, HasSubstr("- next fire a 2026-01-01T02:00:00Z"));
  EXPECT_THAT(result->diff, HasSubstr("+ next fire a 2026-01-01T01:00:00Z"));
  EXPECT_THAT(result->diff, ::testing::Not(HasSubstr("t.txt:1:")));
  EXPECT_THAT(result->rewritten,
              HasSubstr("----\nnext fire a 2026-01-01T01:00:00Z\n"));
}

TEST(ScenarioRunner, AMisspeltKeyIsAnErrorAndAddsNoJob) {
  ScenarioRunner runner;
  EXPECT_THAT(runner.Run("add-job id=a cron=\"0 * * * *\" overlpa=skip"),
              ElementsAre("error: add-job: unknown key \"overlpa\""));
  EXPECT_THAT(runner.Run("next-fire a"), ElementsAre("next fire a none"));
}

TEST(ScenarioRunner, AQuotedValueKeepsItsSpacesAndEqualsSigns) {
  ScenarioRunner runner;
  EXPECT_THAT(
      runner.Run("add-job id=a cron=\"CRON_TZ=Europe/Berlin 30 2 * * *\""),
      ElementsAre("2026-01-01 00:00:00 persist #1 token=1",
                  "  watermark a:1 2026-01-01T00:00:00Z",
                  "job a: generation 1, next fire 2026-01-01T01:30:00Z"));
}

TEST(ScenarioDuration, AcceptsTheUnitsScenariosUse) {
  EXPECT_EQ(*ParseScenarioDuration("90s"), absl::Seconds(90));
  EXPECT_EQ(*ParseScenarioDuration("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseScenarioDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseScenarioDuration("1.5s"), absl::Milliseconds(1500));
  EXPECT_EQ(*ParseScenarioDuration("2d"), absl::Hours(48));
  EXPECT_EQ(*ParseScenarioDuration("-1h"), -absl::Hours(1));
  EXPECT_EQ(*ParseScenarioDuration("+10m"), absl::Minutes(10));
  EXPECT_EQ(*ParseScenarioDuration("0"), absl::ZeroDuration());
  EXPECT_EQ(*ParseScenarioDuration("inf"), absl::InfiniteDuration());
  EXPECT_FALSE(ParseScenarioDuration("12").ok());
  EXPECT_FALSE(ParseScenarioDuration("5 m").ok());
  EXPECT_FALSE(ParseScenarioDuration("1w").ok());
  EXPECT_FALSE(ParseScenarioDuration("").ok());
}

}  // namespace
}  // namespace chime::scenarios
