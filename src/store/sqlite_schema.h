// SqliteStore's schema and its numbered migrations.
//
// Migration N takes a database from schema version N-1 to N; they are applied
// in order, each in the open transaction, at start-up. The version is the one
// row of table `schema_version`; an empty file is version 0. A database at a
// version above kSchemaVersion was written by a newer chime and is refused,
// unchanged. docs/storage.md describes every table.
//
// Thread-safety: the caller serializes use of the Db.
#ifndef CHIME_SRC_STORE_SQLITE_SCHEMA_H_
#define CHIME_SRC_STORE_SQLITE_SCHEMA_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "chime/store_types.h"
#include "src/store/sqlite_db.h"

namespace chime::store {

inline constexpr int64_t kSchemaVersion = 4;

// Reads the schema version and applies the missing migrations. REQUIRES: a
// write transaction is open. Returns the version found before migrating.
// FailedPrecondition (nothing changed) for a newer schema; DataLoss for a
// database with tables but no schema_version (not chime's).
absl::StatusOr<int64_t> MigrateSchema(Db& db);

// The `meta` table: named int64 counters (epoch, revision, last_token,
// max_run_id).
absl::StatusOr<int64_t> GetMeta(Db& db, absl::string_view key);
absl::Status SetMeta(Db& db, absl::string_view key, int64_t value);

// The highest RunId ever claimed: the larger of the runs table's highest id
// and meta.max_run_id, which a claim does not touch (that would add a write
// of a shared row to every claim) but retention raises to the highest id it
// is about to delete (KeepMaxRunId, before deleting).
absl::StatusOr<int64_t> MaxRunId(Db& db);
absl::Status KeepMaxRunId(Db& db);

// The run queries whose plans rely on the indexes above (kept here, beside
// them; sqlite_store_test.cc checks their plans). Both select a run with its
// job's key -- runs LEFT JOIN jobs, so a deleted job's tombstone gives it --
// in the columns: id, job_id, generation, scheduled, manual, state, attempt,
// token, created_at, updated_at, detail, the job's namespace, its id.
//
// GetRun's; binds the run id.
extern const char kSelectRunById[];
// ListRuns's for the filters `query` has, newest scheduled time first, then
// highest id. Binds, in order: from, to, [job], [after: its scheduled time
// twice, its run], the row limit. With a job: no limit, and runs at the
// same time in no particular order (the caller reads on until the time
// changes and orders them). The state, when given, is written into the
// text (not bound) so that the planner can use the partial index of failed
// runs. With a job, the rows end after `detail` (no join: the key is the
// job's, read once).
std::string ListRunsSql(const RunQuery& query);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_SQLITE_SCHEMA_H_
