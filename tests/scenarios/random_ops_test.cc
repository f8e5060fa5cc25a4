// Random sequences of everything a driver can do to a Plan -- jobs added,
// updated, paused, resumed, triggered and removed with random policies; time
// advancing, the scheduler stalling, the wall clock stepping both ways; the
// store failing; attempts failing, timing out, ignoring cancels -- checked
// against the promises that hold whatever happens:
//   - the Plan never crashes (its own invariant checks abort) and never
//   livelocks;
//   - the fake store sees no broken promise: no fire claimed twice, no attempt
//   started before
//     its claim was durable, no watermark moved back;
//   - no fire is silently dropped or decided twice: for each job and
//   generation, the fires
//     recorded durably (claims and missed ranges) are distinct fire times of
//     the schedule, and between the first and the last of them every fire of
//     the schedule is recorded; a fire missed for want of a slot ("quota")
//     is one that was claimed, and a job past its end date records that
//     once, at its trigger's first fire past the end.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "src/core/fire_source.h"
#include "src/time/rfc3339.h"
#include "tests/scenarios/sim_driver.h"

namespace chime::scenarios {
namespace {

const absl::Time kOpsStart = absl::FromCivil(
    absl::CivilSecond(2026, 3, 28, 22, 0, 0), absl::UTCTimeZone());

const char* const kOpsExpressions[] = {
    "*/5 * * * *", "*/7 * * * *", "0 * * * *",    "@every 3m",
    "*/2 * * * *", "30 2 * * *",  "15,45 * * * *"};
const char* const kOpsZones[] = {"UTC", "Europe/Berlin", "America/New_York"};

class RandomWorld {
 public:
  explicit RandomWorld(uint64_t seed) : rng_(seed), driver_(kOpsStart) {
    driver_.set_logging(std::getenv("CHIME_RANDOM_LOG") != nullptr);
    driver_.options().seed = seed;
    driver_.options().max_concurrent_runs = Pick(0, 3);
    // Quotas on one namespace, sometimes.
    if (OneIn(2)) {
      driver_.options().namespaces["ns1"] =
          core::NamespaceConfig{.weight = Pick(1, 3),
                                .max_concurrent = Pick(0, 2),
                                .max_starts_per_minute = Pick(0, 2)};
    }
    // No lookahead, a short one, or one longer than some schedules' period.
    driver_.options().lookahead =
        absl::Seconds(std::array{0, 1, 150}[Pick(0, 2)]);
    driver_.on_durable = [this](const core::PersistAction& p) {
      for (const core::PersistAction::Claim& c : p.claims) {
        if (c.fire.manual) {
          EXPECT_TRUE(manual_.insert(c.fire.ToString()).second)
              << c.fire.ToString();
        } else {
          Record(c.fire.job, c.fire.generation, c.fire.scheduled_time,
                 c.fire.scheduled_time, 1);
          claimed_.insert({{c.fire.job.ToString(), c.fire.generation},
                           c.fire.scheduled_time});
        }
      }
      for (const core::PersistAction::Missed& m : p.missed) {
        EXPECT_FALSE(m.range.count_capped);
        const std::pair<std::string, int64_t> gen{m.job.ToString(),
                                                  m.generation};
        if (m.range.reason == MissReason::kQuota) {
          // The outcome of a claimed fire, not a fire of its own.
          EXPECT_TRUE(claimed_.contains({gen, m.range.first}))
              << "quota miss of a fire never claimed: "
              << time::FormatUtc(m.range.first);
          continue;
        }
        if (m.range.reason == MissReason::kEnded) {
          EXPECT_TRUE(ended_.emplace(gen, m.range.first).second)
              << "ended twice: " << gen.first << ":" << gen.second;
          continue;
        }
        Record(m.job, m.generation, m.range.first, m.range.last, m.range.count);
      }
    };
  }

  void Run(int ops) {
    for (int i = 0; i < ops && !::testing::Test::HasFatalFailure(); ++i) Step();
    // Let everything settle: the store works, paused jobs resume (which records
    // what they missed), failed persists are re-sent.
    driver_.FailWrites(0);
    for (const auto& [key, spec] : specs_) {
      if (spec.paused) {
        EXPECT_TRUE(
            Call([&key = key](core::Plan& p, core::Now n, core::Output* o) {
              return p.ResumeJob(key, n, o);
            }).ok());
      }
    }
    Advance(absl::Minutes(5));
    for (const auto& [key, gen] : current_gen_) EndGeneration(gen);
    EXPECT_EQ(driver_.violations(), 0);
    CheckRecords();
    if (std::getenv("CHIME_RANDOM_LOG") != nullptr &&
        ::testing::Test::HasFailure()) {
      for (const std::string& l : driver_.TakeLines()) std::cerr << l << "\n";
    }
  }

 private:
  struct Records {
    std::vector<std::pair<absl::Time, absl::Time>> ranges;  // [first, last]
    std::vector<int64_t> counts;
  };

  int Pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool OneIn(int n) { return Pick(1, n) == 1; }

  // Every fire of a generation that had come due when it ended must have a
  // durable record.
  void EndGeneration(const std::pair<std::string, int64_t>& gen) {
    generations_[gen].end = driver_.now().wall;
  }

  void Record(const JobKey& job, int64_t gen, absl::Time first, absl::Time last,
              int64_t count) {
    Records& r = records_[{job.ToString(), gen}];
    r.ranges.push_back({first, last});
    r.counts.push_back(count);
  }

  template <typename F>
  absl::Status Call(F f) {
    return driver_.Call(f);
  }

  void Advance(absl::Duration d) {
    absl::Status s = driver_.AdvanceBy(d);
    ASSERT_TRUE(s.ok()) << s;
  }

  // Adds or updates a job, and remembers the trigger of each (job, generation)
  // for the check.
  bool Upsert(const JobSpec& spec) {
    if (!Call([&](core::Plan& p, core::Now n, core::Output* o) {
           return p.UpsertJob(spec, n, o);
         }).ok()) {
      return false;
    }
    const std::pair<std::string, int64_t> gen{
        spec.key.ToString(), driver_.plan().Generation(spec.key)};
    if (auto it = current_gen_.find(spec.key);
        it != current_gen_.end() && it->second != gen) {
      EndGeneration(it->second);  // the trigger changed
    }
    current_gen_[spec.key] = gen;
    specs_[spec.key] = spec;
    if (triggers_.try_emplace(gen, spec).second) {
      // A generation's fires are those after the instant it began (with a
      // lookahead, the Plan may have decided some of them already).
      generations_[gen].start = driver_.now().wall;
    }
    return true;
  }

  JobSpec RandomSpec(const std::string& id) {
    JobSpec spec;
    spec.key.id = id;
    spec.key.name_space = OneIn(2) ? "default" : absl::StrCat("ns", Pick(1, 2));
    RandomTrigger(&spec);
    RandomPolicies(&spec);
    // Sometimes an end date within the next few hours.
    if (OneIn(4)) {
      spec.end = driver_.now().wall + absl::Minutes(Pick(1, 360));
    }
    return spec;
  }

  void RandomTrigger(JobSpec* spec) {
    spec->trigger.expression =
        kOpsExpressions[Pick(0, std::size(kOpsExpressions) - 1)];
    spec->trigger.zone = kOpsZones[Pick(0, std::size(kOpsZones) - 1)];
    spec->trigger.dst.repeat =
        OneIn(2) ? cron::RepeatPolicy::kTwice : cron::RepeatPolicy::kOnce;
    spec->trigger.dst.gap =
        OneIn(2) ? cron::GapPolicy::kSkip : cron::GapPolicy::kRunAtTransition;
  }

  void RandomPolicies(JobSpec* spec) {
    spec->misfire.action = static_cast<MisfireAction>(Pick(0, 2));
    spec->misfire.threshold = absl::Seconds(Pick(0, 600));
    spec->misfire.max_catchup = Pick(1, 4);
    spec->misfire.catchup_window = absl::Minutes(Pick(5, 120));
    spec->overlap.action = static_cast<OverlapAction>(Pick(0, 4));
    spec->overlap.max_buffered = Pick(1, 3);
    spec->retry.max_attempts = Pick(1, 4);
    spec->retry.initial_backoff = absl::Seconds(Pick(0, 30));
    spec->retry.max_backoff =
        spec->retry.initial_backoff + absl::Seconds(Pick(0, 60));
    spec->retry.max_retry_duration =
        OneIn(2) ? absl::InfiniteDuration() : absl::Seconds(Pick(1, 300));
    spec->retry.retry_on_timeout = OneIn(2);
    spec->timeout.attempt_timeout =
        OneIn(2) ? absl::InfiniteDuration() : absl::Seconds(Pick(5, 600));
    spec->timeout.grace = absl::Seconds(Pick(0, 30));
    spec->jitter =
        OneIn(3) ? absl::Seconds(Pick(1, 120)) : absl::ZeroDuration();
    spec->priority = Pick(0, 3);
  }

  ExecutorConfig RandomExecutor() {
    ExecutorConfig c;
    c.finish_after =
        OneIn(6) ? absl::InfiniteDuration() : absl::Seconds(Pick(0, 900));
    for (int i = Pick(0, 3); i > 0; --i) {
      switch (Pick(0, 3)) {
        case 0:
          c.outcomes.push_back({core::AttemptOutcome::kSucceeded, "exit 0"});
          break;
        case 1:
          c.outcomes.push_back({core::AttemptOutcome::kFailed, "exit 1"});
          break;
        case 2:
          c.outcomes.push_back({core::AttemptOutcome::kTimedOut, "timed out"});
          break;
        default:
          c.outcomes.push_back({core::AttemptOutcome::kCancelled, "cancelled"});
          break;
      }
    }
    c.obey_graceful_cancel = OneIn(2);
    return c;
  }

  const JobKey* RandomJob() {
    if (specs_.empty()) return nullptr;
    auto it = specs_.begin();
    std::advance(it, Pick(0, static_cast<int>(specs_.size()) - 1));
    return &it->first;
  }

  void Step() {
    switch (Pick(0, 15)) {
      case 0:
      case 1: {  // add
        if (specs_.size() >= 8) break;
        JobSpec spec = RandomSpec(absl::StrCat("j", next_id_++));
        if (Upsert(spec)) driver_.SetExecutorConfig(spec.key, RandomExecutor());
        break;
      }
      case 2: {  // update: policies, trigger, or both
        const JobKey* key = RandomJob();
        if (key == nullptr) break;
        JobSpec spec = specs_[*key];
        if (OneIn(2)) RandomTrigger(&spec);
        if (OneIn(2)) RandomPolicies(&spec);
        Upsert(spec);
        break;
      }
      case 3: {  // remove
        const JobKey* key = RandomJob();
        if (key == nullptr || !OneIn(3)) break;
        const JobKey k = *key;
        EXPECT_TRUE(Call([&](core::Plan& p, core::Now n, core::Output* o) {
                      return p.RemoveJob(k, n, o);
                    }).ok());
        EndGeneration(current_gen_[k]);
        current_gen_.erase(k);
        specs_.erase(k);
        break;
      }
      case 4: {  // pause or resume
        const JobKey* key = RandomJob();
        if (key == nullptr) break;
        JobSpec& spec = specs_[*key];
        const JobKey k = *key;
        EXPECT_TRUE(Call([&](core::Plan& p, core::Now n, core::Output* o) {
                      return spec.paused ? p.ResumeJob(k, n, o)
                                         : p.PauseJob(k, n, o);
                    }).ok());
        spec.paused = !spec.paused;
        break;
      }
      case 5: {  // trigger
        const JobKey* key = RandomJob();
        if (key == nullptr) break;
        const JobKey k = *key;
        (void)Call([&](core::Plan& p, core::Now n, core::Output* o) {
          return p.TriggerJob(k, n, o).status();
        });
        break;
      }
      case 6:  // the store fails for a while
        driver_.FailWrites(Pick(1, 3));
        break;
      case 7:  // the scheduler thread freezes
        ASSERT_TRUE(driver_.Stall(absl::Seconds(Pick(1, 1800))).ok());
        break;
      case 8:  // the wall clock steps
        driver_.StepWall(absl::Seconds(Pick(-7200, 7200)), /*notify=*/OneIn(2));
        break;
      case 9: {  // an attempt ends by command
        std::vector<SimDriver::Attempt> running = driver_.Running();
        if (running.empty()) break;
        const SimDriver::Attempt& a =
            running[Pick(0, static_cast<int>(running.size()) - 1)];
        (void)driver_.Finish(
            a.run, 0,
            OneIn(2)
                ? ScriptedOutcome{}
                : ScriptedOutcome{core::AttemptOutcome::kFailed, "exit 2"});
        break;
      }
      default:
        Advance(absl::Seconds(Pick(0, 900)));
        break;
    }
  }

  // Every durable record of a (job, generation) is a set of distinct fire times
  // of its schedule; together they are exactly the schedule's fires from the
  // first after the generation began up to at least the last one due when it
  // ended (more if the wall clock had been stepped back: fires already decided
  // stay decided).
  void CheckRecords() {
    for (const auto& [gen, span] : generations_) {
      SCOPED_TRACE(absl::StrCat(gen.first, ":", gen.second));
      auto source = core::FireSource::Create(triggers_.at(gen));
      ASSERT_TRUE(source.ok());
      std::vector<std::pair<absl::Time, absl::Time>> ranges;
      std::vector<int64_t> counts;
      if (auto it = records_.find(gen); it != records_.end()) {
        ranges = it->second.ranges;
        counts = it->second.counts;
      }
      std::vector<size_t> order(ranges.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return ranges[a].first < ranges[b].first;
      });
      absl::Time expect_next = source->Next(span.start);
      for (size_t i : order) {
        const auto& [first, last] = ranges[i];
        SCOPED_TRACE(absl::StrCat("record ", time::FormatUtc(first), "..",
                                  time::FormatUtc(last)));
        ASSERT_EQ(source->Next(first - absl::Nanoseconds(1)), first)
            << "not a fire time";
        ASSERT_EQ(source->Next(last - absl::Nanoseconds(1)), last)
            << "not a fire time";
        int64_t count = 0;
        for (absl::Time t = first; t <= last; t = source->Next(t)) ++count;
        EXPECT_EQ(count, counts[i]);
        // Directly after the previous record: nothing doubled, nothing skipped.
        EXPECT_EQ(first, expect_next)
            << "expected the next record at " << time::FormatUtc(expect_next);
        expect_next = source->Next(last);
      }
      // A job past its end date said so once, after its last fire, if the
      // first fire past the end came due while the generation was in force.
      const absl::Time past_end = source->FirstAfterEnd();
      if (auto it = ended_.find(gen); it != ended_.end()) {
        EXPECT_EQ(it->second, past_end);
        EXPECT_EQ(source->Next(it->second), absl::InfiniteFuture());
        EXPECT_EQ(expect_next, absl::InfiniteFuture())
            << "ended before the fire at " << time::FormatUtc(expect_next);
      } else {
        EXPECT_TRUE(past_end > span.end || past_end <= span.start)
            << "the end date passed at " << time::FormatUtc(past_end)
            << " without an ended record";
      }
      // Nothing due at the end is left without a record.
      const absl::Time last_due = source->Prev(span.end + absl::Nanoseconds(1));
      if (last_due != absl::InfinitePast() && last_due > span.start) {
        EXPECT_GT(expect_next, last_due)
            << "fires from " << time::FormatUtc(expect_next) << " to "
            << time::FormatUtc(last_due) << " came due and have no record";
      }
    }
  }

  std::mt19937_64 rng_;
  SimDriver driver_;
  std::map<JobKey, JobSpec> specs_;
  int next_id_ = 0;
  std::map<std::pair<std::string, int64_t>, Records> records_;
  // Claimed scheduled fires, and the ended record of each generation.
  std::set<std::pair<std::pair<std::string, int64_t>, absl::Time>> claimed_;
  std::map<std::pair<std::string, int64_t>, absl::Time> ended_;
  // The spec (for its trigger) of each (job, generation).
  std::map<std::pair<std::string, int64_t>, JobSpec> triggers_;
  // When each (job, generation) began (the job's watermark then) and ended (the
  // wall time).
  struct Span {
    absl::Time start = absl::InfinitePast();
    absl::Time end = absl::InfinitePast();
  };
  std::map<std::pair<std::string, int64_t>, Span> generations_;
  std::map<JobKey, std::pair<std::string, int64_t>> current_gen_;
  std::set<std::string> manual_;
};

TEST(RandomOperations, NoFireIsDoubledOrSilentlyDroppedAndNoPromiseBreaks) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    RandomWorld world(seed);
    world.Run(400);
    if (::testing::Test::HasFailure())
      break;  // one seed's failures are enough to read
  }
}

}  // namespace
}  // namespace chime::scenarios
