// PostgresStore's schema and its versioned migrations.
//
// Migration N takes the schema from version N-1 to N. The versions applied
// are the rows of table `schema_migrations` (version, applied_at); a database
// without it is version 0. MigratePostgres applies the missing ones in one
// transaction, holding a transaction-level advisory lock (kMigrationLockKey)
// so that nodes opening the store at the same moment migrate once, in turn:
// the second one finds the schema current. A database at a version above
// kPostgresSchemaVersion was migrated by a newer chime and is refused,
// unchanged. docs/storage.md describes every table.
//
// Thread-safety: the caller serializes use of the connection.
#ifndef CHIME_SRC_STORE_POSTGRES_SCHEMA_H_
#define CHIME_SRC_STORE_POSTGRES_SCHEMA_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "chime/store_types.h"
#include "src/store/pg_conn.h"

namespace chime::store {

inline constexpr int64_t kPostgresSchemaVersion = 3;
// pg_advisory_xact_lock's key while migrating ("chime" in ASCII).
inline constexpr int64_t kMigrationLockKey = 0x6368696d65;

// Brings the schema to kPostgresSchemaVersion in one transaction (opened and
// committed here). Returns the version found before migrating.
// FailedPrecondition (nothing changed) for a newer schema.
absl::StatusOr<int64_t> MigratePostgres(PgConn& conn, MonoTime deadline);

// The database clock, in int64 nanoseconds since the Unix epoch, when the
// store has no Options::clock: `COALESCE($n::bigint, <this>)` reads "the
// clock the store was given, else the database's".
#define CHIME_PG_DB_NOW \
  "(extract(epoch from clock_timestamp()) * 1000000000)::bigint"

// The run queries: a run with its job's key (runs LEFT JOIN jobs, so a
// deleted job's tombstone gives it), in the columns id, job_id, generation,
// scheduled, manual, state, attempt, token, created_at, updated_at, detail,
// the job's namespace, its name.
//
// GetRun's; $1 is the run id.
extern const char kPgSelectRunById[];
// ListRuns's for the filters `query` has, newest scheduled time first, then
// highest id. Parameters, in order: from, to, [job], [after: its scheduled
// time, its run], the row limit.
std::string PgListRunsSql(const RunQuery& query);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_POSTGRES_SCHEMA_H_
