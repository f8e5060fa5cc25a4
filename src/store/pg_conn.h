// PgConn and PgPool: the thin layer between PostgresStore and libpq.
//
// PgConn is one libpq connection that runs prepared statements (each SQL text
// is prepared once per connection, on first use) with deadlines: every
// statement is sent asynchronously and its result awaited with poll(2) in
// slices of at most 50 ms real time, checking the caller's deadline on the
// store's Clock between slices. A deadline that passes cancels the statement
// (PQcancel) and closes the connection, and the call answers
// DeadlineExceeded -- for a write, an indeterminate outcome.
//
// Errors map to absl codes as the Store interface defines them
// (PgErrorStatus): a lost connection or a server shutting down is
// Unavailable; a cancelled statement (statement_timeout) DeadlineExceeded; a
// deadlock or serialization failure Unavailable (nothing was written: the
// transaction was rolled back, and re-sending is safe); anything else
// Internal, with the server's message.
//
// PgPool keeps up to `size` connections, opened lazily; a connection that
// failed is closed when returned and replaced by the next caller.
//
// Thread-safety: a PgConn is used by one thread at a time (PgPool hands it
// out); PgPool is thread-safe.
#ifndef CHIME_SRC_STORE_PG_CONN_H_
#define CHIME_SRC_STORE_PG_CONN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "chime/clock.h"

struct pg_conn;
struct pg_result;

namespace chime::store {

// One statement parameter, sent in text format (bytes: binary, for bytea).
class PgParam {
 public:
  PgParam(int64_t v);  // NOLINT: parameters read best as plain values
  PgParam(int v) : PgParam(int64_t{v}) {}
  PgParam(absl::string_view text) : value_(text) {}  // NOLINT
  PgParam(const char* text) : value_(text) {}        // NOLINT
  PgParam(const std::string& text) : value_(text) {}
  static PgParam Null();
  static PgParam Bytes(absl::string_view bytes);

  const char* data() const { return null_ ? nullptr : value_.data(); }
  int length() const { return static_cast<int>(value_.size()); }
  bool binary() const { return binary_; }

 private:
  PgParam() = default;
  std::string value_;
  bool null_ = false;
  bool binary_ = false;
};

// A one-dimensional array parameter in PostgreSQL's text format ("{1,2,3}"),
// for statements that take a whole batch at once:
//
//   PgArray runs, states;
//   for (const Item& item : batch) runs.Int(item.run), states.Int(item.state);
//   tx.Run("UPDATE runs SET state = u.state FROM unnest($1::bigint[], "
//          "$2::smallint[]) AS u(id, state) WHERE runs.id = u.id",
//          {runs.Param(), states.Param()});
//
// Bytes go as hex text: declare the parameter text[] and read each element
// with decode(x, 'hex'). Arrays of one statement must have equal lengths for
// unnest to pair their elements.
class PgArray {
 public:
  PgArray& Int(int64_t v);
  PgArray& Bool(bool v);
  PgArray& Hex(absl::string_view bytes);

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  PgParam Param() const;

 private:
  void Separate();

  std::string text_ = "{";
  int size_ = 0;
};

// A statement's result rows (text format). Column accessors CHECK the row and
// column exist.
class PgResult {
 public:
  explicit PgResult(pg_result* result);
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  ~PgResult();

  int rows() const;
  // Rows the command changed (INSERT, UPDATE, DELETE).
  int64_t affected() const;
  bool IsNull(int row, int col) const;
  int64_t Int(int row, int col) const;
  bool Bool(int row, int col) const;
  std::string Text(int row, int col) const;
  // A bytea column, decoded.
  std::string Bytes(int row, int col) const;

 private:
  pg_result* result_;
};

class PgConn {
 public:
  // Connects (blocking, bounded by the conninfo's connect_timeout, which
  // defaults to 10 s). Unavailable, with libpq's message, on failure.
  static absl::StatusOr<std::unique_ptr<PgConn>> Connect(
      const std::string& conninfo, Clock& clock);
  ~PgConn();

  // Runs `sql` (one statement, $1.. placeholders) as a prepared statement,
  // prepared again 1 s after it was first, then at twice the last age, up to
  // every kReplanAfter (tables grow fastest from empty): PostgreSQL caches a
  // statement's generic plan after five runs and keeps it, planned for the
  // tables as they were then. On a new database that was a sequential scan of
  // an empty `transitions`, kept while it grew by thousands of rows a second:
  // the history read of TransitionRuns took 0.4-1.5 s a batch and one node of
  // three fell minutes behind in the cluster benchmark. (Planning every run
  // instead, plan_cache_mode = force_custom_plan, halved the throughput:
  // the planner weighs each element of an `= ANY` array.)
  static constexpr absl::Duration kReplanAfter = absl::Seconds(10);
  absl::StatusOr<PgResult> Run(absl::string_view sql,
                               const std::vector<PgParam>& params,
                               MonoTime deadline);
  // Runs `sql` (any number of statements, no parameters) unprepared.
  absl::Status Exec(absl::string_view sql, MonoTime deadline);

  // Waits at most `timeout` for notifications of the channels this
  // connection LISTENs to, and consumes them: whether any came. Unavailable
  // (and unhealthy) once the connection is lost.
  absl::StatusOr<bool> AwaitNotifications(absl::Duration timeout);

  // False once the connection was lost or abandoned after a deadline.
  bool healthy() const { return healthy_; }

 private:
  PgConn(pg_conn* conn, Clock& clock) : conn_(conn), clock_(clock) {}

  // Waits for the result of the query just sent; the last result's error, or
  // the last result.
  absl::StatusOr<PgResult> Await(MonoTime deadline);
  absl::Status Abandon(absl::Status why);

  pg_conn* conn_;
  Clock& clock_;
  bool healthy_ = true;
  struct Prepared {
    std::string name;
    MonoTime at;                  // prepared then (clock_)
    absl::Duration replan_after;  // to prepare it again once this old
  };
  absl::flat_hash_map<std::string, Prepared> prepared_;  // by sql
  int64_t statements_ = 0;  // names given: "s0", "s1", ...
};

// One open transaction on a connection, with the deadline of the call it
// serves: the statements of a Store method.
class PgTx {
 public:
  PgTx(PgConn& conn, MonoTime deadline) : conn_(conn), deadline_(deadline) {}
  absl::StatusOr<PgResult> Run(absl::string_view sql,
                               const std::vector<PgParam>& params = {}) {
    return conn_.Run(sql, params, deadline_);
  }
  absl::Status Exec(absl::string_view sql) {
    return conn_.Exec(sql, deadline_);
  }

 private:
  PgConn& conn_;
  MonoTime deadline_;
};

class PgPool {
 public:
  PgPool(std::string conninfo, int size, Clock& clock);
  ~PgPool();

  // A connection, opened if none is idle and fewer than `size` are out;
  // otherwise waits for one (until the deadline: DeadlineExceeded).
  absl::StatusOr<std::unique_ptr<PgConn>> Take(MonoTime deadline);
  // Returns a connection; an unhealthy one is closed.
  void Give(std::unique_ptr<PgConn> conn);

 private:
  const std::string conninfo_;
  const int size_;
  Clock& clock_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<PgConn>> idle_ ABSL_GUARDED_BY(mu_);
  int out_ ABSL_GUARDED_BY(mu_) = 0;
};

// The Store code for a failed statement (see the file comment).
absl::Status PgErrorStatus(const pg_result* result, const pg_conn* conn);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_PG_CONN_H_
