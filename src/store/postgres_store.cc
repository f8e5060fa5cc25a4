// PostgresStore: opening, transactions, leases (and the fence check),
// idempotency keys, info. Jobs are in postgres_store_jobs.cc, fires in
// postgres_store_fires.cc, runs in postgres_store_runs.cc.
#include "src/store/postgres_store.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/base/status_macros.h"
#include "src/store/pg_job_watch.h"
#include "src/store/postgres_schema.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

// The lease pool's size: a node renews its member lease and its shard leases
// on two threads, and takes shards on a third.
constexpr int kLeaseConnections = 3;

// How many connections a transaction tries when BEGIN finds them dropped.
constexpr int kBeginTries = 4;

}  // namespace

PostgresStore::PostgresStore(Options options, Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      pool_(options_.conninfo, options_.pool_size, clock),
      lease_pool_(options_.conninfo, kLeaseConnections, clock) {}

PostgresStore::~PostgresStore() = default;

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(
    Options options, MonoTime deadline) {
  if (options.conninfo.empty()) {
    return absl::InvalidArgumentError("conninfo: is empty");
  }
  Clock& clock = options.clock != nullptr ? *options.clock : RealClock::Get();
  std::unique_ptr<PostgresStore> store(
      new PostgresStore(std::move(options), clock));
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> conn, store->pool_.Take(deadline));
  absl::Status migrated = MigratePostgres(*conn, deadline).status();
  store->pool_.Give(std::move(conn));
  RETURN_IF_ERROR(migrated);
  return store;
}

absl::Status PostgresStore::Transact(
    MonoTime deadline, TxKind kind,
    absl::FunctionRef<absl::Status(PgTx&)> body) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  PgPool& pool = kind == TxKind::kLease ? lease_pool_ : pool_;
  std::unique_ptr<PgConn> conn;
  absl::Status status;
  // A pooled connection the server dropped meanwhile (it restarted) fails at
  // BEGIN, before anything was done: try another (or a new one), a few times.
  for (int tries = 0; tries < kBeginTries; ++tries) {
    ASSIGN_OR_RETURN(conn, pool.Take(deadline));
    status = PgTx(*conn, deadline)
                 .Exec(kind == TxKind::kRead
                           ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                           : "BEGIN");
    if (status.ok() || conn->healthy()) break;
    pool.Give(std::move(conn));  // closed
  }
  if (conn == nullptr) return status;
  PgTx tx(*conn, deadline);
  if (status.ok()) {
    status = body(tx);
    if (status.ok()) {
      status = tx.Exec("COMMIT");
    } else if (conn->healthy()) {
      tx.Exec("ROLLBACK").IgnoreError();
    }
  }
  pool.Give(std::move(conn));
  return status;
}

PgParam PostgresStore::LeaseNow() const {
  if (options_.clock == nullptr) return PgParam::Null();
  return PgParam(DurationToNanos(clock_.MonoNow().SinceOrigin()));
}

absl::Time PostgresStore::StoreTime(int64_t db_nanos) const {
  if (options_.clock != nullptr) return clock_.Now();
  return absl::FromUnixNanos(db_nanos);
}

// --- Leases ---

absl::Status PostgresStore::CheckFence(PgTx& tx, const Fence& fence) {
  ASSIGN_OR_RETURN(PgResult r, tx.Run(kCheckFenceSql, {fence.lease}));
  const int64_t current =
      r.rows() == 1 && !r.Text(0, 0).empty() ? r.Int(0, 1) : 0;
  if (current == 0 || current != fence.token) {
    return FencedError(fence, current);
  }
  return absl::OkStatus();
}

absl::StatusOr<LeaseGrant> PostgresStore::AcquireLease(absl::string_view name,
                                                       absl::string_view holder,
                                                       absl::Duration ttl,
                                                       MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLeaseRequest(name, holder, ttl));
  LeaseGrant grant{0, ttl};
  RETURN_IF_ERROR(WriteLease(deadline, [&](PgTx& tx) -> absl::Status {
    // The row exists (a placeholder if new) so that FOR UPDATE serializes
    // every acquirer of the name.
    RETURN_IF_ERROR(tx.Run("INSERT INTO leases VALUES ($1, '', 0, 0) "
                           "ON CONFLICT (name) DO NOTHING",
                           {name})
                        .status());
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT holder, epoch, expires_at, "
               "COALESCE($2::bigint, " CHIME_PG_DB_NOW "), " CHIME_PG_DB_NOW
               " FROM leases WHERE name = $1 FOR UPDATE",
               {name, LeaseNow()}));
    const std::string current = r.Text(0, 0);
    const int64_t expires = r.Int(0, 2);
    const int64_t now = r.Int(0, 3);
    grant.store_time = StoreTime(r.Int(0, 4));
    if (!current.empty() && current != holder && expires > now) {
      return absl::AlreadyExistsError(absl::StrCat(
          "lease \"", name, "\" is held by \"", current, "\" for another ",
          absl::FormatDuration(absl::Nanoseconds(expires - now))));
    }
    ASSIGN_OR_RETURN(
        PgResult granted,
        tx.Run("UPDATE leases SET holder = $2, expires_at = $3::bigint, "
               "epoch = CASE WHEN $4::boolean THEN epoch "
               "ELSE nextval('lease_epochs') END "
               "WHERE name = $1 RETURNING epoch",
               {name, holder, now + DurationToNanos(ttl),
                current == holder ? "true" : "false"}));
    grant.token = granted.Int(0, 0);
    return absl::OkStatus();
  }));
  return grant;
}

absl::StatusOr<LeaseGrant> PostgresStore::RenewLease(const Fence& fence,
                                                     absl::Duration ttl,
                                                     MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLeaseRequest(fence.lease, "renewer", ttl));
  LeaseGrant grant{fence.token, ttl};
  RETURN_IF_ERROR(WriteLease(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("UPDATE leases SET expires_at = "
               "COALESCE($3::bigint, " CHIME_PG_DB_NOW
               ") + $4::bigint WHERE name = $1 AND holder <> '' AND "
               "epoch = $2::bigint RETURNING epoch, " CHIME_PG_DB_NOW,
               {fence.lease, fence.token, LeaseNow(), DurationToNanos(ttl)}));
    if (r.rows() == 1) {
      grant.store_time = StoreTime(r.Int(0, 1));
      return absl::OkStatus();
    }
    return CheckFence(tx, fence);  // explains the refusal
  }));
  return grant;
}

absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>>
PostgresStore::RenewLeases(absl::Span<const Fence> fences, absl::Duration ttl,
                           MonoTime deadline) {
  std::vector<absl::StatusOr<LeaseGrant>> grants;
  if (fences.empty()) return grants;
  // Two arrays (names, tokens), as PostgreSQL array literals.
  std::vector<std::string> names;
  std::vector<int64_t> tokens;
  for (const Fence& f : fences) {
    RETURN_IF_ERROR(ValidateLeaseRequest(f.lease, "renewer", ttl));
    std::string quoted = "\"";
    for (char ch : f.lease) {
      if (ch == '"' || ch == '\\') quoted += '\\';
      quoted += ch;
    }
    names.push_back(quoted + "\"");
    tokens.push_back(f.token);
  }
  absl::flat_hash_map<std::string, absl::Time> renewed;  // name -> its time
  RETURN_IF_ERROR(WriteLease(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("UPDATE leases AS l SET expires_at = "
               "COALESCE($3::bigint, " CHIME_PG_DB_NOW
               ") + $4::bigint FROM (SELECT unnest($1::text[]) AS name, "
               "unnest($2::bigint[]) AS epoch) AS f WHERE l.name = f.name "
               "AND l.epoch = f.epoch AND l.holder <> '' "
               "RETURNING l.name, " CHIME_PG_DB_NOW,
               {absl::StrCat("{", absl::StrJoin(names, ","), "}"),
                absl::StrCat("{", absl::StrJoin(tokens, ","), "}"), LeaseNow(),
                DurationToNanos(ttl)}));
    for (int i = 0; i < r.rows(); ++i)
      renewed[r.Text(i, 0)] = StoreTime(r.Int(i, 1));
    return absl::OkStatus();
  }));
  for (const Fence& f : fences) {
    auto it = renewed.find(f.lease);
    if (it == renewed.end()) {
      grants.push_back(absl::FailedPreconditionError(
          absl::StrCat("lease \"", f.lease, "\": token ", f.token,
                       " is no longer current (released, or granted to "
                       "another holder)")));
      continue;
    }
    LeaseGrant grant{f.token, ttl};
    grant.store_time = it->second;
    grants.push_back(grant);
  }
  return grants;
}

absl::Status PostgresStore::ReleaseLease(const Fence& fence,
                                         MonoTime deadline) {
  return WriteLease(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT holder, epoch FROM leases WHERE name = $1 FOR UPDATE",
               {fence.lease}));
    if (r.rows() == 1 && r.Text(0, 0).empty() && r.Int(0, 1) == fence.token) {
      return absl::OkStatus();  // released before: a re-send
    }
    RETURN_IF_ERROR(CheckFence(tx, fence));
    return tx
        .Run("UPDATE leases SET holder = '', expires_at = 0 WHERE name = $1",
             {fence.lease})
        .status();
  });
}

absl::StatusOr<std::vector<LeaseInfo>> PostgresStore::ListLeases(
    MonoTime deadline) {
  std::vector<LeaseInfo> out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    out.clear();
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Run("SELECT name, holder, epoch, expires_at, "
                            "COALESCE($1::bigint, " CHIME_PG_DB_NOW
                            ") FROM leases WHERE epoch > 0 ORDER BY name",
                            {LeaseNow()}));
    for (int i = 0; i < r.rows(); ++i) {
      LeaseInfo info{r.Text(i, 0), r.Text(i, 1), r.Int(i, 2),
                     absl::ZeroDuration()};
      const int64_t left = r.Int(i, 3) - r.Int(i, 4);
      if (!info.holder.empty() && left > 0) {
        info.remaining = absl::Nanoseconds(left);
      }
      out.push_back(std::move(info));
    }
    return absl::OkStatus();
  }));
  return out;
}

// --- Idempotency keys, info ---

absl::StatusOr<IdempotencyOutcome> PostgresStore::CheckIdempotencyKey(
    const IdempotencyRecord& record, MonoTime deadline) {
  RETURN_IF_ERROR(ValidateIdempotencyRecord(record));
  IdempotencyOutcome out;
  RETURN_IF_ERROR(Write(deadline, [&](PgTx& tx) -> absl::Status {
    // Stored unless an unexpired record holds the key.
    ASSIGN_OR_RETURN(
        PgResult put,
        tx.Run(
            "INSERT INTO idempotency VALUES ($1, $2, $3, $4::bigint, "
            "$5::bigint) ON CONFLICT (key) DO UPDATE SET "
            "fingerprint = EXCLUDED.fingerprint, "
            "response = EXCLUDED.response, "
            "created_at = EXCLUDED.created_at, "
            "expires_at = EXCLUDED.expires_at "
            "WHERE idempotency.expires_at <= EXCLUDED.created_at "
            "RETURNING 1",
            {record.key, record.fingerprint, PgParam::Bytes(record.response),
             TimeToNanos(record.created_at), TimeToNanos(record.expires_at)}));
    if (put.rows() == 1) {
      out = IdempotencyOutcome{true, record};
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Run("SELECT fingerprint, response, created_at, "
                            "expires_at FROM idempotency WHERE key = $1",
                            {record.key}));
    if (r.rows() != 1) {
      return absl::InternalError("idempotency key vanished while held");
    }
    out = IdempotencyOutcome{
        false,
        IdempotencyRecord{record.key, r.Text(0, 0), r.Bytes(0, 1),
                          NanosToTime(r.Int(0, 2)), NanosToTime(r.Int(0, 3))}};
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<StoreInfo> PostgresStore::GetInfo(MonoTime deadline) {
  StoreInfo info;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT (SELECT value FROM meta WHERE key = 'revision'), "
               "GREATEST((SELECT value FROM meta WHERE key = 'max_run_id'), "
               "(SELECT COALESCE(MAX(id), 0) FROM runs)), "
               "(SELECT COUNT(*) FROM jobs WHERE NOT deleted), "
               "(SELECT COUNT(*) FROM runs), "
               "(SELECT COALESCE(SUM(bytes), 0) FROM runs)"));
    info.revision = r.Int(0, 0);
    info.max_run_id = static_cast<RunId>(r.Int(0, 1));
    info.jobs = r.Int(0, 2);
    info.runs = r.Int(0, 3);
    info.run_bytes = r.Int(0, 4);
    return absl::OkStatus();
  }));
  return info;
}

absl::StatusOr<RunId> PostgresStore::ReserveRunIds(int64_t count,
                                                   MonoTime deadline) {
  RETURN_IF_ERROR(ValidateRunIdCount(count));
  RunId first = 0;
  RETURN_IF_ERROR(Write(deadline, [&](PgTx& tx) -> absl::Status {
    // The meta row's lock orders concurrent reservations.
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Run("UPDATE meta SET value = GREATEST(value, (SELECT "
                            "COALESCE(MAX(id), 0) FROM runs)) + $1::bigint "
                            "WHERE key = 'max_run_id' RETURNING value",
                            {absl::StrCat(count)}));
    if (r.rows() != 1)
      return absl::DataLossError("meta row \"max_run_id\" is missing");
    first = static_cast<RunId>(r.Int(0, 0) - count + 1);
    return absl::OkStatus();
  }));
  return first;
}

absl::StatusOr<uint32_t> PostgresStore::AgreeShards(uint32_t shards,
                                                    bool may_change,
                                                    MonoTime deadline) {
  uint32_t before = shards;
  RETURN_IF_ERROR(Write(deadline, [&](PgTx& tx) -> absl::Status {
    // The row's lock orders nodes starting at once.
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Run("INSERT INTO meta VALUES ('shards', $1::bigint) "
                            "ON CONFLICT (key) DO UPDATE SET value = "
                            "meta.value RETURNING value",
                            {absl::StrCat(shards)}));
    before = static_cast<uint32_t>(r.Int(0, 0));
    if (before == shards || !may_change) return absl::OkStatus();
    return tx
        .Run("UPDATE meta SET value = $1::bigint WHERE key = 'shards'",
             {absl::StrCat(shards)})
        .status();
  }));
  return before;
}

std::unique_ptr<Store::JobWatch> PostgresStore::WatchJobs(
    std::function<void()> changed) {
  return std::make_unique<PgJobWatch>(options_.conninfo, clock_,
                                      std::move(changed));
}

}  // namespace chime::store
