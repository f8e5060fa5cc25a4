#include "src/store/pg_conn.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/base/status_macros.h"

namespace chime::store {
namespace {

// The longest single poll(2): how late a passed deadline is noticed.
constexpr absl::Duration kPollSlice = absl::Milliseconds(50);
// The server ends a session idle this long inside a transaction.
constexpr absl::Duration kIdleInTransaction = absl::Seconds(1);

std::string ConnMessage(const pg_conn* conn) {
  if (conn == nullptr) return "no connection";
  return std::string(absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn)));
}

void IgnoreNotice(void*, const char*) {}

// A broken invariant of this file's callers: crash loudly.
void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "PgConn: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

PgParam::PgParam(int64_t v) : value_(absl::StrCat(v)) {}

PgParam PgParam::Null() {
  PgParam p;
  p.null_ = true;
  return p;
}

PgParam PgParam::Bytes(absl::string_view bytes) {
  PgParam p;
  p.value_ = std::string(bytes);
  p.binary_ = true;
  return p;
}

// --- PgArray ---

void PgArray::Separate() {
  if (size_++ > 0) text_.push_back(',');
}

PgArray& PgArray::Int(int64_t v) {
  Separate();
  absl::StrAppend(&text_, v);
  return *this;
}

PgArray& PgArray::Bool(bool v) {
  Separate();
  text_.push_back(v ? 't' : 'f');
  return *this;
}

PgArray& PgArray::Hex(absl::string_view bytes) {
  Separate();
  // Quoted, so that an empty string is an empty element rather than none.
  absl::StrAppend(&text_, "\"", absl::BytesToHexString(bytes), "\"");
  return *this;
}

PgParam PgArray::Param() const { return PgParam(absl::StrCat(text_, "}")); }

// --- PgResult ---

PgResult::PgResult(pg_result* result) : result_(result) {}
PgResult::PgResult(PgResult&& other) noexcept
    : result_(std::exchange(other.result_, nullptr)) {}
PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}
PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::rows() const { return PQntuples(result_); }

int64_t PgResult::affected() const {
  int64_t n = 0;
  return absl::SimpleAtoi(PQcmdTuples(result_), &n) ? n : 0;
}

bool PgResult::IsNull(int row, int col) const {
  Check(row >= 0 && row < rows() && col >= 0 && col < PQnfields(result_),
        "no such row or column in a result");
  return PQgetisnull(result_, row, col) != 0;
}

int64_t PgResult::Int(int row, int col) const {
  int64_t v = 0;
  if (IsNull(row, col)) return 0;
  Check(absl::SimpleAtoi(PQgetvalue(result_, row, col), &v),
        "a column read as an integer is not one");
  return v;
}

bool PgResult::Bool(int row, int col) const {
  return !IsNull(row, col) && PQgetvalue(result_, row, col)[0] == 't';
}

std::string PgResult::Text(int row, int col) const {
  if (IsNull(row, col)) return "";
  return std::string(PQgetvalue(result_, row, col),
                     PQgetlength(result_, row, col));
}

std::string PgResult::Bytes(int row, int col) const {
  if (IsNull(row, col)) return "";
  size_t n = 0;
  unsigned char* raw = PQunescapeBytea(
      reinterpret_cast<const unsigned char*>(PQgetvalue(result_, row, col)),
      &n);
  Check(raw != nullptr, "out of memory decoding bytea");
  std::string out(reinterpret_cast<const char*>(raw), n);
  PQfreemem(raw);
  return out;
}

// --- Errors ---

absl::Status PgErrorStatus(const pg_result* result, const pg_conn* conn) {
  const char* state = result != nullptr
                          ? PQresultErrorField(result, PG_DIAG_SQLSTATE)
                          : nullptr;
  std::string message = result != nullptr
                            ? std::string(absl::StripTrailingAsciiWhitespace(
                                  PQresultErrorMessage(result)))
                            : "";
  if (message.empty()) message = ConnMessage(conn);
  const std::string code = state != nullptr ? state : "";
  const std::string text = absl::StrCat("postgres: ", message);
  if (conn == nullptr || PQstatus(conn) == CONNECTION_BAD || code.empty() ||
      code.starts_with("08") || code.starts_with("57P") ||
      code.starts_with("53") || code == "25P03") {  // (idle in transaction)
    return absl::UnavailableError(text);
  }
  if (code == "57014") return absl::DeadlineExceededError(text);
  if (code == "40001" || code == "40P01") return absl::UnavailableError(text);
  return absl::InternalError(absl::StrCat(text, " (SQLSTATE ", code, ")"));
}

// --- PgConn ---

absl::StatusOr<std::unique_ptr<PgConn>> PgConn::Connect(
    const std::string& conninfo, Clock& clock) {
  // Keywords after `dbname` (the expanded conninfo) override it; those before
  // are defaults the conninfo may override.
  const char* keys[] = {
      "connect_timeout",  "keepalives_idle", "keepalives_interval",
      "keepalives_count", "dbname",          nullptr};
  const char* values[] = {"10", "10", "5", "3", conninfo.c_str(), nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("postgres: cannot connect: ", ConnMessage(conn)));
    if (conn != nullptr) PQfinish(conn);
    return status;
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  // A client that stops inside a transaction (SIGSTOP, a long pause) must not
  // hold its locks for as long as it sleeps: a fenced write's FOR SHARE on
  // the lease row would keep every standby from taking the lease over. The
  // server ends such a session after kIdleInTransaction; a live client never
  // pauses that long between the statements of one transaction, and if it
  // did, its call answers Unavailable (nothing written) like a lost
  // connection.
  PGresult* set =
      PQexec(conn, absl::StrCat("SET idle_in_transaction_session_timeout = ",
                                absl::ToInt64Milliseconds(kIdleInTransaction))
                       .c_str());
  const bool set_ok = set != nullptr && PQresultStatus(set) == PGRES_COMMAND_OK;
  absl::Status set_status =
      set_ok ? absl::OkStatus() : PgErrorStatus(set, conn);
  if (set != nullptr) PQclear(set);
  if (!set_ok) {
    PQfinish(conn);
    return set_status;
  }
  return std::unique_ptr<PgConn>(new PgConn(conn, clock));
}

PgConn::~PgConn() { PQfinish(conn_); }

absl::Status PgConn::Abandon(absl::Status why) {
  if (healthy_ && PQtransactionStatus(conn_) == PQTRANS_ACTIVE) {
    if (PGcancel* cancel = PQgetCancel(conn_); cancel != nullptr) {
      char buf[256];
      PQcancel(cancel, buf, sizeof buf);
      PQfreeCancel(cancel);
    }
  }
  healthy_ = false;
  return why;
}

absl::StatusOr<bool> PgConn::AwaitNotifications(absl::Duration timeout) {
  const auto take = [this] {
    bool any = false;
    while (PGnotify* n = PQnotifies(conn_)) {
      PQfreemem(n);
      any = true;
    }
    return any;
  };
  if (take()) return true;
  pollfd p{PQsocket(conn_), POLLIN, 0};
  const int ready =
      ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  if (ready < 0 && errno != EINTR) {
    healthy_ = false;
    return absl::UnavailableError("postgres: poll failed");
  }
  if (ready > 0 && PQconsumeInput(conn_) == 0) {
    healthy_ = false;
    return absl::UnavailableError(
        absl::StrCat("postgres: connection lost: ", ConnMessage(conn_)));
  }
  return take();
}

absl::StatusOr<PgResult> PgConn::Await(MonoTime deadline) {
  const int fd = PQsocket(conn_);
  // Bounded: each pass either consumes input or waits one slice, and the
  // deadline ends the loop (an infinite deadline relies on TCP keepalives to
  // report a dead peer as a lost connection).
  while (PQisBusy(conn_)) {
    const MonoTime now = clock_.MonoNow();
    if (now >= deadline) {
      return Abandon(absl::DeadlineExceededError(
          "postgres: deadline passed while waiting for the server; the "
          "statement was cancelled and may or may not have been applied"));
    }
    const absl::Duration slice = std::min(kPollSlice, deadline - now);
    pollfd p{fd, POLLIN, 0};
    const int ready =
        ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(slice)) + 1);
    if (ready < 0 && errno != EINTR) {
      return Abandon(absl::UnavailableError("postgres: poll failed"));
    }
    if (ready > 0 && PQconsumeInput(conn_) == 0) {
      return Abandon(absl::UnavailableError(
          absl::StrCat("postgres: connection lost: ", ConnMessage(conn_))));
    }
  }
  std::optional<PgResult> last;
  absl::Status error;
  while (pg_result* r = PQgetResult(conn_)) {
    const ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && error.ok()) {
      error = PgErrorStatus(r, conn_);
    }
    last.emplace(r);
  }
  if (PQstatus(conn_) == CONNECTION_BAD) {
    healthy_ = false;
    if (error.ok()) {
      error = absl::UnavailableError(
          absl::StrCat("postgres: connection lost: ", ConnMessage(conn_)));
    }
  }
  if (!error.ok()) return error;
  if (!last) return absl::InternalError("postgres: no result");
  return *std::move(last);
}

absl::StatusOr<PgResult> PgConn::Run(absl::string_view sql,
                                     const std::vector<PgParam>& params,
                                     MonoTime deadline) {
  if (!healthy_) return absl::UnavailableError("postgres: connection lost");
  const MonoTime now = clock_.MonoNow();
  auto it = prepared_.find(sql);
  absl::Duration replan_after = absl::Seconds(1);
  if (it != prepared_.end() && now - it->second.at >= it->second.replan_after) {
    RETURN_IF_ERROR(
        Exec(absl::StrCat("DEALLOCATE ", it->second.name), deadline));
    replan_after = std::min(it->second.replan_after * 2, kReplanAfter);
    prepared_.erase(it);
    it = prepared_.end();
  }
  if (it == prepared_.end()) {
    const std::string name = absl::StrCat("s", statements_++);
    if (PQsendPrepare(conn_, name.c_str(), std::string(sql).c_str(), 0,
                      nullptr) == 0) {
      return Abandon(absl::UnavailableError(
          absl::StrCat("postgres: cannot send: ", ConnMessage(conn_))));
    }
    RETURN_IF_ERROR(Await(deadline).status());
    it = prepared_.emplace(std::string(sql), Prepared{name, now, replan_after})
             .first;
  }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  for (const PgParam& p : params) {
    values.push_back(p.data());
    lengths.push_back(p.length());
    formats.push_back(p.binary() ? 1 : 0);
  }
  if (PQsendQueryPrepared(conn_, it->second.name.c_str(),
                          static_cast<int>(params.size()), values.data(),
                          lengths.data(), formats.data(), 0) == 0) {
    return Abandon(absl::UnavailableError(
        absl::StrCat("postgres: cannot send: ", ConnMessage(conn_))));
  }
  return Await(deadline);
}

absl::Status PgConn::Exec(absl::string_view sql, MonoTime deadline) {
  if (!healthy_) return absl::UnavailableError("postgres: connection lost");
  if (PQsendQuery(conn_, std::string(sql).c_str()) == 0) {
    return Abandon(absl::UnavailableError(
        absl::StrCat("postgres: cannot send: ", ConnMessage(conn_))));
  }
  return Await(deadline).status();
}

// --- PgPool ---

PgPool::PgPool(std::string conninfo, int size, Clock& clock)
    : conninfo_(std::move(conninfo)), size_(std::max(size, 1)), clock_(clock) {}

PgPool::~PgPool() {
  absl::MutexLock lock(&mu_);
  Check(out_ == 0, "a PgPool was destroyed with connections in use");
}

absl::StatusOr<std::unique_ptr<PgConn>> PgPool::Take(MonoTime deadline) {
  {
    absl::MutexLock lock(&mu_);
    auto available = [this]() { return !idle_.empty() || out_ < size_; };
    // Bounded by the deadline, in real-time slices (the clock may be
    // simulated).
    while (!available()) {
      if (clock_.MonoNow() >= deadline) {
        return absl::DeadlineExceededError(
            "postgres: deadline passed waiting for a pooled connection");
      }
      mu_.AwaitWithTimeout(absl::Condition(&available), kPollSlice);
    }
    ++out_;
    if (!idle_.empty()) {
      std::unique_ptr<PgConn> conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
  }
  absl::StatusOr<std::unique_ptr<PgConn>> conn =
      PgConn::Connect(conninfo_, clock_);
  if (!conn.ok()) {
    absl::MutexLock lock(&mu_);
    --out_;
  }
  return conn;
}

void PgPool::Give(std::unique_ptr<PgConn> conn) {
  absl::MutexLock lock(&mu_);
  --out_;
  if (conn != nullptr && conn->healthy()) idle_.push_back(std::move(conn));
}

}  // namespace chime::store
