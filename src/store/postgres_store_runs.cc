// PostgresStore: run transitions, history and retention.
#include <algorithm>
#include <utility>

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

// Applies one transition already checked against the run's state.
absl::Status ApplyTransition(PgTx& tx, const RunTransition& t, int64_t token,
                             size_t max_output_bytes) {
  size_t kept_output = 0;
  if (t.to == RunState::kRunning) {
    RETURN_IF_ERROR(
        tx.Run(
              "INSERT INTO attempts VALUES ($1::bigint, $2::integer, "
              "$3::bigint, $4::bigint, $5::bigint, $6::smallint, 0, ''::bytea, "
              "''::bytea, false) ON CONFLICT (run_id, number) DO UPDATE SET "
              "token = EXCLUDED.token, started_at = EXCLUDED.started_at, "
              "finished_at = EXCLUDED.finished_at, outcome = "
              "EXCLUDED.outcome, exit_code = 0, detail = ''::bytea, "
              "output = ''::bytea, output_truncated = false",
              {Id(t.run), t.attempt, token, TimeToNanos(t.at),
               TimeToNanos(absl::InfiniteFuture()), State(RunState::kRunning)})
            .status());
  }
  if (t.from == RunState::kRunning) {
    std::string output = t.output;
    const bool truncated = TruncateOutput(&output, max_output_bytes);
    kept_output = output.size();
    RETURN_IF_ERROR(
        tx.Run("UPDATE attempts SET finished_at = $1::bigint, outcome = "
               "$2::smallint, exit_code = $3::integer, detail = $4, "
               "output = $5, output_truncated = $6::boolean "
               "WHERE run_id = $7::bigint AND number = $8::integer",
               {TimeToNanos(t.at), State(t.to), t.exit_code,
                PgParam::Bytes(t.detail), PgParam::Bytes(output),
                truncated ? "true" : "false", Id(t.run), t.attempt})
            .status());
  }
  RETURN_IF_ERROR(
      tx.Run("INSERT INTO transitions SELECT $1::bigint, "
             "COALESCE(MAX(seq), 0) + 1, $2::smallint, $3::smallint, "
             "$4::integer, $5::bigint, $6::bigint, $7::bytea "
             "FROM transitions WHERE run_id = $1::bigint",
             {Id(t.run), State(t.from), State(t.to), t.attempt, token,
              TimeToNanos(t.at), PgParam::Bytes(t.detail)})
          .status());
  return tx
      .Run(
          "UPDATE runs SET state = $1::smallint, attempt = GREATEST(attempt, "
          "$2::integer), token = $3::bigint, updated_at = $4::bigint, "
          "detail = $5, bytes = bytes + $6::bigint WHERE id = $7::bigint",
          {State(t.to), t.attempt, token, TimeToNanos(t.at),
           PgParam::Bytes(t.detail), TransitionBytes(t, kept_output),
           Id(t.run)})
      .status();
}

}  // namespace

absl::Status PostgresStore::TransitionRuns(
    const Fence& fence, absl::Span<const RunTransition> batch,
    MonoTime deadline) {
  RETURN_IF_ERROR(ValidateTransitions(batch));
  return Write(deadline, [&](PgTx& tx) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(tx, fence));
    // In order: a later transition sees the state an earlier one wrote; an
    // error rolls them all back.
    for (const RunTransition& t : batch) {
      ASSIGN_OR_RETURN(
          PgResult r,
          tx.Run("SELECT state, EXISTS (SELECT 1 FROM transitions "
                 "WHERE run_id = $1::bigint AND from_state = $2::smallint AND "
                 "to_state = $3::smallint AND attempt = $4::integer) "
                 "FROM runs WHERE id = $1::bigint FOR UPDATE OF runs",
                 {Id(t.run), State(t.from), State(t.to), t.attempt}));
      if (r.rows() == 0) {
        return RunNotFoundError(t.run);
      }
      ASSIGN_OR_RETURN(
          bool apply,
          CheckTransition(static_cast<RunState>(r.Int(0, 0)), t, r.Bool(0, 1)));
      if (apply) {
        RETURN_IF_ERROR(
            ApplyTransition(tx, t, fence.token, options_.max_output_bytes));
      }
    }
    return absl::OkStatus();
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
