#include "tests/scenarios/sim_driver.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/time/rfc3339.h"

namespace chime::scenarios {

using core::Action;
using core::AttemptFinishedEvent;
using core::CancelAttemptAction;
using core::Output;
using core::PersistAction;
using core::PersistedEvent;
using core::StartAttemptAction;
using core::TransitionAction;

SimDriver::SimDriver(absl::Time wall_start, MonoTime mono_start)
    : now_{wall_start, mono_start} {}

SimDriver::~SimDriver() = default;

core::Plan& SimDriver::plan() {
  if (plan_ == nullptr) plan_ = std::make_unique<core::Plan>(options_, now_);
  return *plan_;
}

void SimDriver::SetMono(MonoTime m) {
  now_.wall += m - now_.mono;
  now_.mono = m;
}

MonoTime SimDriver::NextExecutorDeadline() const {
  MonoTime next = MonoTime::Infinite();
  for (const auto& [seq, a] : running_) next = std::min(next, a.finish_at);
  if (!staged_.empty()) next = std::min(next, staged_.begin()->first);
  return next;
}

absl::Status SimDriver::AdvanceBy(absl::Duration d) {
  plan();
  const MonoTime target = now_.mono + d;
  int spins = 0;
  while (true) {
    const MonoTime next = std::min(wake_at_, NextExecutorDeadline());
    if (next > target) break;
    if (next > now_.mono) {
      SetMono(next);
      spins = 0;
    } else if (++spins > 1000) {
      // A driver would spin here forever: the Plan asks to be woken at an
      // instant that has come, and waking it changes nothing.
      const absl::Time stuck = now_.wall + (next - now_.mono);
      SetMono(target);
      return absl::InternalError(
          absl::StrCat("livelock: the Plan keeps asking to be woken at ",
                       time::FormatUtc(stuck), " and does nothing when woken"));
    }
    if (wake_at_ <= now_.mono) {
      Output out;
      plan_->Advance(now_, &out);
      Process(std::move(out));
    } else {
      Drain();
    }
  }
  SetMono(target);
  return absl::OkStatus();
}

absl::Status SimDriver::Stall(absl::Duration d) {
  plan();
  SetMono(now_.mono + d);
  // Attempts due during the stall report when the driver runs again, in order.
  Drain();
  Output out;
  plan_->Advance(now_, &out);
  Process(std::move(out));
  return absl::OkStatus();
}

void SimDriver::StepWall(absl::Duration d, bool notify) {
  plan();
  now_.wall += d;
  if (!notify) return;
  Output out;
  plan_->Advance(now_, &out);
  Process(std::move(out));
}

// ---------------------------------------------------------------- carrying out
// actions

void SimDriver::Process(Output out) {
  Absorb(out);
  Drain();
}

void SimDriver::StartStaged() {
  core::AttemptStartedEvent started;
  while (!staged_.empty() && staged_.begin()->first <= now_.mono) {
    auto node = staged_.extract(staged_.begin());
    Attempt& a = node.mapped();
    if (logging_) {
      Log(absl::StrCat("started run ", a.run, " attempt=", a.attempt));
    }
    started.started.push_back({a.run, a.attempt});
    Run(std::move(a));
  }
  if (!started.started.empty()) events_.push_back(std::move(started));
}

void SimDriver::Run(Attempt a) {
  a.started_wall = now_.wall;
  a.seq = next_seq_++;
  const ExecutorConfig& config = ExecFor(a.fire.job);
  a.outcome = NextOutcome(a.fire.job);
  if (config.finish_after != absl::InfiniteDuration()) {
    a.finish_at = now_.mono + config.finish_after;
  }
  running_.emplace(a.seq, std::move(a));
}

void SimDriver::Drain() {
  while (true) {
    StartStaged();
    if (!events_.empty()) {
      core::Event e = std::move(events_.front());
      events_.pop_front();
      Output out;
      plan_->OnEvent(e, now_, &out);
      Absorb(out);
      continue;
    }
    // Attempts that have finished by themselves by now, all reported together
    // (earliest first, then in start order), as a driver catching up after a
    // stall would read them.
    std::vector<Attempt> due;
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->second.finish_at <= now_.mono) {
        due.push_back(it->second);
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
    if (due.empty()) break;
    std::stable_sort(due.begin(), due.end(),
                     [](const Attempt& a, const Attempt& b) {
                       return a.finish_at < b.finish_at;
                     });
    for (const Attempt& a : due) {
      events_.push_back(AttemptFinishedEvent{
          a.run, a.attempt, a.outcome.outcome, a.outcome.detail});
    }
  }
}

void SimDriver::Absorb(Output& out) {
  wake_at_ = out.wake_at;
  for (Action& action : out.actions) {
    if (logging_) Log(FormatAction(action));
    if (on_action) on_action(action);
    if (auto* p = std::get_if<PersistAction>(&action)) {
      for (const PersistAction::Claim& c : p->claims)
        known_runs_.emplace(c.run, c.fire);
      if (hold_) {
        held_.push_back(*p);
      } else {
        Answer(*p);
      }
    } else if (auto* s = std::get_if<StartAttemptAction>(&action)) {
      if (!durable_runs_.contains(s->run)) {
        Violation(absl::StrCat("run ", s->run,
                               " started before its claim was durable"));
      }
      for (const auto& [seq, a] : running_) {
        if (a.run == s->run) {
          Violation(absl::StrCat("run ", s->run, " started attempt ",
                                 s->attempt, " while attempt ", a.attempt,
                                 " is still running"));
        }
      }
      for (const auto& [at, a] : staged_) {
        if (a.run == s->run) {
          Violation(absl::StrCat("run ", s->run, " started attempt ",
                                 s->attempt, " while attempt ", a.attempt,
                                 " is staged"));
        }
      }
      Attempt a;
      a.run = s->run;
      a.fire = s->fire;
      a.attempt = s->attempt;
      if (s->staged) {
        staged_.emplace(s->not_before, std::move(a));
      } else {
        Run(std::move(a));
      }
    } else if (auto* u = std::get_if<core::UnstageAction>(&action)) {
      for (auto it = staged_.begin(); it != staged_.end(); ++it) {
        if (it->second.run != u->run || it->second.attempt != u->attempt)
          continue;
        AttemptFinishedEvent e{u->run, u->attempt,
                               core::AttemptOutcome::kCancelled, "unstaged"};
        e.started = false;
        events_.push_back(std::move(e));
        staged_.erase(it);
        break;
      }
    } else if (auto* c = std::get_if<CancelAttemptAction>(&action)) {
      for (auto it = running_.begin(); it != running_.end(); ++it) {
        if (it->second.run != c->run || it->second.attempt != c->attempt)
          continue;
        const JobKey job = it->second.fire.job;
        if (c->force || ExecFor(job).obey_graceful_cancel) {
          events_.push_back(AttemptFinishedEvent{
              c->run, c->attempt, core::AttemptOutcome::kCancelled,
              c->force ? "killed" : "terminated"});
          running_.erase(it);
        }
        break;
      }
    }
  }
  if (absl::Status s = plan_->CheckInvariants(); !s.ok())
    Violation(absl::StrCat("the Plan's invariants: ", s.message()));
}

void SimDriver::Answer(const PersistAction& p) {
  absl::Status status;
  if (fenced_) {
    status = absl::FailedPreconditionError("lease held by another scheduler");
  } else if (fail_writes_ > 0) {
    --fail_writes_;
    status = absl::Status(fail_code_,
                          fail_code_ == absl::StatusCode::kFailedPrecondition
                              ? "lease held by another scheduler"
                              : "store unavailable");
  }
  if (!status.ok()) {
    if (logging_) {
      Log(absl::StrCat("store #", p.batch, " ",
                       status.code() == absl::StatusCode::kFailedPrecondition
                           ? "fenced"
                           : "unavailable",
                       ": nothing written"));
    }
  } else {
    for (const PersistAction::Claim& c : p.claims) {
      if (!claimed_ids_.insert(c.fire.ToString()).second) {
        Violation(absl::StrCat("fire ", c.fire.ToString(), " claimed twice"));
      }
      claims_.push_back(c.fire);
      durable_runs_.insert(c.run);
    }
    for (const PersistAction::Watermark& w : p.watermarks) {
      auto [it, inserted] = watermarks_.try_emplace(
          w.job, StoredWatermark{w.generation, w.watermark, p.batch});
      if (inserted) continue;
      StoredWatermark& stored = it->second;
      // Within a generation the watermark only moves forward; a newer batch
      // never goes back to an older generation.
      if (p.batch > stored.batch && (w.generation < stored.generation ||
                                     (w.generation == stored.generation &&
                                      w.watermark < stored.watermark))) {
        Violation(absl::StrCat(
            "watermark of ", w.job.ToString(), " moved back from ",
            stored.generation, ":", time::FormatUtc(stored.watermark), " to ",
            w.generation, ":", time::FormatUtc(w.watermark)));
      }
      if (w.generation > stored.generation ||
          (w.generation == stored.generation &&
           w.watermark >= stored.watermark)) {
        stored = StoredWatermark{w.generation, w.watermark, p.batch};
      }
    }
    if (on_durable) on_durable(p);
  }
  events_.push_back(PersistedEvent{p, status});
}

void SimDriver::Release() {
  hold_ = false;
  std::vector<PersistAction> held = std::exchange(held_, {});
  if (plan_ == nullptr) return;
  for (const PersistAction& p : held) Answer(p);
  Drain();
}

void SimDriver::FailWrites(int n, absl::StatusCode code) {
  fail_writes_ = n;
  fail_code_ = code;
}

void SimDriver::Violation(absl::string_view what) {
  ++violations_;
  if (logging_) Log(absl::StrCat("VIOLATION: ", what));
}

// ---------------------------------------------------------------- the executor

const ExecutorConfig& SimDriver::ExecFor(const JobKey& job) const {
  auto it = job_exec_.find(job);
  return it == job_exec_.end() ? default_exec_ : it->second;
}

ScriptedOutcome SimDriver::NextOutcome(const JobKey& job) {
  const ExecutorConfig& config = ExecFor(job);
  if (config.outcomes.empty()) return ScriptedOutcome{};
  size_t& index = outcome_index_[job];
  const ScriptedOutcome o =
      config.outcomes[std::min(index, config.outcomes.size() - 1)];
  ++index;
  return o;
}

std::vector<SimDriver::Attempt> SimDriver::Running() const {
  std::vector<Attempt> out;
  for (const auto& [seq, a] : running_) out.push_back(a);
  return out;
}

absl::Status SimDriver::Finish(core::RunId run, int attempt,
                               const ScriptedOutcome& outcome) {
  plan();
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const auto& e) { return e.second.run == run; });
  if (it == running_.end() && attempt == 0) {
    return absl::NotFoundError(
        absl::StrCat("run ", run, " has no running attempt"));
  }
  if (it != running_.end()) {
    if (attempt == 0) attempt = it->second.attempt;
    if (attempt == it->second.attempt) running_.erase(it);
  }
  events_.push_back(
      AttemptFinishedEvent{run, attempt, outcome.outcome, outcome.detail});
  Drain();
  return absl::OkStatus();
}

// ---------------------------------------------------------------- the log

std::string SimDriver::Stamp() {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::CivilDay day = absl::ToCivilDay(now_.wall, utc);
  const bool with_date = !day_printed_ || day != last_day_printed_;
  day_printed_ = true;
  last_day_printed_ = day;
  return absl::FormatTime(with_date ? "%Y-%m-%d %H:%M:%E*S" : "%H:%M:%E*S",
                          now_.wall, utc);
}

void SimDriver::Log(absl::string_view text) {
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines_.push_back(first ? absl::StrCat(Stamp(), " ", line)
                           : std::string(line));
    first = false;
  }
}

std::string SimDriver::FormatAction(const Action& action) {
  if (const auto* p = std::get_if<PersistAction>(&action)) {
    std::string s = absl::StrCat("persist #", p->batch, " token=", p->token);
    for (const PersistAction::Claim& c : p->claims) {
      absl::StrAppend(&s, "\n  claim ", c.fire.ToString(), " run=", c.run);
    }
    for (const PersistAction::Missed& m : p->missed) {
      absl::StrAppend(&s, "\n  missed ", m.job.ToString(), ":", m.generation,
                      " ", time::FormatUtc(m.range.first));
      if (m.range.last != m.range.first) {
        absl::StrAppend(&s, "..", time::FormatUtc(m.range.last));
      }
      absl::StrAppend(&s, " count=", m.range.count_capped ? ">=" : "",
                      m.range.count,
                      " reason=", core::MissReasonName(m.range.reason));
    }
    for (const PersistAction::Watermark& w : p->watermarks) {
      absl::StrAppend(&s, "\n  watermark ", w.job.ToString(), ":", w.generation,
                      " ", time::FormatUtc(w.watermark));
    }
    return s;
  }
  if (const auto* s = std::get_if<StartAttemptAction>(&action)) {
    std::string line =
        absl::StrCat("start run ", s->run, " ", s->fire.ToString(),
                     " attempt=", s->attempt, " token=", s->token);
    if (s->staged) {
      absl::StrAppend(&line, " staged until +",
                      absl::FormatDuration(s->not_before - now_.mono));
    }
    return line;
  }
  if (const auto* u = std::get_if<core::UnstageAction>(&action)) {
    return absl::StrCat("unstage run ", u->run, " attempt=", u->attempt);
  }
  if (const auto* c = std::get_if<CancelAttemptAction>(&action)) {
    return absl::StrCat("cancel run ", c->run, " attempt=", c->attempt,
                        c->force ? " force" : " graceful");
  }
  const auto& t = std::get<TransitionAction>(action);
  std::string s =
      absl::StrCat("run ", t.run, " ", t.fire.ToString(), " ",
                   core::RunStateName(t.from), "->", core::RunStateName(t.to));
  if (t.attempt > 0) absl::StrAppend(&s, " attempt=", t.attempt);
  if (!t.detail.empty()) absl::StrAppend(&s, " (", t.detail, ")");
  return s;
}

// ---------------------------------------------------------------- durations

absl::StatusOr<absl::Duration> ParseScenarioDuration(absl::string_view text) {
  const std::string original(text);
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("bad duration \"", original,
                     "\" (want e.g. 90s, 12m, 1h30m, 250ms, 2d, -1h)"));
  };
  if (text == "inf") return absl::InfiniteDuration();
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return absl::ZeroDuration();
  if (text.empty()) return bad();
  absl::Duration total;
  while (!text.empty()) {
    size_t n = 0;
    while (n < text.size() && (absl::ascii_isdigit(text[n]) || text[n] == '.'))
      ++n;
    if (n == 0) return bad();
    double value;
    if (!absl::SimpleAtod(text.substr(0, n), &value)) return bad();
    text.remove_prefix(n);
    size_t u = 0;
    while (u < text.size() && absl::ascii_isalpha(text[u])) ++u;
    const absl::string_view unit = text.substr(0, u);
    text.remove_prefix(u);
    absl::Duration one;
    if (unit == "ns") {
      one = absl::Nanoseconds(1);
    } else if (unit == "us") {
      one = absl::Microseconds(1);
    } else if (unit == "ms") {
      one = absl::Milliseconds(1);
    } else if (unit == "s") {
      one = absl::Seconds(1);
    } else if (unit == "m") {
      one = absl::Minutes(1);
    } else if (unit == "h") {
      one = absl::Hours(1);
    } else if (unit == "d") {
      one = absl::Hours(24);
    } else {
      return bad();
    }
    total += value * one;
  }
  return negative ? -total : total;
}

}  // namespace chime::scenarios
