// SqliteStore: leases (and the fence check), idempotency keys, info.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/sqlite_schema.h"
#include "src/store/sqlite_store.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

int64_t MonoNanos(MonoTime t) { return DurationToNanos(t.SinceOrigin()); }

}  // namespace

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
  grant.store_time = clock_.Now();
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
  return LeaseGrant{fence.token, ttl, clock_.Now()};
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

absl::StatusOr<RunId> SqliteStore::ReserveRunIds(int64_t count,
                                                 MonoTime deadline) {
  RETURN_IF_ERROR(ValidateRunIdCount(count));
  RunId first = 0;
  RETURN_IF_ERROR(Write(deadline, [&](Db& db) -> absl::Status {
    ASSIGN_OR_RETURN(int64_t max_run, MaxRunId(db));
    first = static_cast<RunId>(max_run) + 1;
    return SetMeta(db, "max_run_id", max_run + count);
  }));
  return first;
}

}  // namespace chime::store
