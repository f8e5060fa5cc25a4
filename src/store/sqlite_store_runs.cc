// SqliteStore: run transitions, history and retention.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/retention.h"
#include "src/store/sqlite_schema.h"
#include "src/store/sqlite_store.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

// A row of kSelectRunById or ListRunsSql (sqlite_schema.h); `key` for rows
// without the job's key (one job's listing).
RunRecord RunFromRow(const Stmt& s, const JobKey* key = nullptr) {
  RunRecord r;
  r.id = static_cast<RunId>(s.Int(0));
  r.fire = FireRef{s.Int(1), s.Int(2), NanosToTime(s.Int(3)), s.Int(4) != 0};
  r.state = static_cast<RunState>(s.Int(5));
  r.attempt = static_cast<int32_t>(s.Int(6));
  r.token = s.Int(7);
  r.created_at = NanosToTime(s.Int(8));
  r.updated_at = NanosToTime(s.Int(9));
  r.detail = s.Text(10);
  r.job_key = key != nullptr ? *key : JobKey{s.Text(11), s.Text(12)};
  return r;
}

int64_t Id(RunId run) { return static_cast<int64_t>(run); }

// One job's page from `stmt` (ListRunsSql with a job: newest time first,
// ties in time in any order): reads on past `limit` rows until the time
// changes, so that every run tied with the page's last one is seen, orders
// ties highest run id first, and keeps `limit` of them.
absl::Status ReadJobPage(Stmt& stmt, const JobKey& key, size_t limit,
                         RunPage* page) {
  std::vector<RunRecord>& runs = page->runs;
  bool more = false;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (runs.size() >= limit &&
        NanosToTime(stmt.Int(3)) != runs.back().fire.scheduled_time) {
      more = true;
      break;
    }
    runs.push_back(RunFromRow(stmt, &key));
  }
  const auto newer = [](const RunRecord& a, const RunRecord& b) {
    if (a.fire.scheduled_time != b.fire.scheduled_time)
      return a.fire.scheduled_time > b.fire.scheduled_time;
    return a.id > b.id;
  };
  if (!std::is_sorted(runs.begin(), runs.end(), newer))
    std::sort(runs.begin(), runs.end(), newer);
  if (runs.size() > limit) {
    more = true;
    runs.resize(limit);
  }
  if (more)
    page->next = RunCursor{runs.back().fire.scheduled_time, runs.back().id};
  return absl::OkStatus();
}

// Applies one transition already checked against the run's state.
absl::Status ApplyTransition(Db& db, const RunTransition& t, int64_t token,
                             size_t max_output_bytes) {
  size_t kept_output = 0;
  if (t.to == RunState::kRunning) {
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("INSERT OR REPLACE INTO attempts VALUES "
                                "(?, ?, ?, ?, ?, ?, 0, '', x'', 0)"));
    RETURN_IF_ERROR(stmt->Bind(1, Id(t.run))
                        .Bind(2, t.attempt)
                        .Bind(3, token)
                        .Bind(4, TimeToNanos(t.at))
                        .Bind(5, TimeToNanos(absl::InfiniteFuture()))
                        .Bind(6, static_cast<int64_t>(RunState::kRunning))
                        .Run());
  }
  if (t.from == RunState::kRunning) {
    std::string output = t.output;
    const bool truncated = TruncateOutput(&output, max_output_bytes);
    kept_output = output.size();
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("UPDATE attempts SET finished_at = ?, outcome = ?, "
                   "exit_code = ?, detail = ?, output = ?, "
                   "output_truncated = ? WHERE run_id = ? AND number = ?"));
    RETURN_IF_ERROR(stmt->Bind(1, TimeToNanos(t.at))
                        .Bind(2, static_cast<int64_t>(t.to))
                        .Bind(3, t.exit_code)
                        .Bind(4, t.detail)
                        .BindBlob(5, output)
                        .Bind(6, int64_t{truncated})
                        .Bind(7, Id(t.run))
                        .Bind(8, t.attempt)
                        .Run());
  }
  ASSIGN_OR_RETURN(
      StmtRef history,
      db.Prepare("INSERT INTO transitions SELECT ?1, "
                 "COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 "
                 "FROM transitions WHERE run_id = ?1"));
  RETURN_IF_ERROR(history->Bind(1, Id(t.run))
                      .Bind(2, static_cast<int64_t>(t.from))
                      .Bind(3, static_cast<int64_t>(t.to))
                      .Bind(4, t.attempt)
                      .Bind(5, token)
                      .Bind(6, TimeToNanos(t.at))
                      .Bind(7, t.detail)
                      .Run());
  ASSIGN_OR_RETURN(
      StmtRef run,
      db.Prepare("UPDATE runs SET state = ?, attempt = MAX(attempt, ?), "
                 "token = ?, updated_at = ?, detail = ?, bytes = bytes + ? "
                 "WHERE id = ?"));
  return run->Bind(1, static_cast<int64_t>(t.to))
      .Bind(2, t.attempt)
      .Bind(3, token)
      .Bind(4, TimeToNanos(t.at))
      .Bind(5, t.detail)
      .Bind(6, TransitionBytes(t, kept_output))
      .Bind(7, Id(t.run))
      .Run();
}

absl::Status DeleteRun(Db& db, RunId run) {
  for (const char* sql : {"DELETE FROM runs WHERE id = ?",
                          "DELETE FROM transitions WHERE run_id = ?",
                          "DELETE FROM attempts WHERE run_id = ?"}) {
    ASSIGN_OR_RETURN(StmtRef stmt, db.Prepare(sql));
    RETURN_IF_ERROR(stmt->Bind(1, Id(run)).Run());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SqliteStore::TransitionRuns(const Fence& fence,
                                         absl::Span<const RunTransition> batch,
                                         MonoTime deadline) {
  RETURN_IF_ERROR(ValidateTransitions(batch));
  return Write(deadline, [&](Db& db) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(db, fence));
    // In order: a later transition sees the state an earlier one wrote; the
    // savepoint undoes them all if one is refused.
    for (const RunTransition& t : batch) {
      RunState current;
      bool in_history;
      {
        ASSIGN_OR_RETURN(
            StmtRef stmt,
            db.Prepare("SELECT state, EXISTS (SELECT 1 FROM transitions "
                       "WHERE run_id = ?1 AND from_state = ?2 AND "
                       "to_state = ?3 AND attempt = ?4) FROM runs "
                       "WHERE id = ?1"));
        ASSIGN_OR_RETURN(bool row, stmt->Bind(1, Id(t.run))
                                       .Bind(2, static_cast<int64_t>(t.from))
                                       .Bind(3, static_cast<int64_t>(t.to))
                                       .Bind(4, t.attempt)
                                       .Step());
        if (!row) {
          return RunNotFoundError(t.run);
        }
        current = static_cast<RunState>(stmt->Int(0));
        in_history = stmt->Int(1) != 0;
      }
      ASSIGN_OR_RETURN(bool apply, CheckTransition(current, t, in_history));
      if (apply) {
        RETURN_IF_ERROR(
            ApplyTransition(db, t, fence.token, options_.max_output_bytes));
      }
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<RunDetail> SqliteStore::GetRun(RunId run, MonoTime deadline) {
  RunDetail out;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    out = RunDetail{};
    {
      ASSIGN_OR_RETURN(StmtRef stmt, db.Prepare(kSelectRunById));
      ASSIGN_OR_RETURN(bool row, stmt->Bind(1, Id(run)).Step());
      if (!row) {
        return RunNotFoundError(run);
      }
      out.run = RunFromRow(*stmt);
    }
    {
      ASSIGN_OR_RETURN(
          StmtRef stmt,
          db.Prepare("SELECT number, token, started_at, finished_at, outcome, "
                     "exit_code, detail, output, output_truncated "
                     "FROM attempts WHERE run_id = ? ORDER BY number"));
      stmt->Bind(1, Id(run));
      while (true) {
        ASSIGN_OR_RETURN(bool row, stmt->Step());
        if (!row) break;
        out.attempts.push_back(
            AttemptRecord{static_cast<int32_t>(stmt->Int(0)), stmt->Int(1),
                          NanosToTime(stmt->Int(2)), NanosToTime(stmt->Int(3)),
                          static_cast<RunState>(stmt->Int(4)),
                          static_cast<int32_t>(stmt->Int(5)), stmt->Text(6),
                          stmt->Text(7), stmt->Int(8) != 0});
      }
    }
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("SELECT from_state, to_state, attempt, token, "
                                "at, detail FROM transitions WHERE run_id = ? "
                                "ORDER BY seq"));
    stmt->Bind(1, Id(run));
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return absl::OkStatus();
      out.transitions.push_back(
          TransitionRecord{static_cast<RunState>(stmt->Int(0)),
                           static_cast<RunState>(stmt->Int(1)),
                           static_cast<int32_t>(stmt->Int(2)), stmt->Int(3),
                           NanosToTime(stmt->Int(4)), stmt->Text(5)});
    }
  }));
  return out;
}

absl::StatusOr<RunPage> SqliteStore::ListRuns(const RunQuery& query,
                                              MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(query.limit));
  // One cached statement per combination of filters and state (at most 32).
  const std::string sql = ListRunsSql(query);
  RunPage page;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    page = RunPage{};
    // One job's rows carry its key, read here once (empty if the job is
    // gone, as the other listings' LEFT JOIN gives).
    std::optional<JobKey> key;
    if (query.job) {
      ASSIGN_OR_RETURN(
          StmtRef job,
          db.Prepare("SELECT namespace, name FROM jobs WHERE id = ?"));
      job->Bind(1, *query.job);
      ASSIGN_OR_RETURN(bool found, job->Step());
      key = found ? JobKey{job->Text(0), job->Text(1)} : JobKey{"", ""};
    }
    ASSIGN_OR_RETURN(StmtRef stmt, db.Prepare(sql));
    int i = 1;
    stmt->Bind(i++, TimeToNanos(query.from));
    stmt->Bind(i++, TimeToNanos(query.to));
    if (query.job) stmt->Bind(i++, *query.job);
    if (query.after) {
      const int64_t at = TimeToNanos(query.after->scheduled_time);
      stmt->Bind(i++, at);
      stmt->Bind(i++, at);
      stmt->Bind(i++, Id(query.after->run));
    }
    if (query.job) {
      return ReadJobPage(*stmt, *key, static_cast<size_t>(query.limit), &page);
    }
    stmt->Bind(i++, int64_t{query.limit} + 1);
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return absl::OkStatus();
      if (static_cast<int>(page.runs.size()) == query.limit) {
        const RunRecord& last = page.runs.back();
        page.next = RunCursor{last.fire.scheduled_time, last.id};
        return absl::OkStatus();
      }
      page.runs.push_back(RunFromRow(*stmt));
    }
  }));
  return page;
}

absl::StatusOr<RetentionResult> SqliteStore::ApplyRetention(
    const RetentionPolicy& policy, absl::Time now, MonoTime deadline) {
  RetentionResult result;
  RETURN_IF_ERROR(Write(deadline, [&](Db& db) -> absl::Status {
    result = RetentionResult{};
    int64_t total = 0;
    {
      ASSIGN_OR_RETURN(StmtRef stmt,
                       db.Prepare("SELECT COALESCE(SUM(bytes), 0) FROM runs"));
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      total = row ? stmt->Int(0) : 0;
    }
    std::vector<RetentionCandidate> finished;
    {
      ASSIGN_OR_RETURN(
          StmtRef stmt,
          db.Prepare("SELECT id, job_id, scheduled, updated_at, bytes FROM "
                     "runs WHERE state IN (?, ?, ?)"));
      stmt->Bind(1, static_cast<int64_t>(RunState::kSucceeded))
          .Bind(2, static_cast<int64_t>(RunState::kFailed))
          .Bind(3, static_cast<int64_t>(RunState::kCancelled));
      while (true) {
        ASSIGN_OR_RETURN(bool row, stmt->Step());
        if (!row) break;
        finished.push_back(
            RetentionCandidate{static_cast<RunId>(stmt->Int(0)), stmt->Int(1),
                               NanosToTime(stmt->Int(2)),
                               NanosToTime(stmt->Int(3)), stmt->Int(4)});
      }
    }
    const std::vector<RunId> doomed =
        SelectRunsToDelete(std::move(finished), total, policy, now);
    if (!doomed.empty()) RETURN_IF_ERROR(KeepMaxRunId(db));
    for (RunId id : doomed) {
      RETURN_IF_ERROR(DeleteRun(db, id));
      ++result.runs_deleted;
    }
    if (policy.max_age != absl::InfiniteDuration()) {
      ASSIGN_OR_RETURN(StmtRef stmt,
                       db.Prepare("DELETE FROM missed WHERE last < ?"));
      RETURN_IF_ERROR(stmt->Bind(1, TimeToNanos(now - policy.max_age)).Run());
      result.missed_deleted = db.Changes();
    }
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("DELETE FROM idempotency WHERE expires_at <= ?"));
    RETURN_IF_ERROR(stmt->Bind(1, TimeToNanos(now)).Run());
    result.idempotency_keys_deleted = db.Changes();
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace chime::store
