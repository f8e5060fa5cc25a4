// SqliteStore: opening, and the store thread (group commit). Leases and
// idempotency keys are in sqlite_store_leases.cc, jobs and fires in
// sqlite_store_jobs.cc, runs in sqlite_store_runs.cc.
#include "src/store/sqlite_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/base/thread_name.h"
#include "src/store/sqlite_schema.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

// A read-only connection to the database file at `path`.
absl::StatusOr<std::unique_ptr<Db>> OpenReader(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, /*create=*/false));
  RETURN_IF_ERROR(db->Exec("PRAGMA query_only = 1"));
  return db;
}

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
    : options_(std::move(options)),
      clock_(clock),
      db_path_(
          (std::filesystem::path(options_.data_dir) / kDatabaseFile).string()),
      readers_(options_.max_readers != 0
                   ? options_.max_readers
                   : std::max<size_t>(2, std::thread::hardware_concurrency())) {
}

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

  const std::string& path = store->db_path_;
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
  // Each write of a group runs in its own SAVEPOINT, which keeps the pages it
  // changes in a statement journal: in memory, not in a temporary file (a
  // pwrite per page changed, about a quarter of the store thread's CPU in a
  // burst of job creations). It holds at most the pages one group changes.
  RETURN_IF_ERROR(db.Exec("PRAGMA temp_store = MEMORY"));
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
    // All of them now: a file that cannot be read fails Open, and no read
    // pays for opening one (or for its schema) while others wait behind it.
    std::vector<std::unique_ptr<Db>> opened;
    for (size_t i = 0; i < store->readers_; ++i) {
      ASSIGN_OR_RETURN(std::unique_ptr<Db> reader, OpenReader(path));
      opened.push_back(std::move(reader));
    }
    absl::MutexLock lock(&store->read_mu_);
    store->opened_readers_ = opened.size();
    store->free_readers_ = std::move(opened);
  }
  SqliteStore* raw = store.get();
  store->thread_ =
      base::NamedThread("chime-store", [raw] { raw->StoreThread(); });
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
    // Reads still running (callers must not, but) finish first.
    absl::MutexLock lock(&read_mu_);
    const auto all_back = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return free_readers_.size() == opened_readers_;
    };
    read_mu_.Await(absl::Condition(&all_back));
    free_readers_.clear();
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
  std::unique_ptr<Db> db;
  {
    absl::MutexLock lock(&read_mu_);
    const auto has_free_reader = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return !free_readers_.empty();
    };
    read_mu_.Await(absl::Condition(&has_free_reader));
    db = std::move(free_readers_.back());
    free_readers_.pop_back();
  }
  // Cached statements: sqlite3_exec would parse them at every read.
  absl::Status status = db->Run("BEGIN");
  if (status.ok()) {
    status = read(*db);
    db->Run(status.ok() ? "COMMIT" : "ROLLBACK").IgnoreError();
  }
  if (db->InTransaction()) db->Run("ROLLBACK").IgnoreError();
  if (db->InTransaction()) {
    // A connection stuck in its transaction would serve an old snapshot:
    // it is replaced (kept if a new one cannot be opened: its BEGINs fail).
    absl::StatusOr<std::unique_ptr<Db>> fresh = OpenReader(db_path_);
    if (fresh.ok()) db = *std::move(fresh);
  }
  absl::MutexLock lock(&read_mu_);
  free_readers_.push_back(std::move(db));
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

size_t SqliteStore::IdleReadConnectionsForTest() const {
  absl::MutexLock lock(&read_mu_);
  return free_readers_.size();
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

}  // namespace chime::store
