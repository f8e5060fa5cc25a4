// A simulated year: a few hundred jobs with varied schedules in zones with and
// without daylight saving, driven through the Plan like the real driver would,
// every run finishing after a second. The fires claimed for each job must be
// exactly the cron engine's own fire times over the year (Schedule::NextN):
// none missed, none doubled, none invented.
//
// The second year steps the wall clock backwards (up to 3h) and forwards (up to
// 50m) every few days. A backward step must never re-run a claimed fire; a
// forward step makes the fires it skips due at once, and with a misfire
// threshold of 1h and overlap buffer_all they all still run -- so the claimed
// set must again be exactly the engine's.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "gtest/gtest.h"
#include "src/time/rfc3339.h"
#include "tests/scenarios/sim_driver.h"

namespace chime::scenarios {
namespace {

const absl::Time kStart = absl::FromCivil(
    absl::CivilSecond(2026, 1, 1, 0, 0, 0), absl::UTCTimeZone());
const absl::Time kEnd = kStart + absl::Hours(24 * 365);

// Expressions chosen to cross daylight-saving days in every way the engine
// distinguishes: wildcard hours (real time), fixed hours in a spring-forward
// gap or a repeated hour, steps, ranges, L/W/#, `H`, seconds, `@every`. The
// dense ones are limited to Sundays (and Saturdays) of the months in which
// zones change their clocks, which keeps the year fast under the sanitizers and
// still covers every 2026 transition day of these zones (all on weekends).
const char* const kExpressions[] = {
    "0 */3 * 3,4,9,10,11 0,6",
    "30 2 * * *",
    "30 1 * * *",
    "*/20 1-3 * 3,4,9,10,11 0",
    "0 0-23/6 * * 0",
    "15 3 * * MON-FRI",
    "0 12 L * *",
    "0 9 15W * *",
    "45 23 * * 5L",
    "0 4 1 */3 *",
    "@daily",
    "@weekly",
    "@every 29h17m",
    "H H * * *",
    "H(0-29)/10 2 * * 0",
    "30 30 2 * * *",
    "*/15 2 * * 0,6",
    "0 2 * * 0#2",
    "*/20 22-23 * 4,9 6",  // America/Santiago changes its clocks at Saturday
                           // midnight
};

// Zones with daylight saving in both hemispheres, half-hour and 45-minute
// offsets, a 30-minute DST shift (Lord Howe), and zones without DST.
const char* const kZones[] = {
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Australia/Sydney",
    "Pacific/Chatham",
    "America/Santiago",
    "Asia/Kolkata",
    "Europe/London",
    "America/St_Johns",
    "Pacific/Auckland",
    "America/Havana",
};

std::vector<JobSpec> YearJobs(bool tolerate_steps) {
  std::vector<JobSpec> jobs;
  int n = 0;
  for (const char* zone : kZones) {
    for (const char* expr : kExpressions) {
      JobSpec spec;
      spec.key.name_space = absl::StrCat("ns", n % 4);
      spec.key.id = absl::StrCat("job", n);
      spec.trigger.expression = expr;
      spec.trigger.zone = zone;
      spec.trigger.dst.repeat =
          n % 3 == 1 ? cron::RepeatPolicy::kTwice : cron::RepeatPolicy::kOnce;
      spec.trigger.dst.gap = n % 3 == 2 ? cron::GapPolicy::kSkip
                                        : cron::GapPolicy::kRunAtTransition;
      if (tolerate_steps) {
        spec.misfire.threshold = absl::Hours(1);
        spec.overlap.action = OverlapAction::kBufferAll;
      }
      jobs.push_back(spec);
      ++n;
    }
  }
  return jobs;
}

// The engine's own fire times of `spec` in (kStart, kEnd].
std::vector<absl::Time> EngineFires(const JobSpec& spec) {
  const std::string hash_key = spec.key.ToString();
  auto schedule =
      cron::Schedule::Parse(spec.trigger.expression, {.zone = spec.trigger.zone,
                                                      .hash_key = hash_key,
                                                      .dst = spec.trigger.dst});
  EXPECT_TRUE(schedule.ok()) << schedule.status();
  if (!schedule.ok()) return {};
  std::vector<absl::Time> fires = schedule->NextN(kStart, 20000);
  fires.erase(std::find_if(fires.begin(), fires.end(),
                           [](absl::Time t) { return t > kEnd; }),
              fires.end());
  return fires;
}

struct YearResult {
  std::map<JobKey, std::vector<absl::Time>> claimed;
  core::PlanCounters counters;
  int64_t violations = 0;
  int64_t clock_steps = 0;
};

// Runs the year. `steps` draws wall-clock steps: every few days, back up to 3h
// or forward up to 50m, never in the last two days (a forward step past kEnd
// would claim fires after it).
YearResult RunYear(const std::vector<JobSpec>& jobs, bool steps) {
  SimDriver driver(kStart);
  driver.set_logging(false);
  driver.SetExecutorConfig(ExecutorConfig{.finish_after = absl::Seconds(1)});
  YearResult result;
  driver.on_durable = [&](const core::PersistAction& p) {
    for (const core::PersistAction::Claim& c : p.claims) {
      result.claimed[c.fire.job].push_back(c.fire.scheduled_time);
    }
  };
  for (const JobSpec& spec : jobs) {
    absl::Status s =
        driver.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
          return plan.UpsertJob(spec, now, out);
        });
    EXPECT_TRUE(s.ok()) << spec.key.ToString() << ": " << s;
  }
  std::mt19937_64 rng(2026);
  std::uniform_int_distribution<int64_t> chunk_minutes(12 * 60, 36 * 60);
  std::uniform_int_distribution<int> one_in(0, 3);
  std::uniform_int_distribution<int64_t> back_seconds(60, 3 * 3600);
  std::uniform_int_distribution<int64_t> forward_seconds(60, 50 * 60);
  while (driver.now().wall < kEnd) {
    const absl::Duration chunk =
        steps ? absl::Minutes(chunk_minutes(rng)) : absl::Hours(24);
    absl::Status s =
        driver.AdvanceBy(std::min(chunk, kEnd - driver.now().wall));
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    if (steps && driver.now().wall < kEnd - absl::Hours(48) &&
        one_in(rng) == 0) {
      const bool back = one_in(rng) < 2;
      driver.StepWall(back ? -absl::Seconds(back_seconds(rng))
                           : absl::Seconds(forward_seconds(rng)));
    }
  }
  EXPECT_EQ(driver.now().wall, kEnd);
  result.counters = driver.plan().counters();
  result.violations = driver.violations();
  return result;
}

void ExpectEngineFires(const std::vector<JobSpec>& jobs,
                       const YearResult& result) {
  int64_t total = 0;
  int mismatched_jobs = 0;
  for (const JobSpec& spec : jobs) {
    const std::vector<absl::Time> expected = EngineFires(spec);
    auto it = result.claimed.find(spec.key);
    const std::vector<absl::Time> actual =
        it == result.claimed.end() ? std::vector<absl::Time>() : it->second;
    total += static_cast<int64_t>(expected.size());
    if (actual == expected) continue;
    if (++mismatched_jobs > 5) continue;  // enough to see the pattern
    size_t i = 0;
    while (i < actual.size() && i < expected.size() && actual[i] == expected[i])
      ++i;
    ADD_FAILURE() << spec.key.ToString() << " \"" << spec.trigger.expression
                  << "\" in " << spec.trigger.zone << ": " << actual.size()
                  << " fires claimed, " << expected.size()
                  << " expected; first difference at #" << i << ": claimed "
                  << (i < actual.size() ? time::FormatUtc(actual[i])
                                        : "nothing")
                  << ", engine "
                  << (i < expected.size() ? time::FormatUtc(expected[i])
                                          : "nothing");
  }
  EXPECT_EQ(mismatched_jobs, 0);
  // Every fire of the year ran: nothing was recorded missed, skipped or failed.
  EXPECT_EQ(result.counters.fires_run, total);
  EXPECT_TRUE(result.counters.fires_missed.empty() ||
              std::all_of(result.counters.fires_missed.begin(),
                          result.counters.fires_missed.end(),
                          [](const auto& e) { return e.second == 0; }));
  EXPECT_EQ(result.counters.runs_failed + result.counters.runs_cancelled, 0);
  EXPECT_GE(result.counters.runs_succeeded,
            total - static_cast<int64_t>(jobs.size()));
  EXPECT_EQ(result.violations, 0);
  // The year really was exercised.
  EXPECT_GT(total, 30000);
}

TEST(SimulatedYear, EveryJobClaimsExactlyTheEnginesFireTimes) {
  const std::vector<JobSpec> jobs = YearJobs(/*tolerate_steps=*/false);
  ASSERT_GE(jobs.size(), 200u);
  const YearResult result = RunYear(jobs, /*steps=*/false);
  EXPECT_EQ(result.counters.clock_steps, 0);
  ExpectEngineFires(jobs, result);
}

TEST(SimulatedYear, ClockStepsBothWaysNeitherLoseNorDoubleAFire) {
  const std::vector<JobSpec> jobs = YearJobs(/*tolerate_steps=*/true);
  const YearResult result = RunYear(jobs, /*steps=*/true);
  // Enough steps, both ways, to matter.
  EXPECT_GE(result.counters.clock_steps, 40);
  ExpectEngineFires(jobs, result);
}

}  // namespace
}  // namespace chime::scenarios
