// SqliteStore: opening, the store thread (group commit), leases, idempotency
// keys. Jobs and fires are in sqlite_store_jobs.cc, runs in
// sqlite_store_runs.cc.
#include "src/store/sqlite_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/sqlite_schema.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

int64_t MonoNanos(MonoTime t) { return DurationToNanos(t.SinceOrigin()); }

// Takes an exclusive flock on `path`; the fd stays open for the store's life.
absl::StatusOr<int> LockDataDir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open lock file ", path,
                                               ": ", std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the data directory is in use by another chime store: lock file ",
          path, " is held (two schedulers must not share one data directory)"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot lock ", path, ": ", std::strerror(err)));
  }
  return fd;
}

}  // namespace

SqliteStore::SqliteStore(Options options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    Options options) {
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError("data_dir: is empty");
  }
  Clock& clock = options.clock != nullptr ? *options.clock : RealClock::Get();
  std::unique_ptr<SqliteStore> store(new SqliteStore(options, clock));
  const std::filesystem::path dir(options.data_dir);
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create data directory ", dir.string(), ": ", ec.message()));
  }
  ASSIGN_OR_RETURN(store->lock_fd_, LockDataDir((dir / kLockFile).string()));

  const std::string path = (dir / kDatabaseFile).string();
  ASSIGN_OR_RETURN(store->writer_, Db::Open(path, /*create=*/true));
  Db& db = *store->writer_;
  RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode = WAL"));
  RETURN_IF_ERROR(db.Exec(options.durability == Durability::kSynced
                              ? "PRAGMA synchronous = FULL"
                              : "PRAGMA synchronous = NORMAL"));
  // A checkpoint copies each page changed since the last one once, however
  // often it changed; the default (every 1,000 WAL pages) spent about a fifth
  // of the store thread's time copying the same hot pages again. The WAL file
  // grows to about 40 MiB (10,000 pages) and is then reused. A larger page
  // cache keeps the pages that groups of scattered writes touch.
  RETURN_IF_ERROR(db.Exec("PRAGMA wal_autocheckpoint = 10000"));
  RETURN_IF_ERROR(db.Exec("PRAGMA cache_size = -16384"));  // KiB
  RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  absl::Status migrated = [&]() -> absl::Status {
    RETURN_IF_ERROR(MigrateSchema(db).status());
    ASSIGN_OR_RETURN(int64_t epoch, GetMeta(db, "epoch"));
    store->epoch_ = epoch + 1;
    RETURN_IF_ERROR(SetMeta(db, "epoch", store->epoch_));
    RETURN_IF_ERROR(SetMeta(db, "last_token", store->epoch_ << 32));
    // The lock proves that whoever held a lease before is gone.
    return db.Exec("UPDATE leases SET holder = '', expires_mono = 0");
  }();
  if (!migrated.ok()) {
    db.Exec("ROLLBACK").IgnoreError();
    return migrated;
  }
  RETURN_IF_ERROR(db.Exec("COMMIT"));

  {
    absl::MutexLock lock(&store->read_mu_);
    ASSIGN_OR_RETURN(store->reader_, Db::Open(path, /*create=*/false));
    RETURN_IF_ERROR(store->reader_->Exec("PRAGMA query_only = 1"));
  }
  SqliteStore* raw = store.get();
  store->thread_ = std::thread([raw] { raw->StoreThread(); });
  return store;
}

SqliteStore::~SqliteStore() {
  if (thread_.joinable()) {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      paused_ = false;
    }
    thread_.join();
  }
  writer_.reset();
  {
    absl::MutexLock lock(&read_mu_);
    reader_.reset();
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

// --- Group commit ---

absl::Status SqliteStore::WriteLeases(
    MonoTime deadline, absl::FunctionRef<absl::Status(Db&)> apply) {
  return Write(deadline, apply, /*writes_leases=*/true);
}

absl::Status SqliteStore::Write(MonoTime deadline,
                                absl::FunctionRef<absl::Status(Db&)> apply,
                                bool writes_leases) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  WriteOp op{apply, deadline, writes_leases};
  absl::MutexLock lock(&mu_);
  queue_.push_back(&op);
  mu_.Await(absl::Condition(&op.done));
  return op.result;
}

void SqliteStore::StoreThread() {
  std::vector<WriteOp*> batch;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &SqliteStore::WriteReady));
      if (queue_.empty()) return;  // stopping, and nothing left to write
      while (!queue_.empty() && batch.size() < options_.max_batch_writes) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    CommitBatch(batch);
    absl::MutexLock lock(&mu_);
    ++transactions_;
    writes_ += static_cast<int64_t>(batch.size());
    for (WriteOp* op : batch) op->done = true;
    batch.clear();
  }
}

bool SqliteStore::WriteReady() const {
  return stopping_ || (!paused_ && !queue_.empty());
}

// The transaction statements are cached: parsed once, not at every write.
void SqliteStore::CommitBatch(const std::vector<WriteOp*>& batch) {
  Db& db = *writer_;
  fence_cache_.valid = false;
  if (absl::Status begin = db.Run("BEGIN IMMEDIATE"); !begin.ok()) {
    for (WriteOp* op : batch) op->result = begin;
    return;
  }
  absl::Status lost;  // set if SQLite rolled the whole transaction back
  for (WriteOp* op : batch) {
    if (!lost.ok()) {
      op->result = lost;
      continue;
    }
    if (clock_.MonoNow() >= op->deadline) {
      op->result = absl::DeadlineExceededError(
          "deadline passed while the write was queued; it was not applied");
      continue;
    }
    op->result = db.Run("SAVEPOINT w");
    if (!op->result.ok()) continue;
    if (op->writes_leases) fence_cache_.valid = false;
    op->result = op->apply(db);
    if (op->writes_leases) fence_cache_.valid = false;
    if (!op->result.ok()) {
      if (!db.InTransaction()) {
        // Nothing of the group is left to commit, and a write applied now
        // would commit on its own.
        lost = absl::UnavailableError(
            absl::StrCat("the transaction was rolled back by a failed write: ",
                         op->result.message()));
        continue;
      }
      db.Run("ROLLBACK TO w").IgnoreError();
    }
    db.Run("RELEASE w").IgnoreError();
  }
  absl::Status commit =
      lost.ok() ? db.Run("COMMIT") : absl::UnavailableError(lost.message());
  if (!commit.ok()) {
    if (db.InTransaction()) db.Run("ROLLBACK").IgnoreError();
    for (WriteOp* op : batch) {
      if (op->result.ok()) {
        op->result = absl::UnavailableError(
            absl::StrCat("commit failed (the transaction was rolled back): ",
                         commit.message()));
      }
    }
  }
}

absl::Status SqliteStore::Read(MonoTime deadline,
                               absl::FunctionRef<absl::Status(Db&)> read) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&read_mu_);
  Db& db = *reader_;
  RETURN_IF_ERROR(db.Exec("BEGIN"));
  absl::Status status = read(db);
  db.Exec(status.ok() ? "COMMIT" : "ROLLBACK").IgnoreError();
  return status;
}

int64_t SqliteStore::CommittedTransactions() const {
  absl::MutexLock lock(&mu_);
  return transactions_;
}

int64_t SqliteStore::CommittedWrites() const {
  absl::MutexLock lock(&mu_);
  return writes_;
}

void SqliteStore::PauseWritesForTest() {
  absl::MutexLock lock(&mu_);
  paused_ = true;
}

void SqliteStore::ResumeWritesForTest() {
  absl::MutexLock lock(&mu_);
  paused_ = false;
}

bool SqliteStore::AwaitQueuedWritesForTest(size_t n, absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  auto queued = [this, n]() { return queue_.size() >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&queued), limit);
}

// --- Leases ---

absl::Status SqliteStore::CheckFence(Db& db, const Fence& fence) {
  if (!fence_cache_.valid || fence_cache_.lease != fence.lease) {
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("SELECT holder, token FROM leases WHERE name = ?"));
    ASSIGN_OR_RETURN(bool row, stmt->Bind(1, fence.lease).Step());
    fence_cache_.token = row && !stmt->Text(0).empty() ? stmt->Int(1) : 0;
    fence_cache_.lease = fence.lease;
    fence_cache_.valid = true;
  }
  const int64_t current = fence_cache_.token;
  if (current == 0 || current != fence.token) {
    return FencedError(fence, current);
  }
  return absl::OkStatus();
}

absl::StatusOr<LeaseGrant> SqliteStore::AcquireLease(absl::string_view name,
                                                     absl::string_view holder,
                                                     absl::Duration ttl,
                                                     MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLeaseRequest(name, holder, ttl));
  LeaseGrant grant{0, ttl};
  RETURN_IF_ERROR(WriteLeases(deadline, [&](Db& db) -> absl::Status {
    const MonoTime now = clock_.MonoNow();
    ASSIGN_OR_RETURN(
        StmtRef get,
        db.Prepare("SELECT holder, token, expires_mono FROM leases "
                   "WHERE name = ?"));
    ASSIGN_OR_RETURN(bool row, get->Bind(1, name).Step());
    const std::string current = row ? get->Text(0) : "";
    if (!current.empty() && current != holder && get->Int(2) > MonoNanos(now)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "lease \"", name, "\" is held by \"", current, "\" for another ",
          absl::FormatDuration(
              absl::Nanoseconds(get->Int(2) - MonoNanos(now)))));
    }
    if (current == holder) {
      grant.token = get->Int(1);
    } else {
      ASSIGN_OR_RETURN(int64_t last, GetMeta(db, "last_token"));
      grant.token = last + 1;
      RETURN_IF_ERROR(SetMeta(db, "last_token", grant.token));
    }
    ASSIGN_OR_RETURN(StmtRef put,
                     db.Prepare("INSERT OR REPLACE INTO leases VALUES "
                                "(?, ?, ?, ?)"));
    return put->Bind(1, name)
        .Bind(2, holder)
        .Bind(3, grant.token)
        .Bind(4, MonoNanos(now + ttl))
        .Run();
  }));
  return grant;
}

absl::StatusOr<LeaseGrant> SqliteStore::RenewLease(const Fence& fence,
                                                   absl::Duration ttl,
                                                   MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLeaseRequest(fence.lease, "renewer", ttl));
  RETURN_IF_ERROR(Write(deadline, [&](Db& db) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(db, fence));
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("UPDATE leases SET expires_mono = ? WHERE name = ?"));
    return stmt->Bind(1, MonoNanos(clock_.MonoNow() + ttl))
        .Bind(2, fence.lease)
        .Run();
  }));
  return LeaseGrant{fence.token, ttl};
}

absl::Status SqliteStore::ReleaseLease(const Fence& fence, MonoTime deadline) {
  return WriteLeases(deadline, [&](Db& db) -> absl::Status {
    {
      ASSIGN_OR_RETURN(
          StmtRef get,
          db.Prepare("SELECT holder, token FROM leases WHERE name = ?"));
      ASSIGN_OR_RETURN(bool row, get->Bind(1, fence.lease).Step());
      if (row && get->Text(0).empty() && get->Int(1) == fence.token) {
        return absl::OkStatus();  // released before: a re-send
      }
    }
    RETURN_IF_ERROR(CheckFence(db, fence));
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("UPDATE leases SET holder = '', "
                                "expires_mono = 0 WHERE name = ?"));
    return stmt->Bind(1, fence.lease).Run();
  });
}

absl::StatusOr<std::vector<LeaseInfo>> SqliteStore::ListLeases(
    MonoTime deadline) {
  std::vector<LeaseInfo> out;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    const int64_t now = MonoNanos(clock_.MonoNow());
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("SELECT name, holder, token, expires_mono "
                                "FROM leases ORDER BY name"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return absl::OkStatus();
      LeaseInfo info{stmt->Text(0), stmt->Text(1), stmt->Int(2),
                     absl::ZeroDuration()};
      if (!info.holder.empty() && stmt->Int(3) > now) {
        info.remaining = absl::Nanoseconds(stmt->Int(3) - now);
      }
      out.push_back(std::move(info));
    }
  }));
  return out;
}

// --- Idempotency keys, info ---

absl::StatusOr<IdempotencyOutcome> SqliteStore::CheckIdempotencyKey(
    const IdempotencyRecord& record, MonoTime deadline) {
  RETURN_IF_ERROR(ValidateIdempotencyRecord(record));
  IdempotencyOutcome out;
  RETURN_IF_ERROR(Write(deadline, [&](Db& db) -> absl::Status {
    ASSIGN_OR_RETURN(StmtRef get,
                     db.Prepare("SELECT fingerprint, response, created_at, "
                                "expires_at FROM idempotency WHERE key = ?"));
    ASSIGN_OR_RETURN(bool row, get->Bind(1, record.key).Step());
    if (row && NanosToTime(get->Int(3)) > record.created_at) {
      out = IdempotencyOutcome{
          false, IdempotencyRecord{record.key, get->Text(0), get->Text(1),
                                   NanosToTime(get->Int(2)),
                                   NanosToTime(get->Int(3))}};
      return absl::OkStatus();
    }
    out = IdempotencyOutcome{true, record};
    ASSIGN_OR_RETURN(
        StmtRef put,
        db.Prepare(
            "INSERT OR REPLACE INTO idempotency VALUES (?, ?, ?, ?, ?)"));
    return put->Bind(1, record.key)
        .Bind(2, record.fingerprint)
        .BindBlob(3, record.response)
        .Bind(4, TimeToNanos(record.created_at))
        .Bind(5, TimeToNanos(record.expires_at))
        .Run();
  }));
  return out;
}

absl::StatusOr<StoreInfo> SqliteStore::GetInfo(MonoTime deadline) {
  StoreInfo info;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    ASSIGN_OR_RETURN(info.revision, GetMeta(db, "revision"));
    ASSIGN_OR_RETURN(int64_t max_run, MaxRunId(db));
    info.max_run_id = static_cast<RunId>(max_run);
    ASSIGN_OR_RETURN(StmtRef jobs,
                     db.Prepare("SELECT COUNT(*) FROM jobs WHERE deleted = 0"));
    ASSIGN_OR_RETURN(bool row, jobs->Step());
    info.jobs = row ? jobs->Int(0) : 0;
    ASSIGN_OR_RETURN(
        StmtRef runs,
        db.Prepare("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM runs"));
    ASSIGN_OR_RETURN(row, runs->Step());
    info.runs = row ? runs->Int(0) : 0;
    info.run_bytes = row ? runs->Int(1) : 0;
    return absl::OkStatus();
  }));
  return info;
}

}  // namespace chime::store
