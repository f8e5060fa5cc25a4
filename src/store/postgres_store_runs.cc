// PostgresStore: run transitions, history and retention.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/base/status_macros.h"
#include "src/store/postgres_schema.h"
#include "src/store/postgres_store.h"
#include "src/store/retention.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

// A row of kPgSelectRunById or PgListRunsSql (postgres_schema.h).
RunRecord RunFromRow(const PgResult& r, int i) {
  RunRecord run;
  run.id = static_cast<RunId>(r.Int(i, 0));
  run.fire =
      FireRef{r.Int(i, 1), r.Int(i, 2), NanosToTime(r.Int(i, 3)), r.Bool(i, 4)};
  run.state = static_cast<RunState>(r.Int(i, 5));
  run.attempt = static_cast<int32_t>(r.Int(i, 6));
  run.token = r.Int(i, 7);
  run.created_at = NanosToTime(r.Int(i, 8));
  run.updated_at = NanosToTime(r.Int(i, 9));
  run.detail = r.Bytes(i, 10);
  run.job_key = JobKey{r.Text(i, 11), r.Text(i, 12)};
  return run;
}

int64_t Id(RunId run) { return static_cast<int64_t>(run); }
int64_t State(RunState s) { return static_cast<int64_t>(s); }

// What a batch of transitions does, decided in C++ from the runs' states and
// the transitions already in their histories, and written as one statement
// per table. Transitions apply in batch order, so several of one run (pending
// -> running -> succeeded) fold into the run's final row and each attempt's
// final row; ON CONFLICT DO UPDATE and UPDATE ... FROM must not touch a row
// twice in one statement, and after the fold none does.
class TransitionPlan {
 public:
  TransitionPlan(int64_t token, size_t max_output_bytes)
      : token_(token), max_output_bytes_(max_output_bytes) {}

  // A run of the batch and its stored state.
  void AddRun(RunId run, RunState state) { runs_[run].state = state; }
  // A transition stored in the history of a run of the batch.
  void AddHistory(RunId run, RunState from, RunState to, int32_t attempt) {
    history_.insert(Step(run, from, to, attempt));
  }

  // Checks `t` against its run's state and history (as the earlier
  // transitions of the batch left them) and folds it in. NotFound, Aborted as
  // TransitionRuns answers.
  absl::Status Apply(const RunTransition& t) {
    auto run = runs_.find(t.run);
    if (run == runs_.end()) return RunNotFoundError(t.run);
    const Step step(t.run, t.from, t.to, t.attempt);
    ASSIGN_OR_RETURN(bool apply, CheckTransition(run->second.state, t,
                                                 history_.contains(step)));
    if (!apply) return absl::OkStatus();
    history_.insert(step);
    const std::pair<RunId, int32_t> key(t.run, t.attempt);
    if (t.to == RunState::kRunning) {
      attempts_[key] =
          Attempt{true, TimeToNanos(t.at), TimeToNanos(absl::InfiniteFuture()),
                  RunState::kRunning};
    }
    size_t kept_output = 0;
    if (t.from == RunState::kRunning) {
      Attempt& attempt = attempts_[key];  // closes a stored one if not opened
      attempt.finished_at = TimeToNanos(t.at);
      attempt.outcome = t.to;
      attempt.exit_code = t.exit_code;
      attempt.detail = t.detail;
      attempt.output = t.output;
      attempt.truncated = TruncateOutput(&attempt.output, max_output_bytes_);
      kept_output = attempt.output.size();
    }
    Run& r = run->second;
    r.state = t.to;
    r.changed = true;
    r.attempt = std::max(r.attempt, t.attempt);
    r.at = TimeToNanos(t.at);
    r.detail = t.detail;
    r.bytes += TransitionBytes(t, kept_output);
    transitions_.run.Int(Id(t.run));
    transitions_.seq.Int(++r.steps);
    transitions_.from.Int(State(t.from));
    transitions_.to.Int(State(t.to));
    transitions_.attempt.Int(t.attempt);
    transitions_.at.Int(TimeToNanos(t.at));
    transitions_.detail.Hex(t.detail);
    return absl::OkStatus();
  }

  // Appends the transitions to the runs' histories (after their stored
  // ones), writes the attempts opened or closed, and the runs' new rows.
  absl::Status Write(PgTx& tx) const {
    if (transitions_.run.empty()) return absl::OkStatus();  // all re-sends
    RETURN_IF_ERROR(
        tx.Run("INSERT INTO transitions SELECT u.run, COALESCE((SELECT "
               "MAX(seq) FROM transitions x WHERE x.run_id = u.run), 0) + "
               "u.seq, u.from_state, u.to_state, u.attempt, $8::bigint, u.at, "
               "decode(u.detail, 'hex') FROM unnest($1::bigint[], "
               "$2::integer[], $3::smallint[], $4::smallint[], $5::integer[], "
               "$6::bigint[], $7::text[]) AS u(run, seq, from_state, "
               "to_state, attempt, at, detail)",
               {transitions_.run.Param(), transitions_.seq.Param(),
                transitions_.from.Param(), transitions_.to.Param(),
                transitions_.attempt.Param(), transitions_.at.Param(),
                transitions_.detail.Param(), token_})
            .status());
    RETURN_IF_ERROR(WriteAttempts(tx));
    PgArray ids, states, attempts, ats, details, bytes;
    for (const auto& [id, run] : runs_) {
      if (!run.changed) continue;
      ids.Int(Id(id));
      states.Int(State(run.state));
      attempts.Int(run.attempt);
      ats.Int(run.at);
      details.Hex(run.detail);
      bytes.Int(run.bytes);
    }
    return tx
        .Run(
            "UPDATE runs SET state = u.state, attempt = GREATEST(runs.attempt, "
            "u.attempt), token = $7::bigint, updated_at = u.at, detail = "
            "decode(u.detail, 'hex'), bytes = runs.bytes + u.bytes FROM "
            "unnest($1::bigint[], $2::smallint[], $3::integer[], "
            "$4::bigint[], $5::text[], $6::bigint[]) AS u(id, state, "
            "attempt, at, detail, bytes) WHERE runs.id = u.id",
            {ids.Param(), states.Param(), attempts.Param(), ats.Param(),
             details.Param(), bytes.Param(), token_})
        .status();
  }

 private:
  using Step = std::tuple<RunId, RunState, RunState, int32_t>;

  struct Run {
    RunState state = RunState::kPending;
    bool changed = false;
    int32_t attempt = 0;  // the highest attempt of the batch's transitions
    int64_t at = 0;
    std::string detail;
    int64_t bytes = 0;  // added to the stored count
    int32_t steps = 0;  // transitions added to the history
  };
  // An attempt's row after the batch. `opened`: (re)started by the batch,
  // written whole (an attempt started again starts afresh); otherwise a
  // stored attempt the batch closed, and only the closing columns change.
  struct Attempt {
    bool opened = false;
    int64_t started_at = 0;
    int64_t finished_at = 0;
    RunState outcome = RunState::kRunning;
    int32_t exit_code = 0;
    std::string detail;
    std::string output;
    bool truncated = false;
  };
  struct TransitionRows {
    PgArray run, seq, from, to, attempt, at, detail;
  };

  std::vector<PgParam> WithToken(std::vector<PgParam> params) const {
    params.push_back(token_);
    return params;
  }

  absl::Status WriteAttempts(PgTx& tx) const {
    PgArray runs, numbers, opened, started, finished, outcomes, exit_codes,
        details, outputs, truncated;
    int opened_count = 0;
    for (const auto& [key, a] : attempts_) {
      opened_count += a.opened ? 1 : 0;
      runs.Int(Id(key.first));
      numbers.Int(key.second);
      opened.Bool(a.opened);
      started.Int(a.started_at);
      finished.Int(a.finished_at);
      outcomes.Int(State(a.outcome));
      exit_codes.Int(a.exit_code);
      details.Hex(a.detail);
      outputs.Hex(a.output);
      truncated.Bool(a.truncated);
    }
    if (runs.empty()) return absl::OkStatus();
    std::vector<PgParam> params = {
        runs.Param(),     numbers.Param(),  opened.Param(),     started.Param(),
        finished.Param(), outcomes.Param(), exit_codes.Param(), details.Param(),
        outputs.Param(),  truncated.Param()};
#define CHIME_PG_UNNEST_ATTEMPTS                                          \
  "unnest($1::bigint[], $2::integer[], $3::boolean[], $4::bigint[], "     \
  "$5::bigint[], $6::smallint[], $7::integer[], $8::text[], $9::text[], " \
  "$10::boolean[]) AS a(run, number, opened, started_at, finished_at, "   \
  "outcome, exit_code, detail, output, truncated)"
    // Both statements take the same arrays: the first writes the attempts
    // opened, the second the ones closed only; each runs only if it has rows.
    if (opened_count > 0) {
      RETURN_IF_ERROR(
          tx.Run(
                "INSERT INTO attempts SELECT a.run, a.number, $11::bigint, "
                "a.started_at, a.finished_at, a.outcome, a.exit_code, "
                "decode(a.detail, 'hex'), decode(a.output, 'hex'), a.truncated "
                "FROM " CHIME_PG_UNNEST_ATTEMPTS " WHERE a.opened "
                "ON CONFLICT (run_id, number) DO UPDATE SET "
                "token = EXCLUDED.token, started_at = EXCLUDED.started_at, "
                "finished_at = EXCLUDED.finished_at, outcome = "
                "EXCLUDED.outcome, exit_code = EXCLUDED.exit_code, detail = "
                "EXCLUDED.detail, output = EXCLUDED.output, output_truncated = "
                "EXCLUDED.output_truncated",
                WithToken(params))
              .status());
    }
    if (opened_count == runs.size()) return absl::OkStatus();
    return tx
        .Run(
            "UPDATE attempts SET finished_at = a.finished_at, outcome = "
            "a.outcome, exit_code = a.exit_code, detail = decode(a.detail, "
            "'hex'), output = decode(a.output, 'hex'), output_truncated = "
            "a.truncated FROM " CHIME_PG_UNNEST_ATTEMPTS
            " WHERE NOT "
            "a.opened AND attempts.run_id = a.run AND attempts.number = "
            "a.number",
            params)
        .status();
#undef CHIME_PG_UNNEST_ATTEMPTS
  }

  const int64_t token_;
  const size_t max_output_bytes_;
  absl::flat_hash_map<RunId, Run> runs_;
  // (run, from, to, attempt) of every transition in the runs' histories:
  // stored, or applied by the batch.
  absl::flat_hash_set<Step> history_;
  // Ordered, so that the rows go in one order every time.
  std::map<std::pair<RunId, int32_t>, Attempt> attempts_;
  TransitionRows transitions_;
};

}  // namespace

absl::Status PostgresStore::TransitionRuns(
    const Fence& fence, absl::Span<const RunTransition> batch,
    MonoTime deadline) {
  RETURN_IF_ERROR(ValidateTransitions(batch));
  PgArray runs;
  for (const RunTransition& t : batch) runs.Int(Id(t.run));
  return Write(deadline, [&](PgTx& tx) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(tx, fence));
    if (batch.empty()) return absl::OkStatus();
    // The runs are locked first, in id order (batches that share runs do not
    // deadlock); their histories are read after, by a statement of its own,
    // so that they include what the lock waited for. Both read through the
    // primary keys' index (= ANY), whatever the planner makes of a join.
    ASSIGN_OR_RETURN(PgResult states,
                     tx.Run("SELECT id, state FROM runs WHERE id = "
                            "ANY($1::bigint[]) ORDER BY id FOR UPDATE",
                            {runs.Param()}));
    ASSIGN_OR_RETURN(
        PgResult history,
        tx.Run("SELECT run_id, from_state, to_state, attempt FROM transitions "
               "WHERE run_id = ANY($1::bigint[])",
               {runs.Param()}));
    TransitionPlan plan(fence.token, options_.max_output_bytes);
    for (int i = 0; i < states.rows(); ++i) {
      plan.AddRun(static_cast<RunId>(states.Int(i, 0)),
                  static_cast<RunState>(states.Int(i, 1)));
    }
    for (int i = 0; i < history.rows(); ++i) {
      plan.AddHistory(static_cast<RunId>(history.Int(i, 0)),
                      static_cast<RunState>(history.Int(i, 1)),
                      static_cast<RunState>(history.Int(i, 2)),
                      static_cast<int32_t>(history.Int(i, 3)));
    }
    for (const RunTransition& t : batch) RETURN_IF_ERROR(plan.Apply(t));
    return plan.Write(tx);
  });
}

absl::StatusOr<RunDetail> PostgresStore::GetRun(RunId run, MonoTime deadline) {
  RunDetail out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    out = RunDetail{};
    ASSIGN_OR_RETURN(PgResult r, tx.Run(kPgSelectRunById, {Id(run)}));
    if (r.rows() == 0) {
      return RunNotFoundError(run);
    }
    out.run = RunFromRow(r, 0);
    ASSIGN_OR_RETURN(
        PgResult attempts,
        tx.Run("SELECT number, token, started_at, finished_at, outcome, "
               "exit_code, detail, output, output_truncated FROM attempts "
               "WHERE run_id = $1::bigint ORDER BY number",
               {Id(run)}));
    for (int i = 0; i < attempts.rows(); ++i) {
      out.attempts.push_back(AttemptRecord{
          static_cast<int32_t>(attempts.Int(i, 0)), attempts.Int(i, 1),
          NanosToTime(attempts.Int(i, 2)), NanosToTime(attempts.Int(i, 3)),
          static_cast<RunState>(attempts.Int(i, 4)),
          static_cast<int32_t>(attempts.Int(i, 5)), attempts.Bytes(i, 6),
          attempts.Bytes(i, 7), attempts.Bool(i, 8)});
    }
    ASSIGN_OR_RETURN(
        PgResult steps,
        tx.Run("SELECT from_state, to_state, attempt, token, at, detail FROM "
               "transitions WHERE run_id = $1::bigint ORDER BY seq",
               {Id(run)}));
    for (int i = 0; i < steps.rows(); ++i) {
      out.transitions.push_back(TransitionRecord{
          static_cast<RunState>(steps.Int(i, 0)),
          static_cast<RunState>(steps.Int(i, 1)),
          static_cast<int32_t>(steps.Int(i, 2)), steps.Int(i, 3),
          NanosToTime(steps.Int(i, 4)), steps.Bytes(i, 5)});
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<RunPage> PostgresStore::ListRuns(const RunQuery& query,
                                                MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(query.limit));
  // One prepared statement per combination of filters and state.
  const std::string sql = PgListRunsSql(query);
  std::vector<PgParam> params = {TimeToNanos(query.from),
                                 TimeToNanos(query.to)};
  if (query.job) params.push_back(*query.job);
  if (query.after) {
    params.push_back(TimeToNanos(query.after->scheduled_time));
    params.push_back(Id(query.after->run));
  }
  params.push_back(int64_t{query.limit} + 1);
  RunPage page;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    page = RunPage{};
    ASSIGN_OR_RETURN(PgResult r, tx.Run(sql, params));
    for (int i = 0; i < std::min(r.rows(), query.limit); ++i) {
      page.runs.push_back(RunFromRow(r, i));
    }
    if (r.rows() > query.limit) {
      const RunRecord& last = page.runs.back();
      page.next = RunCursor{last.fire.scheduled_time, last.id};
    }
    return absl::OkStatus();
  }));
  return page;
}

absl::StatusOr<RetentionResult> PostgresStore::ApplyRetention(
    const RetentionPolicy& policy, absl::Time now, MonoTime deadline) {
  RetentionResult result;
  RETURN_IF_ERROR(Write(deadline, [&](PgTx& tx) -> absl::Status {
    result = RetentionResult{};
    ASSIGN_OR_RETURN(PgResult total,
                     tx.Run("SELECT COALESCE(SUM(bytes), 0) FROM runs"));
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT id, job_id, scheduled, updated_at, bytes FROM runs "
               "WHERE state IN ($1::smallint, $2::smallint, $3::smallint)",
               {State(RunState::kSucceeded), State(RunState::kFailed),
                State(RunState::kCancelled)}));
    std::vector<RetentionCandidate> finished;
    finished.reserve(r.rows());
    for (int i = 0; i < r.rows(); ++i) {
      finished.push_back(RetentionCandidate{
          static_cast<RunId>(r.Int(i, 0)), r.Int(i, 1),
          NanosToTime(r.Int(i, 2)), NanosToTime(r.Int(i, 3)), r.Int(i, 4)});
    }
    const std::vector<RunId> doomed =
        SelectRunsToDelete(std::move(finished), total.Int(0, 0), policy, now);
    if (!doomed.empty()) {
      // The highest RunId ever claimed outlives its run.
      RETURN_IF_ERROR(
          tx.Run("UPDATE meta SET value = GREATEST(value, (SELECT "
                 "COALESCE(MAX(id), 0) FROM runs)) WHERE key = 'max_run_id'")
              .status());
      const std::string ids =
          absl::StrCat("{", absl::StrJoin(doomed, ","), "}");
      for (const char* sql :
           {"DELETE FROM runs WHERE id = ANY($1::bigint[])",
            "DELETE FROM transitions WHERE run_id = ANY($1::bigint[])",
            "DELETE FROM attempts WHERE run_id = ANY($1::bigint[])"}) {
        RETURN_IF_ERROR(tx.Run(sql, {ids}).status());
      }
      result.runs_deleted = static_cast<int64_t>(doomed.size());
    }
    if (policy.max_age != absl::InfiniteDuration()) {
      ASSIGN_OR_RETURN(PgResult missed,
                       tx.Run("DELETE FROM missed WHERE last < $1::bigint",
                              {TimeToNanos(now - policy.max_age)}));
      result.missed_deleted = missed.affected();
    }
    ASSIGN_OR_RETURN(
        PgResult keys,
        tx.Run("DELETE FROM idempotency WHERE expires_at <= $1::bigint",
               {TimeToNanos(now)}));
    result.idempotency_keys_deleted = keys.affected();
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace chime::store
