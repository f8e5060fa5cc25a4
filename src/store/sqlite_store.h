// SqliteStore: chime::Store in one SQLite database file -- the embedded
// default, for a scheduler on one machine.
//
//   SqliteStore::Options options;
//   options.data_dir = "/var/lib/chime";
//   ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store,
//                    SqliteStore::Open(options));
//
// Files in the data directory: `chime.db` (with SQLite's `chime.db-wal` and
// `chime.db-shm`) and `LOCK`. One process at a time: Open takes an exclusive
// flock on LOCK and refuses, naming the file, while another holder has it
// (another process, or another SqliteStore in this one).
//
// Durability. The journal is WAL. With Durability::kSynced (the default,
// `PRAGMA synchronous=FULL`) every commit is fsynced before any write in it
// is acknowledged: nothing acknowledged is lost by a crash of the process or
// of the machine. kRelaxed (`synchronous=NORMAL`) syncs only at checkpoints:
// a process crash loses nothing, a power failure or kernel crash can lose the
// writes of the last moments (acknowledged ones included), never corrupting
// the file.
//
// Group commit. Writes are queued to one store thread, which takes everything
// queued (up to Options::max_batch_writes), applies each write in its own
// SAVEPOINT (so a refused write is rolled back alone), commits once, and only
// then completes every waiter. Under load one fsync serves many writers. The
// fence check reads a lease once per group (a lease write in the group makes
// the writes after it read it again).
// Reads run on the caller's thread, on read connections of their own (WAL
// lets them proceed during a commit and beside each other; up to
// Options::max_readers at once, later ones wait for a free connection) and
// see every acknowledged write.
//
// Fencing. The store is single-node: its epoch is incremented at every Open,
// and lease tokens granted by this open are epoch * 2^32 + 1, + 2, ... -- so
// every token of an earlier open is below every token of this one. Open
// releases every lease of earlier opens (the lock proves their holders are
// gone). Lease lifetimes run on the Options::clock monotonic clock.
//
// Limits: RunIds must be below 2^63 (they are SQLite integers). ListRuns and
// the change feed use indexes; ApplyRetention reads every finished run and
// holds the writer while it deletes.
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_SRC_STORE_SQLITE_STORE_H_
#define CHIME_SRC_STORE_SQLITE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "chime/clock.h"
#include "chime/store.h"
#include "src/store/sqlite_db.h"

namespace chime::store {

class SqliteStore final : public Store {
 public:
  enum class Durability { kSynced, kRelaxed };

  struct Options {
    std::string data_dir;  // created if absent (one level)
    Durability durability = Durability::kSynced;
    Clock* clock = nullptr;               // null: RealClock::Get()
    size_t max_output_bytes = 64 * 1024;  // per attempt, the newest kept
    size_t max_batch_writes = 1024;       // writes per group commit
    // Read connections, opened by Open (each has its own page cache, up to
    // ~2 MB). 0: one per core, at least 2.
    size_t max_readers = 0;
  };

  static constexpr const char* kDatabaseFile = "chime.db";
  static constexpr const char* kLockFile = "LOCK";

  // Opens (creating if needed) the store in options.data_dir, migrates its
  // schema, increments the epoch and starts the store thread.
  // FailedPrecondition: another holder has the lock file, or the schema is
  // newer than this binary (the message names the file); DataLoss: the
  // database is corrupt or not chime's (left untouched); Unavailable: the
  // directory or files cannot be created or opened.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(Options options);
  // Finishes every queued write, stops the store thread and releases the
  // lock.
  ~SqliteStore() override;

  // This open's epoch: 1 for a new database, +1 at every Open.
  int64_t epoch() const { return epoch_; }
  // Transactions committed by the store thread and writes they carried.
  int64_t CommittedTransactions() const;
  int64_t CommittedWrites() const;

  // Read connections not in use by a read now (all of them are
  // Options::max_readers, or its default).
  size_t IdleReadConnectionsForTest() const;
  // Test hooks: hold the store thread before it takes the next writes; wait
  // (at most `limit`, real time) until `n` writes are queued.
  void PauseWritesForTest();
  void ResumeWritesForTest();
  bool AwaitQueuedWritesForTest(size_t n, absl::Duration limit);

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
  absl::StatusOr<RunId> ReserveRunIds(int64_t count,
                                      MonoTime deadline) override;

 private:
  // One queued write: `apply` runs on the store thread inside a SAVEPOINT.
  struct WriteOp {
    absl::FunctionRef<absl::Status(Db&)> apply;
    MonoTime deadline;
    bool writes_leases = false;  // may change a lease's holder or token
    absl::Status result;
    bool done = false;
  };

  // The fence check's reading of one lease, valid until the store thread's
  // transaction ends or a lease write runs: within one transaction only the
  // store thread's own lease writes change a lease, so the group's writes
  // under one fence read it once.
  struct FenceCache {
    bool valid = false;
    std::string lease;
    int64_t token = 0;  // 0: released, or never granted
  };

  SqliteStore(Options options, Clock& clock);

  // Queues `apply` and waits until its transaction has committed (or failed).
  absl::Status Write(MonoTime deadline,
                     absl::FunctionRef<absl::Status(Db&)> apply,
                     bool writes_leases = false);
  // Write, for a write that may change a lease's holder or token.
  absl::Status WriteLeases(MonoTime deadline,
                           absl::FunctionRef<absl::Status(Db&)> apply);
  // Runs `read` on a free read connection inside one read transaction.
  absl::Status Read(MonoTime deadline,
                    absl::FunctionRef<absl::Status(Db&)> read);
  void StoreThread();
  bool WriteReady() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CommitBatch(const std::vector<WriteOp*>& batch);
  absl::Status CheckFence(Db& db, const Fence& fence);

  const Options options_;
  Clock& clock_;
  int lock_fd_ = -1;
  int64_t epoch_ = 0;
  std::unique_ptr<Db> writer_;  // used by the store thread only (after Open)
  FenceCache fence_cache_;      // the store thread's

  const std::string db_path_;
  // The read connections: how many Open opens, how many it did, and those
  // not in use by a read.
  const size_t readers_;
  mutable absl::Mutex read_mu_;
  size_t opened_readers_ ABSL_GUARDED_BY(read_mu_) = 0;
  std::vector<std::unique_ptr<Db>> free_readers_ ABSL_GUARDED_BY(read_mu_);

  mutable absl::Mutex mu_;
  std::deque<WriteOp*> queue_ ABSL_GUARDED_BY(mu_);
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t transactions_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_SQLITE_STORE_H_
