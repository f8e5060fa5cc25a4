// A thin layer over the SQLite C API for SqliteStore: a connection that
// caches its prepared statements, a statement with typed binds and columns,
// and the one mapping from SQLite result codes to absl::Status.
//
// Error mapping: SQLITE_BUSY / SQLITE_LOCKED / SQLITE_IOERR / SQLITE_FULL /
// SQLITE_CANTOPEN -> Unavailable (the operation did not take effect; disk full
// and I/O errors are transient from the caller's point of view); SQLITE_CORRUPT
// / SQLITE_NOTADB -> DataLoss; SQLITE_CONSTRAINT -> AlreadyExists; anything
// else -> Internal. Messages name the database file.
//
// Thread-safety: a Db and its statements are used by one thread at a time
// (the caller serializes).
#ifndef CHIME_SRC_STORE_SQLITE_DB_H_
#define CHIME_SRC_STORE_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace chime::store {

class Db;

// A prepared statement, reset and unbound each time Db::Prepare hands it out.
// Bind indexes start at 1, column indexes at 0.
class Stmt {
 public:
  Stmt(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int index, int64_t value);
  Stmt& Bind(int index, absl::string_view text);  // as TEXT
  Stmt& BindBlob(int index, absl::string_view bytes);

  // True: a row is available; false: done. Errors are mapped (see above).
  absl::StatusOr<bool> Step();
  // Steps to the end, for statements that return no rows.
  absl::Status Run();

  int64_t Int(int column) const;
  std::string Text(int column) const;  // TEXT or BLOB bytes
  void Reset();

 private:
  friend class StmtRef;
  friend class Db;
  Db* db_;
  sqlite3_stmt* stmt_;
  bool loaned_ = false;  // a StmtRef holds it
};

// A cached statement on loan: resets it when it goes out of scope, so that no
// statement is left mid-iteration (which would pin the connection's read
// snapshot and keep later reads from seeing new commits).
class StmtRef {
 public:
  explicit StmtRef(Stmt* stmt) : stmt_(stmt) { stmt_->loaned_ = true; }
  StmtRef(StmtRef&& other) noexcept
      : stmt_(std::exchange(other.stmt_, nullptr)) {}
  StmtRef& operator=(StmtRef&&) = delete;
  ~StmtRef() {
    if (stmt_ == nullptr) return;
    stmt_->Reset();
    stmt_->loaned_ = false;
  }
  Stmt* operator->() const { return stmt_; }
  Stmt& operator*() const { return *stmt_; }

 private:
  Stmt* stmt_;
};

class Db {
 public:
  // Opens (creating if `create`) the database at `path`.
  static absl::StatusOr<std::unique_ptr<Db>> Open(const std::string& path,
                                                  bool create);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements that return nothing, parsing them each time.
  absl::Status Exec(absl::string_view sql);
  // Runs one statement that returns nothing from the statement cache: for
  // those run at every write, such as SAVEPOINT and COMMIT.
  absl::Status Run(absl::string_view sql);
  // The cached statement for `sql`, ready to bind; prepared on first use.
  // Internal error if the statement is still on loan (a caller nesting two
  // uses of one SQL text: the inner would reset the outer's bindings).
  absl::StatusOr<StmtRef> Prepare(absl::string_view sql);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;
  // The rowid of the last row inserted on this connection (an INTEGER
  // PRIMARY KEY is its rowid). Cheaper than INSERT ... RETURNING, which
  // collects the returned rows in a temporary table of its own.
  int64_t LastInsertRowid() const;
  // Whether a transaction is open. False after SQLite rolled one back by
  // itself, as it may on an I/O error, a full disk or running out of memory.
  bool InTransaction() const;

  // The status for a failed SQLite call `rc`, naming the file and `what`.
  absl::Status Error(int rc, absl::string_view what) const;
  const std::string& path() const { return path_; }

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  absl::flat_hash_map<std::string, std::unique_ptr<Stmt>> cache_;
};

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_SQLITE_DB_H_
