#include "src/store/sqlite_schema.h"

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"

namespace chime::store {
namespace {

// kMigrations[i] takes the schema from version i to i + 1. Never edit one that
// has shipped: add the next.
constexpr const char* kMigrations[] = {
    // 1: the first schema.
    R"sql(
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (0);
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES ('epoch', 0), ('revision', 0), ('last_token', 0),
                        ('max_run_id', 0);
CREATE TABLE leases(
  name TEXT PRIMARY KEY, holder TEXT NOT NULL, token INTEGER NOT NULL,
  expires_mono INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL,
  generation INTEGER NOT NULL, revision INTEGER NOT NULL,
  deleted INTEGER NOT NULL, watermark INTEGER NOT NULL, spec BLOB NOT NULL,
  UNIQUE(namespace, name));
CREATE INDEX jobs_by_revision ON jobs(revision);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,
  generation INTEGER NOT NULL, scheduled INTEGER NOT NULL,
  manual INTEGER NOT NULL, state INTEGER NOT NULL, attempt INTEGER NOT NULL,
  token INTEGER NOT NULL, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, detail TEXT NOT NULL, bytes INTEGER NOT NULL);
CREATE UNIQUE INDEX runs_by_fire ON runs(job_id, generation, scheduled, manual);
CREATE INDEX runs_by_job ON runs(job_id, scheduled, id);
CREATE INDEX runs_by_time ON runs(scheduled, id);
CREATE TABLE transitions(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, from_state INTEGER NOT NULL,
  to_state INTEGER NOT NULL, attempt INTEGER NOT NULL, token INTEGER NOT NULL,
  at INTEGER NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE INDEX transitions_by_step
  ON transitions(run_id, from_state, to_state, attempt);
CREATE TABLE attempts(
  run_id INTEGER NOT NULL, number INTEGER NOT NULL, token INTEGER NOT NULL,
  started_at INTEGER NOT NULL, finished_at INTEGER NOT NULL,
  outcome INTEGER NOT NULL, exit_code INTEGER NOT NULL, detail TEXT NOT NULL,
  output BLOB NOT NULL, output_truncated INTEGER NOT NULL,
  PRIMARY KEY(run_id, number)) WITHOUT ROWID;
CREATE TABLE missed(
  job_id INTEGER NOT NULL, first INTEGER NOT NULL, reason INTEGER NOT NULL,
  generation INTEGER NOT NULL, last INTEGER NOT NULL, count INTEGER NOT NULL,
  capped INTEGER NOT NULL,
  PRIMARY KEY(job_id, first, reason, generation)) WITHOUT ROWID;
CREATE TABLE idempotency(
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, response BLOB NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX idempotency_by_expiry ON idempotency(expires_at);
)sql",
    // 2: a job's watermark belongs to a generation. Version 1 kept one
    // forward-only watermark per job, meant to be resumed by the job's current
    // schedule: an existing watermark gets the job's current generation, which
    // keeps that meaning. No watermark (InfinitePast, the int64 minimum) stays
    // generation 0.
    R"sql(
ALTER TABLE jobs ADD COLUMN watermark_generation INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET watermark_generation = generation
  WHERE watermark <> -9223372036854775807 - 1;
)sql",
    // 3: two indexes fewer, for fewer pages written per write. The claim's
    // unique index leads with (job_id, scheduled), so it also serves a job's
    // history newest first, which runs_by_job did; a run's transitions are
    // few and adjacent under their primary key (run_id, seq), which serves
    // the re-send check that transitions_by_step did.
    R"sql(
DROP INDEX runs_by_job;
DROP INDEX runs_by_fire;
CREATE UNIQUE INDEX runs_by_fire ON runs(job_id, scheduled, generation, manual);
DROP INDEX transitions_by_step;
)sql",
    // 4: failed runs (5 is RunState::kFailed) in an index of their own, for
    // the dead letters -- every job's failed runs, newest first -- which
    // would otherwise walk the whole history by time. A partial index: a
    // run enters it only when it fails, so claims and the transitions of
    // runs that do not fail write nothing more.
    R"sql(
CREATE INDEX runs_failed ON runs(scheduled, id) WHERE state = 5;
)sql",
};
static_assert(static_cast<int>(RunState::kFailed) == 5,
              "migration 4's partial index names failed runs by number");
static_assert(std::size(kMigrations) == kSchemaVersion);

absl::StatusOr<int64_t> CountRows(Db& db, absl::string_view sql) {
  ASSIGN_OR_RETURN(StmtRef stmt, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  return row ? stmt->Int(0) : 0;
}

}  // namespace

absl::StatusOr<int64_t> MigrateSchema(Db& db) {
  ASSIGN_OR_RETURN(
      int64_t has_version,
      CountRows(db,
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
                "AND name = 'schema_version'"));
  int64_t version = 0;
  if (has_version == 0) {
    ASSIGN_OR_RETURN(int64_t tables,
                     CountRows(db, "SELECT COUNT(*) FROM sqlite_master"));
    if (tables != 0) {
      return absl::DataLossError(
          absl::StrCat(db.path(),
                       ": has tables but no schema_version: not a chime "
                       "database; it was left untouched"));
    }
  } else {
    ASSIGN_OR_RETURN(version,
                     CountRows(db, "SELECT version FROM schema_version"));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        db.path(), ": schema version ", version,
        " is newer than this binary knows (", kSchemaVersion,
        "); it was written by a newer chime. Run that version, or restore a "
        "backup; nothing was changed"));
  }
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    RETURN_IF_ERROR(db.Exec(kMigrations[v]));
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("UPDATE schema_version SET version = ?"));
    RETURN_IF_ERROR(stmt->Bind(1, v + 1).Run());
  }
  return version;
}

absl::StatusOr<int64_t> GetMeta(Db& db, absl::string_view key) {
  ASSIGN_OR_RETURN(StmtRef stmt,
                   db.Prepare("SELECT value FROM meta WHERE key = ?"));
  ASSIGN_OR_RETURN(bool row, stmt->Bind(1, key).Step());
  if (!row) {
    return absl::DataLossError(
        absl::StrCat(db.path(), ": meta row \"", key, "\" is missing"));
  }
  return stmt->Int(0);
}

absl::Status SetMeta(Db& db, absl::string_view key, int64_t value) {
  ASSIGN_OR_RETURN(StmtRef stmt,
                   db.Prepare("UPDATE meta SET value = ? WHERE key = ?"));
  return stmt->Bind(1, value).Bind(2, key).Run();
}

absl::StatusOr<int64_t> MaxRunId(Db& db) {
  ASSIGN_OR_RETURN(
      StmtRef stmt,
      db.Prepare("SELECT MAX(value, COALESCE((SELECT MAX(id) FROM runs), 0)) "
                 "FROM meta WHERE key = 'max_run_id'"));
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) {
    return absl::DataLossError(
        absl::StrCat(db.path(), ": meta row \"max_run_id\" is missing"));
  }
  return stmt->Int(0);
}

absl::Status KeepMaxRunId(Db& db) {
  ASSIGN_OR_RETURN(int64_t max_run, MaxRunId(db));
  return SetMeta(db, "max_run_id", max_run);
}

#define CHIME_RUN_COLUMNS                                                \
  "SELECT runs.id, runs.job_id, runs.generation, runs.scheduled, "       \
  "runs.manual, runs.state, runs.attempt, runs.token, runs.created_at, " \
  "runs.updated_at, runs.detail"
#define CHIME_SELECT_RUNS                       \
  CHIME_RUN_COLUMNS                             \
  ", jobs.namespace, jobs.name FROM runs LEFT " \
  "JOIN jobs ON jobs.id = runs.job_id"

const char kSelectRunById[] = CHIME_SELECT_RUNS " WHERE runs.id = ?";

std::string ListRunsSql(const RunQuery& query) {
  std::string sql = absl::StrCat(
      query.job ? CHIME_RUN_COLUMNS " FROM runs" : CHIME_SELECT_RUNS,
      " WHERE runs.scheduled >= ? AND runs.scheduled < ?");
  if (query.job) absl::StrAppend(&sql, " AND runs.job_id = ?");
  if (query.state) {
    absl::StrAppend(&sql, " AND runs.state = ", static_cast<int>(*query.state));
  }
  if (query.after) {
    absl::StrAppend(&sql,
                    " AND (runs.scheduled < ? OR (runs.scheduled = ? AND "
                    "runs.id < ?))");
  }
  // One job's runs come in its index's order (scheduled, then generation and
  // manual): ListRuns puts ties in time in run id order itself, which costs
  // far less than SQLite's sort of every page.
  absl::StrAppend(
      &sql, query.job ? " ORDER BY runs.scheduled DESC"
                      : " ORDER BY runs.scheduled DESC, runs.id DESC LIMIT ?");
  return sql;
}

#undef CHIME_SELECT_RUNS
#undef CHIME_RUN_COLUMNS

}  // namespace chime::store
