// PostgresStore: chime::Store in a PostgreSQL (15 or later) database -- the
// shared store of a cluster of chime nodes.
//
//   PostgresStore::Options options;
//   options.conninfo = "host=db.example port=5432 dbname=chime user=chime";
//   ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> store,
//                    PostgresStore::Open(options));
//
// Every Store method is one transaction on one connection of a small pool
// (Options::pool_size, opened lazily), with prepared statements. Writes run at
// READ COMMITTED and take row locks where they decide on what they read;
// reads of more than one statement run in a REPEATABLE READ READ ONLY
// transaction (one snapshot). Open applies the schema migrations
// (postgres_schema.h), safely when several nodes open at once.
//
// Batches cost a fixed number of statements, whatever their size: ClaimFires,
// TransitionRuns and LookupClaims send their items as array parameters, one
// array per column, that the statement pairs again with unnest(); the checks
// a batch needs (states, histories, watermarks) are read in one statement and
// decided here, in batch order, and each table is then written by one
// INSERT ... ON CONFLICT or UPDATE ... FROM.
//
// Leases are rows (name, holder, epoch, expires_at); the epoch is the fencing
// token, drawn from a sequence at every grant to a new holder, so tokens only
// grow. They are not advisory locks: a paused or partitioned holder keeps an
// advisory lock indefinitely, while a lease row simply expires. Every fenced
// write (ClaimFires, TransitionRuns) first reads the lease row FOR KEY SHARE
// (kCheckFenceSql) and checks the token is current: a grant to another holder
// (SELECT ... FOR UPDATE) must wait for the write's transaction to end, and a
// write after that grant is refused. A renewal only updates expires_at, which
// takes the weaker FOR NO KEY UPDATE lock: it never waits for writes in
// flight (with FOR SHARE it queued behind a node's steady stream of writes,
// seconds under load, until the lease expired).
//
// Clocks. Lease expiry is measured on one clock for every node:
//   - Options::clock null (production): the database's clock_timestamp().
//     Nodes never compare their own wall clocks; a node keeps its own
//     conservative, monotonic deadline for acting on a lease (LeaseGrant).
//     Deadlines run on RealClock.
//   - Options::clock set (tests): lease expiry and LeaseInfo::remaining use
//     that clock's monotonic time, sent as a parameter, so a SimulatedClock
//     expires leases when it advances. Deadlines run on it too.
//   One database must only ever be used in one of the two modes.
// Every other time (scheduled, created, transition times) is the caller's.
//
// Deadlines: a statement still running at the call's deadline is cancelled
// (PQcancel) and its connection closed; the call answers DeadlineExceeded
// (for a write: indeterminate). The deadline is checked every 50 ms of real
// time at most.
//
// Errors: a lost connection or a server shutting down is Unavailable (the
// connection is dropped and the next call opens another); a deadlock or
// serialization failure is Unavailable too (rolled back: nothing written).
//
// Limits: RunIds below 2^63; lease names, holders, job keys and fingerprints
// are PostgreSQL text (valid UTF-8, no NUL byte); ApplyRetention reads every
// finished run's id in one transaction.
//
// Thread-safety: every method may be called from any thread, concurrently.
#ifndef CHIME_SRC_STORE_POSTGRES_STORE_H_
#define CHIME_SRC_STORE_POSTGRES_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "chime/clock.h"
#include "chime/store.h"
#include "src/store/pg_conn.h"

namespace chime::store {

class PostgresStore final : public Store {
 public:
  // The statement of a fenced write's check (see the file comment).
  static constexpr char kCheckFenceSql[] =
      "SELECT holder, epoch FROM leases WHERE name = $1 FOR KEY SHARE";

  struct Options {
    // A libpq connection string or URI ("host=... dbname=...",
    // "postgresql://..."). connect_timeout defaults to 10 s.
    std::string conninfo;
    int pool_size = 4;  // connections at most
    // Null: RealClock for deadlines, the database's clock for leases. Set:
    // this clock for both (see the file comment).
    Clock* clock = nullptr;
    size_t max_output_bytes = 64 * 1024;  // per attempt, the newest kept
  };

  // Connects, migrates the schema, and keeps the connection in the pool.
  // InvalidArgument: no conninfo; Unavailable: the server cannot be reached
  // (libpq's message); FailedPrecondition: the schema is newer than this
  // binary; DeadlineExceeded: not done by `deadline`.
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(
      Options options, MonoTime deadline = MonoTime::Infinite());
  ~PostgresStore() override;

  absl::StatusOr<LeaseGrant> AcquireLease(absl::string_view name,
                                          absl::string_view holder,
                                          absl::Duration ttl,
                                          MonoTime deadline) override;
  absl::StatusOr<LeaseGrant> RenewLease(const Fence& fence, absl::Duration ttl,
                                        MonoTime deadline) override;
  absl::Status ReleaseLease(const Fence& fence, MonoTime deadline) override;
  absl::StatusOr<std::vector<LeaseInfo>> ListLeases(MonoTime deadline) override;

  absl::StatusOr<std::vector<JobRecord>> PutJobs(
      absl::Span<const JobWrite> writes, MonoTime deadline) override;
  absl::Status DeleteJob(const JobKey& key, int64_t expected_revision,
                         MonoTime deadline) override;
  absl::StatusOr<JobRecord> GetJob(const JobKey& key,
                                   MonoTime deadline) override;
  absl::StatusOr<JobPage> LoadJobs(JobId after, int limit,
                                   MonoTime deadline) override;
  absl::StatusOr<JobChanges> JobChangesSince(int64_t revision, int limit,
                                             MonoTime deadline) override;

  absl::Status ClaimFires(const Fence& fence, const ClaimBatch& batch,
                          MonoTime deadline) override;
  absl::StatusOr<std::vector<ClaimInfo>> LookupClaims(
      absl::Span<const FireRef> fires, MonoTime deadline) override;
  absl::StatusOr<MissedPage> ListMissed(
      JobId job, const std::optional<MissedCursor>& after, int limit,
      MonoTime deadline) override;

  absl::Status TransitionRuns(const Fence& fence,
                              absl::Span<const RunTransition> batch,
                              MonoTime deadline) override;
  absl::StatusOr<RunDetail> GetRun(RunId run, MonoTime deadline) override;
  absl::StatusOr<RunPage> ListRuns(const RunQuery& query,
                                   MonoTime deadline) override;
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionPolicy& policy,
                                                 absl::Time now,
                                                 MonoTime deadline) override;

  absl::StatusOr<IdempotencyOutcome> CheckIdempotencyKey(
      const IdempotencyRecord& record, MonoTime deadline) override;
  absl::StatusOr<StoreInfo> GetInfo(MonoTime deadline) override;
  // Every lease in one statement and one commit.
  absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>> RenewLeases(
      absl::Span<const Fence> fences, absl::Duration ttl,
      MonoTime deadline) override;
  absl::StatusOr<RunId> ReserveRunIds(int64_t count,
                                      MonoTime deadline) override;
  // LISTEN/NOTIFY on a connection of its own (src/store/pg_job_watch.h).
  std::unique_ptr<JobWatch> WatchJobs(std::function<void()> changed) override;

  // The number of shards the store's nodes run with (docs/cluster.md),
  // kept in `meta`: recorded by the first node that asks, replaced by
  // `shards` when `may_change` (no other node runs). Returns what is
  // recorded before the call (`shards` when nothing was) -- the caller
  // compares.
  absl::StatusOr<uint32_t> AgreeShards(uint32_t shards, bool may_change,
                                       MonoTime deadline);

 private:
  // kLease: a write on a connection of the lease pool.
  enum class TxKind { kWrite, kRead, kLease };

  PostgresStore(Options options, Clock& clock);

  // Runs `body` in one transaction on a pooled connection: commits if it
  // returns OK, rolls back otherwise.
  absl::Status Transact(MonoTime deadline, TxKind kind,
                        absl::FunctionRef<absl::Status(PgTx&)> body);
  absl::Status Write(MonoTime deadline,
                     absl::FunctionRef<absl::Status(PgTx&)> body) {
    return Transact(deadline, TxKind::kWrite, body);
  }
  absl::Status Read(MonoTime deadline,
                    absl::FunctionRef<absl::Status(PgTx&)> body) {
    return Transact(deadline, TxKind::kRead, body);
  }
  absl::Status WriteLease(MonoTime deadline,
                          absl::FunctionRef<absl::Status(PgTx&)> body) {
    return Transact(deadline, TxKind::kLease, body);
  }
  // FailedPrecondition unless `fence` is the lease's current token; holds a
  // FOR KEY SHARE lock on the lease row until the transaction ends.
  static absl::Status CheckFence(PgTx& tx, const Fence& fence);
  // The `now` parameter of lease statements: the injected clock's monotonic
  // time, or NULL for the database's clock (CHIME_PG_DB_NOW).
  PgParam LeaseNow() const;
  // LeaseGrant::store_time from the database's clock (`db_nanos`, read in
  // the grant's transaction), or the store's clock when it was given one.
  absl::Time StoreTime(int64_t db_nanos) const;

  const Options options_;
  Clock& clock_;
  PgPool pool_;
  // Lease grants, renewals and releases have connections of their own: a
  // renewal must not wait for a connection behind the API's reads or the
  // scheduler's writes (it would miss its deadline, and the node stop).
  PgPool lease_pool_;
};

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_POSTGRES_STORE_H_
