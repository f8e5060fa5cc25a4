#include "tests/crash/crash_checker.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "chime/clock.h"
#include "src/core/fire_source.h"
#include "src/store/store_util.h"
#include "src/time/rfc3339.h"
#include "tests/crash/crash_log.h"

namespace chime::crash {
namespace {

constexpr absl::Duration kCallTimeout = absl::Seconds(60);
constexpr int kPage = 1000;
// A fire_undecided line shows the job's decisions this close to the fire.
constexpr absl::Duration kContext = absl::Seconds(3);

MonoTime Deadline() { return RealClock::Get().MonoNow() + kCallTimeout; }

// Everything the store has, read once.
struct History {
  absl::flat_hash_map<JobId, JobRecord> jobs;
  absl::flat_hash_map<std::string, JobId> job_ids;  // by JobKey::ToString()
  absl::flat_hash_map<RunId, RunDetail> runs;
  absl::flat_hash_map<JobId, std::vector<MissedRecord>> missed;

  std::string FireId(const FireRef& f) const {
    auto it = jobs.find(f.job);
    if (it == jobs.end()) return store::FireRefString(f);
    return FireKey{it->second.spec.key, f.generation, f.scheduled_time,
                   f.manual}
        .ToString();
  }
  // The job a fire id names ("crash-007:1:2026-...Z"): null if unknown.
  const JobRecord* JobOfFireId(absl::string_view fire_id) const {
    auto it = job_ids.find(fire_id.substr(0, fire_id.find(':')));
    return it == job_ids.end() ? nullptr : &jobs.at(it->second);
  }
};

absl::StatusOr<History> ReadHistory(Store& store) {
  History h;
  for (JobId after = 0;;) {
    absl::StatusOr<JobPage> page = store.LoadJobs(after, kPage, Deadline());
    if (!page.ok()) return page.status();
    for (JobRecord& job : page->jobs) {
      h.job_ids[job.spec.key.ToString()] = job.id;
      h.jobs[job.id] = std::move(job);
    }
    if (page->done) break;
    after = page->next_after;
  }
  RunQuery query;
  query.limit = kPage;
  while (true) {
    absl::StatusOr<RunPage> page = store.ListRuns(query, Deadline());
    if (!page.ok()) return page.status();
    for (const RunRecord& run : page->runs) {
      absl::StatusOr<RunDetail> detail = store.GetRun(run.id, Deadline());
      if (!detail.ok()) return detail.status();
      h.runs[run.id] = *std::move(detail);
    }
    if (!page->next.has_value()) break;
    query.after = page->next;
  }
  for (const auto& [id, job] : h.jobs) {
    std::optional<MissedCursor> after;
    do {
      absl::StatusOr<MissedPage> page =
          store.ListMissed(id, after, kPage, Deadline());
      if (!page.ok()) return page.status();
      std::vector<MissedRecord>& missed = h.missed[id];
      missed.insert(missed.end(), page->records.begin(), page->records.end());
      after = page->next;
    } while (after.has_value());
  }
  return h;
}

std::string MissedString(const MissedRecord& m) {
  return absl::StrCat("missed [", time::FormatUtc(m.first), ", ",
                      time::FormatUtc(m.last), "] generation ", m.generation,
                      " count ", m.count, " ", MissReasonName(m.reason));
}

std::string HistoryString(const RunDetail& run) {
  std::vector<std::string> steps;
  for (const TransitionRecord& t : run.transitions) {
    steps.push_back(absl::StrCat(RunStateName(t.from), "->", RunStateName(t.to),
                                 "#", t.attempt));
  }
  return absl::StrCat("run ", run.run.id, " ", RunStateName(run.run.state),
                      " [", absl::StrJoin(steps, " "), "]");
}

// The key under which a missed RunEvent names its record: the first fire's id
// and the reason.
std::string MissedKey(absl::string_view first_fire_id,
                      absl::string_view reason) {
  return absl::StrCat(first_fire_id, " ", reason);
}

std::optional<RunState> ParseRunState(absl::string_view name) {
  for (int s = 0; s <= static_cast<int>(RunState::kLost); ++s) {
    if (RunStateName(static_cast<RunState>(s)) == name)
      return static_cast<RunState>(s);
  }
  return std::nullopt;
}

bool HasTransition(const RunDetail& run, RunState from, RunState to,
                   int attempt) {
  return std::any_of(run.transitions.begin(), run.transitions.end(),
                     [&](const TransitionRecord& t) {
                       return t.from == from && t.to == to &&
                              t.attempt == attempt;
                     });
}

// When the runs of a job that forbids overlap let a run of `fire` start: the
// latest end of an earlier fire's run (the first in its buffer waits for it);
// InfiniteFuture if one was still running at the end. InfinitePast for a job
// that allows overlap, or when none ran before it.
absl::Time BusyUntil(const History& h, const FireRef& fire) {
  auto job = h.jobs.find(fire.job);
  if (job == h.jobs.end() ||
      job->second.spec.overlap.action == OverlapAction::kAllow) {
    return absl::InfinitePast();
  }
  absl::Time until = absl::InfinitePast();
  for (const auto& [id, run] : h.runs) {
    if (run.run.fire.job != fire.job ||
        run.run.fire.scheduled_time >= fire.scheduled_time) {
      continue;
    }
    if (run.run.state == RunState::kRunning) return absl::InfiniteFuture();
    for (const TransitionRecord& t : run.transitions) {
      if (t.from == RunState::kRunning) until = std::max(until, t.at);
    }
  }
  return until;
}

void CheckClaims(const History& h, absl::Time stopped, CrashReport& r) {
  absl::flat_hash_map<FireRef, std::vector<RunId>> by_fire;
  for (const auto& [id, run] : h.runs) {
    by_fire[run.run.fire].push_back(id);
    const RunState state = run.run.state;
    ++r.runs_by_state[std::string(RunStateName(state))];
    auto job = h.jobs.find(run.run.fire.job);
    const bool at_least_once =
        job != h.jobs.end() &&
        job->second.spec.delivery == Delivery::kAtLeastOnce;
    if (IsFinal(state) || (state == RunState::kLost && !at_least_once))
      continue;
    // Waiting since it could start: its time, or its claim if that came
    // later (a scheduler behind, as one catching up under load), or its last
    // transition (a retry waits out its backoff from its `retrying`).
    absl::Time waiting_since =
        std::max(run.run.fire.scheduled_time, run.run.created_at);
    if (!run.transitions.empty())
      waiting_since = std::max(waiting_since, run.transitions.back().at);
    // A run buffered behind an earlier fire's run (overlap buffer_one /
    // buffer_all) waits for it to end: one that ends during the stop's
    // grace leaves the buffered run to the next scheduler.
    if (state == RunState::kPending)
      waiting_since = std::max(waiting_since, BusyUntil(h, run.run.fire));
    if (state != RunState::kRunning &&
        waiting_since > stopped - kReleaseSlack) {
      ++r.released;
      continue;
    }
    r.unfinished.push_back(
        absl::StrCat(h.FireId(run.run.fire), ": ", HistoryString(run),
                     " (claimed ", time::FormatUtc(run.run.created_at),
                     ", the stop began ", time::FormatUtc(stopped), ")"));
  }
  for (auto& [fire, ids] : by_fire) {
    if (ids.size() < 2) continue;
    std::sort(ids.begin(), ids.end());
    r.claimed_twice.push_back(absl::StrCat(
        h.FireId(fire), ": the store has runs ", absl::StrJoin(ids, ", ")));
  }
  r.jobs = static_cast<int64_t>(h.jobs.size());
  r.runs = static_cast<int64_t>(h.runs.size());
  for (const auto& [job, records] : h.missed) {
    r.missed_records += static_cast<int64_t>(records.size());
    for (const MissedRecord& m : records) r.missed_fires += m.count;
  }
  r.fires_decided = r.runs + r.missed_fires;
}

void CheckWitness(const History& h, absl::Span<const std::string> lines,
                  CrashReport& r) {
  absl::flat_hash_map<std::string, std::vector<const std::string*>> by_fire;
  for (const std::string& line : lines) {
    ++r.witness_lines;
    std::optional<WitnessLine> w = ParseWitness(line);
    if (!w.has_value()) {
      r.witness_unknown.push_back(absl::StrCat("\"", line, "\": not a line"));
      continue;
    }
    by_fire[w->fire_id].push_back(&line);
    auto run = h.runs.find(w->run_id);
    if (run == h.runs.end()) {
      r.witness_unknown.push_back(
          absl::StrCat("\"", line, "\": the store has no run ", w->run_id));
    } else if (const std::string fire = h.FireId(run->second.run.fire);
               fire != w->fire_id) {
      r.witness_unknown.push_back(absl::StrCat(
          "\"", line, "\": the store has run ", w->run_id, " for ", fire));
    }
  }
  r.fires_executed = static_cast<int64_t>(by_fire.size());
  for (const auto& [fire_id, fire_lines] : by_fire) {
    if (fire_lines.size() < 2) continue;
    absl::flat_hash_set<uint64_t> runs;
    absl::flat_hash_set<int64_t> tokens;
    for (const std::string* line : fire_lines) {
      const WitnessLine w = *ParseWitness(*line);
      runs.insert(w.run_id);
      tokens.insert(w.token);
    }
    const std::string evidence = absl::StrCat(
        fire_id, ": ", fire_lines.size(), " witness lines \"",
        absl::StrJoin(fire_lines, "\", \"",
                      [](std::string* out, const std::string* line) {
                        out->append(*line);
                      }),
        "\"");
    if (runs.size() > 1) r.claimed_twice.push_back(evidence);
    const JobRecord* job = h.JobOfFireId(fire_id);
    if (job == nullptr || job->spec.delivery == Delivery::kAtMostOnce) {
      r.at_most_once_repeated.push_back(evidence);
    } else if (tokens.size() > 1) {
      ++r.fires_rerun_after_crash;
    } else {
      ++r.fires_retried;
    }
  }
}

void CheckAcks(const History& h, absl::Span<const std::string> lines,
               CrashReport& r) {
  absl::flat_hash_set<std::string> missed;
  for (const auto& [id, records] : h.missed) {
    for (const MissedRecord& m : records) {
      missed.insert(
          MissedKey(h.FireId(FireRef{m.job, m.generation, m.first, false}),
                    MissReasonName(m.reason)));
    }
  }
  for (const std::string& line : lines) {
    ++r.acks;
    const auto fail = [&](absl::string_view why) {
      r.acks_missing.push_back(absl::StrCat("\"", line, "\": ", why));
    };
    std::optional<RunEvent> e = ParseAck(line);
    if (!e.has_value()) {
      fail("not a line");
      continue;
    }
    if (e->run_id == 0) {
      // "<reason>" or "<reason>: <n> fires from <first> to <last>".
      const absl::string_view reason =
          absl::string_view(e->detail).substr(0, e->detail.find(':'));
      if (!missed.contains(MissedKey(e->fire_id, reason)))
        fail("the store has no such missed record");
      continue;
    }
    const std::optional<RunState> from = ParseRunState(e->from);
    const std::optional<RunState> to = ParseRunState(e->to);
    if (!from.has_value() || !to.has_value()) {
      fail("unknown run state");
      continue;
    }
    auto run = h.runs.find(e->run_id);
    if (run == h.runs.end()) {
      // A claim refused (the fire was another run's) leaves nothing to cancel.
      if (*from != RunState::kClaiming || *to != RunState::kCancelled)
        fail("the store has no such run");
      continue;
    }
    if (const std::string fire = h.FireId(run->second.run.fire);
        fire != e->fire_id) {
      fail(absl::StrCat("the store has the run for ", fire));
      continue;
    }
    if (*from == RunState::kClaiming) {
      // claiming -> pending is the claim itself; claiming -> cancelled is
      // written as pending -> cancelled.
      if (*to == RunState::kCancelled &&
          !HasTransition(run->second, RunState::kPending, RunState::kCancelled,
                         e->attempt)) {
        fail(absl::StrCat("no pending->cancelled: ",
                          HistoryString(run->second)));
      }
      continue;
    }
    if (!HasTransition(run->second, *from, *to, e->attempt))
      fail(absl::StrCat("not in the history: ", HistoryString(run->second)));
  }
}

// [first, last] ranges, merged where they overlap or touch, ascending.
std::vector<std::pair<absl::Time, absl::Time>> Covered(
    const std::vector<const MissedRecord*>& records) {
  std::vector<std::pair<absl::Time, absl::Time>> ranges;
  for (const MissedRecord* m : records) ranges.emplace_back(m->first, m->last);
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<absl::Time, absl::Time>> merged;
  for (const auto& range : ranges) {
    if (!merged.empty() && range.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, range.second);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

bool InRanges(const std::vector<std::pair<absl::Time, absl::Time>>& ranges,
              absl::Time t) {
  auto it = std::upper_bound(
      ranges.begin(), ranges.end(), t,
      [](absl::Time v, const auto& range) { return v < range.first; });
  return it != ranges.begin() && t <= std::prev(it)->second;
}

// The job's claims and missed records near `t`, for a violation's evidence.
std::string Nearby(const History& h,
                   const absl::flat_hash_map<absl::Time, RunId>& claims,
                   const std::vector<const MissedRecord*>& missed,
                   absl::Time t) {
  std::vector<std::pair<absl::Time, std::string>> near;
  for (const auto& [at, run] : claims) {
    if (absl::AbsDuration(at - t) <= kContext) {
      near.emplace_back(at, absl::StrCat(time::FormatUtc(at), " ",
                                         HistoryString(h.runs.at(run))));
    }
  }
  for (const MissedRecord* m : missed) {
    if (m->last >= t - kContext && m->first <= t + kContext)
      near.emplace_back(m->first, MissedString(*m));
  }
  std::sort(near.begin(), near.end());
  std::vector<std::string> out;
  for (auto& [at, s] : near) out.push_back(std::move(s));
  return absl::StrJoin(out, "; ");
}

void CheckDecided(const History& h, CrashReport& r) {
  absl::flat_hash_map<JobId, std::vector<const RunRecord*>> runs_of;
  for (const auto& [id, run] : h.runs)
    runs_of[run.run.fire.job].push_back(&run.run);
  for (const auto& [id, job] : h.jobs) {
    const int64_t g = job.watermark_generation;
    if (g == 0) continue;  // nothing decided yet
    absl::flat_hash_map<absl::Time, RunId> claims;
    absl::Time lower = absl::InfiniteFuture();
    for (const RunRecord* run : runs_of[id]) {
      const FireRef& f = run->fire;
      if (f.generation != g || f.manual) continue;
      claims[f.scheduled_time] = run->id;
      lower = std::min(lower, f.scheduled_time);
    }
    std::vector<const MissedRecord*> missed;
    std::vector<const MissedRecord*> quota;
    if (auto it = h.missed.find(id); it != h.missed.end()) {
      for (const MissedRecord& m : it->second) {
        if (m.generation != g) continue;
        if (m.reason == MissReason::kQuota) {
          quota.push_back(&m);
          continue;
        }
        missed.push_back(&m);
        lower = std::min(lower, m.first);
      }
    }
    const std::vector<std::pair<absl::Time, absl::Time>> covered =
        Covered(missed);
    absl::StatusOr<core::FireSource> source =
        core::FireSource::Create(job.spec);
    if (!source.ok()) {
      r.fires_undecided.push_back(absl::StrCat(
          job.spec.key.ToString(), ": the stored schedule does not parse: ",
          source.status().ToString()));
      continue;
    }
    for (absl::Time t = lower; t <= job.watermark; t = source->Next(t)) {
      ++r.fires_checked;
      const FireKey fire{job.spec.key, g, t};
      auto claim = claims.find(t);
      const bool in_missed = InRanges(covered, t);
      if (claim == claims.end() && !in_missed) {
        r.fires_undecided.push_back(absl::StrCat(
            fire.ToString(), ": no claim and no missed record (decided from ",
            time::FormatUtc(lower), " to the watermark ",
            time::FormatUtc(job.watermark),
            "); nearby: ", Nearby(h, claims, missed, t)));
      } else if (claim != claims.end() && in_missed) {
        r.claimed_and_missed.push_back(
            absl::StrCat(fire.ToString(), ": ", Nearby(h, claims, missed, t)));
      }
    }
    // A quota miss is the one missed record whose fire has a claim: its run
    // waited for a slot past the misfire threshold and was cancelled before
    // any attempt.
    for (const MissedRecord* m : quota) {
      auto claim = claims.find(m->first);
      const RunRecord* run =
          claim == claims.end() ? nullptr : &h.runs.at(claim->second).run;
      if (m->first != m->last || run == nullptr ||
          run->state != RunState::kCancelled || run->attempt != 0) {
        r.claimed_and_missed.push_back(absl::StrCat(
            FireKey{job.spec.key, g, m->first}.ToString(),
            ": a quota miss without its run cancelled unstarted; nearby: ",
            Nearby(h, claims, missed, m->first)));
      }
    }
  }
}

}  // namespace

std::vector<CrashReport::Kind> CrashReport::Violations() const {
  return {
      {"a FireKey claimed twice", &claimed_twice},
      {"acknowledged writes missing from the store", &acks_missing},
      {"due fires with neither a run nor a missed record", &fires_undecided},
      {"witness entries the store does not know", &witness_unknown},
      {"at-most-once fires executed twice", &at_most_once_repeated},
      {"fires both claimed and recorded missed", &claimed_and_missed},
      {"runs left unfinished by the clean stop", &unfinished},
  };
}

std::string CrashReport::Counts() const {
  std::vector<std::string> states;
  for (const auto& [state, n] : runs_by_state)
    states.push_back(absl::StrCat(state, " ", n));
  return absl::StrCat(
      "jobs ", jobs, "; fires decided ", fires_decided, " (runs ", runs,
      ", missed ", missed_fires, " in ", missed_records,
      " records); scheduled times checked ", fires_checked,
      "\nruns by state: ", absl::StrJoin(states, ", "), " (", released,
      " not started, left by the clean stop to the next scheduler)\nacks ",
      acks, "; witness lines ", witness_lines, " (fires executed ",
      fires_executed, "; at-least-once fires retried ", fires_retried,
      ", re-run after a crash ", fires_rerun_after_crash, ")");
}

absl::StatusOr<CrashReport> CheckCrashHistory(
    Store& store, absl::Span<const std::string> witness,
    absl::Span<const std::string> acks, absl::Time stopped) {
  absl::StatusOr<History> history = ReadHistory(store);
  if (!history.ok()) return history.status();
  CrashReport report;
  CheckClaims(*history, stopped, report);
  CheckWitness(*history, witness, report);
  CheckAcks(*history, acks, report);
  CheckDecided(*history, report);
  return report;
}

}  // namespace chime::crash
