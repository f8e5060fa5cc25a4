// The Plan's test harness: drives a Plan as the driver would, logging every
// action as a line. For the Plan's tests only.
#ifndef CHIME_SRC_CORE_PLAN_HARNESS_H_
#define CHIME_SRC_CORE_PLAN_HARNESS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/core/plan.h"
#include "src/time/rfc3339.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime::core {

inline absl::Time T(absl::string_view rfc3339) {
  return *time::ParseRfc3339(rfc3339);
}

// Drives a Plan as the real driver would, with a store that always succeeds and
// an executor that records starts; time moves only through Advance*. Every
// action is logged as a line.
class Harness {
 public:
  explicit Harness(PlanOptions options = {},
                   absl::Time start = T("2026-03-01T00:00:00Z"))
      : now_{start, MonoTime::FromSinceOrigin(absl::Hours(1))},
        plan_(options, now_) {}

  absl::Status Add(JobSpec spec) {
    return Do([&](Output* o) { return plan_.UpsertJob(spec, now_, o); });
  }
  // Adds a job that a store remembers (recovery).
  absl::Status AddResumed(JobSpec spec, Resume resume) {
    auto source = FireSource::Create(spec);
    if (!source.ok()) return source.status();
    return Do([&](Output* o) {
      return plan_.UpsertJob(spec, *std::move(source), now_, o,
                             absl::InfiniteFuture(), &resume);
    });
  }
  // Adds or changes a job as its store has it, at `generation`.
  absl::Status AddStored(JobSpec spec, int64_t generation) {
    auto source = FireSource::Create(spec);
    if (!source.ok()) return source.status();
    return Do([&](Output* o) {
      return plan_.UpsertJob(spec, *std::move(source), now_, o,
                             absl::InfiniteFuture(), nullptr, {}, generation);
    });
  }
  // Adds a job whose request was made at `requested` (a queued command).
  absl::Status AddRequestedAt(JobSpec spec, absl::Time requested) {
    auto source = FireSource::Create(spec);
    if (!source.ok()) return source.status();
    return Do([&](Output* o) {
      return plan_.UpsertJob(spec, *std::move(source), now_, o, requested);
    });
  }

  absl::Status Pause(const JobKey& key) {
    return Do([&](Output* out) { return plan_.PauseJob(key, now_, out); });
  }
  absl::Status Resume(const JobKey& key) {
    return Do([&](Output* out) { return plan_.ResumeJob(key, now_, out); });
  }
  absl::Status Remove(const JobKey& key) {
    return Do([&](Output* o) { return plan_.RemoveJob(key, now_, o); });
  }

  // Moves time forward by `d` and wakes the plan once (a driver would wake
  // it again at once if it asks: wake_at() <= now().mono).
  void StepBy(absl::Duration d) {
    SetMono(now_.mono + d);
    Output out;
    plan_.Advance(now_, &out);
    Handle(out);
  }
  MonoTime wake_at() const { return wake_at_; }

  // Moves time forward by `d`, waking the plan at every wake-up on the way,
  // like a driver.
  void AdvanceBy(absl::Duration d) {
    const MonoTime target = now_.mono + d;
    for (int guard = 0; guard < 100000; ++guard) {
      const MonoTime next = std::min(wake_at_, target);
      if (next > now_.mono) SetMono(next);
      Output out;
      plan_.Advance(now_, &out);
      Handle(out);
      if (wake_at_ > target) break;
    }
    SetMono(target);
    Output out;
    plan_.Advance(now_, &out);
    Handle(out);
  }

  void Finish(RunId run, int attempt, AttemptOutcome outcome,
              std::string detail = "") {
    Output out;
    plan_.OnEvent(AttemptFinishedEvent{run, attempt, outcome, detail}, now_,
                  &out);
    Handle(out);
  }

  std::vector<std::string> TakeLog() { return std::exchange(log_, {}); }
  const std::vector<StartAttemptAction>& starts() const { return starts_; }
  // Watermarks in the persist actions so far.
  int64_t watermarks() const { return watermarks_; }
  Plan& plan() { return plan_; }
  Now now() const { return now_; }

 private:
  template <typename F>
  absl::Status Do(F f) {
    Output out;
    absl::Status s = f(&out);
    Handle(out);
    return s;
  }

  void SetMono(MonoTime m) {
    now_.wall += m - now_.mono;
    now_.mono = m;
  }

  std::string Clock() const { return time::FormatUtc(now_.wall).substr(11, 8); }

  void Handle(Output& out) {
    wake_at_ = out.wake_at;
    std::vector<PersistedEvent> acks;
    for (Action& a : out.actions) {
      if (auto* p = std::get_if<PersistAction>(&a)) {
        std::string line = absl::StrCat(Clock(), " persist");
        for (auto& c : p->claims)
          absl::StrAppend(&line, " claim=", c.fire.ToString());
        for (auto& m : p->missed) {
          absl::StrAppend(&line, " missed=", MissReasonName(m.range.reason),
                          ":", m.range.count);
        }
        log_.push_back(line);
        watermarks_ += static_cast<int64_t>(p->watermarks.size());
        acks.push_back({std::move(*p), absl::OkStatus()});
      } else if (auto* s = std::get_if<StartAttemptAction>(&a)) {
        log_.push_back(absl::StrCat(Clock(), " start ", s->fire.ToString(),
                                    " #", s->attempt));
        starts_.push_back(*s);
      } else if (auto* c = std::get_if<CancelAttemptAction>(&a)) {
        log_.push_back(absl::StrCat(Clock(), " cancel run", c->run,
                                    c->force ? " force" : ""));
      } else if (auto* t = std::get_if<TransitionAction>(&a)) {
        if (t->to != RunState::kPending && t->to != RunState::kRunning) {
          log_.push_back(absl::StrCat(Clock(), " ", t->fire.ToString(), " ",
                                      RunStateName(t->to),
                                      t->detail.empty() ? "" : " (", t->detail,
                                      t->detail.empty() ? "" : ")"));
        }
      }
    }
    for (const PersistedEvent& ack : acks) {
      Output more;
      plan_.OnEvent(ack, now_, &more);
      Handle(more);
    }
    EXPECT_THAT(plan_.CheckInvariants(), ::chime::testing::IsOk());
  }

  Now now_;
  Plan plan_;
  MonoTime wake_at_ = MonoTime::Infinite();
  std::vector<std::string> log_;
  std::vector<StartAttemptAction> starts_;
  int64_t watermarks_ = 0;
};

inline JobSpec Cron(std::string id, std::string expr) {
  return chime::testing::CronJob(std::move(id), std::move(expr));
}

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_PLAN_HARNESS_H_
