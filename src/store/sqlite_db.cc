#include "src/store/sqlite_db.h"

#include <sqlite3.h>

#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"

namespace chime::store {

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Stmt& Stmt::Bind(int index, absl::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::BindBlob(int index, absl::string_view bytes) {
  // A zero-length blob must not be bound as NULL.
  sqlite3_bind_blob(stmt_, index, bytes.empty() ? "" : bytes.data(),
                    static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

absl::StatusOr<bool> Stmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  absl::Status status = db_->Error(rc, sqlite3_sql(stmt_));
  sqlite3_reset(stmt_);
  return status;
}

absl::Status Stmt::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

int64_t Stmt::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string Stmt::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || n <= 0) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(n));
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

absl::StatusOr<std::unique_ptr<Db>> Db::Open(const std::string& path,
                                             bool create) {
  // SQLite's memory statistics take a process-wide mutex around every
  // allocation, about 5% of the store thread's time per write; chime reads
  // none of them. This must come before SQLite initializes: if something else
  // in the process used SQLite first, the call is refused and changes nothing.
  static std::once_flag no_memory_statistics;
  std::call_once(no_memory_statistics,
                 [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  sqlite3* handle = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
                    (create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  std::unique_ptr<Db> db(new Db(handle, path));
  if (rc != SQLITE_OK) return db->Error(rc, "open");
  sqlite3_extended_result_codes(handle, 1);
  return db;
}

Db::~Db() {
  cache_.clear();  // finalize every statement before closing
  sqlite3_close(db_);
}

absl::Status Db::Exec(absl::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) return Error(rc, sql);
  return absl::OkStatus();
}

absl::Status Db::Run(absl::string_view sql) {
  ASSIGN_OR_RETURN(StmtRef stmt, Prepare(sql));
  return stmt->Run();
}

absl::StatusOr<StmtRef> Db::Prepare(absl::string_view sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc =
        sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                           SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return Error(rc, sql);
    it = cache_.emplace(std::string(sql), std::make_unique<Stmt>(this, stmt))
             .first;
  }
  if (it->second->loaned_) {
    return absl::InternalError(
        absl::StrCat("statement is already in use (nested loan): ", sql));
  }
  return StmtRef(it->second.get());
}

int64_t Db::Changes() const { return sqlite3_changes64(db_); }

int64_t Db::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }

bool Db::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

absl::Status Db::Error(int rc, absl::string_view what) const {
  const std::string message = absl::StrCat(
      path_, ": ", db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc),
      " (", what, ")");
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(absl::StrCat(
          message,
          "; the file is not a chime database or is corrupt, and was "
          "left untouched"));
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace chime::store
