// PlanOptions::max_timers_per_step: a burst of due timers handled a slice at
// a time changes when within the burst a timer is handled, never whether.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/core/plan.h"
#include "src/core/plan_harness.h"
#include "testing/status_matchers.h"

namespace chime::core {
namespace {

using ::chime::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

PlanOptions Sliced(size_t n) {
  PlanOptions options;
  options.max_timers_per_step = n;
  return options;
}

// A Plan driven by hand, one call at a time, so that a test can act between
// two slices (the Harness carries on through its acknowledgements, which are
// steps too). Claims are never acknowledged: nothing starts.
class Stepper {
 public:
  explicit Stepper(size_t slice)
      : now_{T("2026-03-01T00:00:00Z"),
             MonoTime::FromSinceOrigin(absl::Hours(1))},
        plan_(Sliced(slice), now_) {}

  // A job change is a step too (it may let runs start): it handles the next
  // slice of what is due.
  absl::Status Add(JobSpec spec) {
    return Do([&](Output* out) { return plan_.UpsertJob(spec, now_, out); });
  }
  absl::Status Remove(absl::string_view id) {
    return Do([&](Output* out) {
      return plan_.RemoveJob(JobKey{.id = std::string(id)}, now_, out);
    });
  }
  // One Advance, `d` later.
  void StepBy(absl::Duration d) {
    now_.wall += d;
    now_.mono += d;
    (void)Do([&](Output* out) {
      plan_.Advance(now_, out);
      return absl::OkStatus();
    });
  }
  // The fires claimed since the last call.
  std::vector<std::string> TakeClaims() { return std::exchange(claims_, {}); }
  // The runs cancelled so far.
  const std::vector<std::string>& cancelled() const { return cancelled_; }
  bool WantsAStepNow() const { return wake_at_ <= now_.mono; }
  const Plan& plan() const { return plan_; }

 private:
  template <typename F>
  absl::Status Do(F f) {
    Output out;
    absl::Status s = f(&out);
    wake_at_ = out.wake_at;
    for (const Action& a : out.actions) {
      if (const auto* p = std::get_if<PersistAction>(&a))
        for (const auto& c : p->claims) claims_.push_back(c.fire.ToString());
      if (const auto* t = std::get_if<TransitionAction>(&a);
          t != nullptr && t->to == RunState::kCancelled)
        cancelled_.push_back(t->fire.ToString());
    }
    EXPECT_THAT(plan_.CheckInvariants(), IsOk());
    return s;
  }

  Now now_;
  Plan plan_;
  MonoTime wake_at_ = MonoTime::Infinite();
  std::vector<std::string> claims_;
  std::vector<std::string> cancelled_;
};

TEST(PlanSlices, EachStepClaimsASliceOfTheBurstInTheOrderOfItsTimers) {
  Stepper p(3);
  for (int i = 0; i < 7; ++i)
    ASSERT_THAT(p.Add(Cron(absl::StrCat("j", i), "*/5 * * * *")), IsOk());
  p.StepBy(absl::Minutes(5));
  EXPECT_THAT(p.TakeClaims(), ElementsAre("j0:1:2026-03-01T00:05:00Z",
                                          "j1:1:2026-03-01T00:05:00Z",
                                          "j2:1:2026-03-01T00:05:00Z"));
  EXPECT_TRUE(p.WantsAStepNow());
  p.StepBy(absl::ZeroDuration());
  EXPECT_THAT(p.TakeClaims(), ElementsAre("j3:1:2026-03-01T00:05:00Z",
                                          "j4:1:2026-03-01T00:05:00Z",
                                          "j5:1:2026-03-01T00:05:00Z"));
  EXPECT_TRUE(p.WantsAStepNow());
  p.StepBy(absl::ZeroDuration());
  EXPECT_THAT(p.TakeClaims(), ElementsAre("j6:1:2026-03-01T00:05:00Z"));
  // The burst is over: the next wake-up is the next fire's.
  EXPECT_FALSE(p.WantsAStepNow());
  p.StepBy(absl::ZeroDuration());
  EXPECT_THAT(p.TakeClaims(), IsEmpty());
}

TEST(PlanSlices, ACommandOnAJobFirstDecidesItsWaitingFireAsWithoutSlices) {
  Stepper p(1);
  for (int i = 0; i < 5; ++i)
    ASSERT_THAT(p.Add(Cron(absl::StrCat("j", i), "*/5 * * * *")), IsOk());
  p.StepBy(absl::Minutes(5));
  EXPECT_THAT(p.TakeClaims(), ElementsAre("j0:1:2026-03-01T00:05:00Z"));
  // j1 .. j4 wait. Removing j3 decides what is due first, as it would
  // unsliced: a slice (j1) and j3's own fire, claimed and then cancelled
  // with its job; then, a step again, the next slice (j2).
  ASSERT_THAT(p.Remove("j3"), IsOk());
  EXPECT_THAT(p.TakeClaims(), ElementsAre("j1:1:2026-03-01T00:05:00Z",
                                          "j3:1:2026-03-01T00:05:00Z",
                                          "j2:1:2026-03-01T00:05:00Z"));
  EXPECT_THAT(p.cancelled(), ElementsAre("j3:1:2026-03-01T00:05:00Z"));
  // Its entry in the burst is stale now: j3 does not fire again, nor does a
  // job added since.
  ASSERT_THAT(p.Add(Cron("j9", "0 * * * *")), IsOk());
  EXPECT_THAT(p.TakeClaims(), ElementsAre("j4:1:2026-03-01T00:05:00Z"));
  for (int i = 0; i < 10 && p.WantsAStepNow(); ++i)
    p.StepBy(absl::ZeroDuration());
  EXPECT_FALSE(p.WantsAStepNow());
  EXPECT_THAT(p.TakeClaims(), IsEmpty());
}

TEST(PlanSlices, SlicingChangesNothingThatHappensOverAnHour) {
  // Jobs of every overlap policy, whose runs never end: some fires run,
  // others are skipped or buffered -- the same ones, sliced or not.
  Harness whole, sliced(Sliced(4));
  for (Harness* h : {&whole, &sliced}) {
    for (int i = 0; i < 30; ++i) {
      JobSpec spec = Cron(absl::StrCat("j", i), i % 3 == 0   ? "* * * * *"
                                                : i % 3 == 1 ? "*/2 * * * *"
                                                             : "*/7 * * * *");
      spec.overlap.action =
          i % 2 == 0 ? OverlapAction::kAllow : OverlapAction::kSkip;
      ASSERT_THAT(h->Add(spec), IsOk());
    }
    h->AdvanceBy(absl::Hours(1));
  }
  // What started, and every record other than the claims (which the slices
  // group differently), in any order within an instant.
  auto records = [](Harness& h) {
    std::vector<std::string> lines;
    for (const std::string& line : h.TakeLog()) {
      if (!absl::StrContains(line, " persist")) lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  const std::vector<std::string> a = records(whole), b = records(sliced);
  // The allow jobs start every fire: 5 every minute, 5 every 2, 5 every 7;
  // the skip jobs their first only.
  EXPECT_EQ(whole.starts().size(), 5u * 60 + 5u * 30 + 5u * 9 + 15u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(sliced.starts().size(), whole.starts().size());
}

}  // namespace
}  // namespace chime::core
