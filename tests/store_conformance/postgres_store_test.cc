// PostgresStore's own tests, beyond the conformance suite: the database-clock
// path (Options::clock null: leases expire by PostgreSQL's clock, in real
// time), deadlines, a server restart, and concurrent migrations. Real time,
// on 127.0.0.1, with every wait bounded.
#include "src/store/postgres_store.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/pg_conn.h"
#include "src/store/postgres_schema.h"
#include "testing/postgres_server.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::conformance {
namespace {

using ::chime::store::PostgresStore;
using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

constexpr MonoTime kForever = MonoTime::Infinite();

MonoTime In(absl::Duration d) { return RealClock::Get().MonoNow() + d; }

std::unique_ptr<PostgresStore> MustOpen(const std::string& conninfo) {
  PostgresStore::Options options;
  options.conninfo = conninfo;
  absl::StatusOr<std::unique_ptr<PostgresStore>> store =
      PostgresStore::Open(options, In(absl::Seconds(30)));
  EXPECT_THAT(store, IsOk());
  return store.ok() ? *std::move(store) : nullptr;
}

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> conninfo = FreshPostgresDatabase();
    ASSERT_THAT(conninfo, IsOk());
    conninfo_ = *conninfo;
    store_ = MustOpen(conninfo_);
    ASSERT_NE(store_, nullptr);
  }

  JobRecord MustPut(const std::string& id) {
    JobSpec spec;
    spec.key.id = id;
    spec.trigger.expression = "*/5 * * * *";
    absl::StatusOr<JobRecord> job =
        store_->PutJob(spec, kAnyRevision, kForever);
    EXPECT_THAT(job, IsOk());
    return job.ok() ? *job : JobRecord{};
  }

  // Tries to acquire `name` for `holder` every 20 ms until granted or
  // `limit` passes.
  absl::StatusOr<LeaseGrant> AcquireWithin(const std::string& name,
                                           const std::string& holder,
                                           absl::Duration ttl,
                                           absl::Duration limit) {
    const absl::Time end = absl::Now() + limit;
    absl::StatusOr<LeaseGrant> grant;
    do {
      grant = store_->AcquireLease(name, holder, ttl, kForever);
      if (!absl::IsAlreadyExists(grant.status())) return grant;
      absl::SleepFor(absl::Milliseconds(20));
    } while (absl::Now() < end);
    return grant;
  }

  std::string conninfo_;
  std::unique_ptr<PostgresStore> store_;
};

TEST_F(PostgresStoreTest, LeaseExpiresByTheDatabaseClockAndFencesTheOldHolder) {
  const JobRecord job = MustPut("a");
  const absl::Time start = absl::Now();
  absl::StatusOr<LeaseGrant> a = store_->AcquireLease(
      "shard-1", "node-a", absl::Milliseconds(500), kForever);
  ASSERT_THAT(a, IsOk());
  EXPECT_THAT(
      store_->AcquireLease("shard-1", "node-b", absl::Seconds(5), kForever),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("node-a")));
  absl::StatusOr<std::vector<LeaseInfo>> leases = store_->ListLeases(kForever);
  ASSERT_THAT(leases, IsOk());
  ASSERT_EQ(leases->size(), 1u);
  EXPECT_GT((*leases)[0].remaining, absl::ZeroDuration());
  EXPECT_LE((*leases)[0].remaining, absl::Milliseconds(500));

  absl::StatusOr<LeaseGrant> b =
      AcquireWithin("shard-1", "node-b", absl::Seconds(5), absl::Seconds(10));
  ASSERT_THAT(b, IsOk());
  // Granted only once the database's clock passed node-a's expiry.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(450));
  EXPECT_GT(b->token, a->token);

  // The stale holder's claim is refused and writes nothing.
  ClaimBatch batch;
  batch.claims = {FireClaim{FireRef{job.id, 1, StoreConformance::At(5)}, 7}};
  batch.at = StoreConformance::At(5);
  EXPECT_THAT(
      store_->ClaimFires(Fence{"shard-1", a->token}, batch, kForever),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));
  absl::StatusOr<std::vector<ClaimInfo>> claims =
      store_->LookupClaims({batch.claims[0].fire}, kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 0u);
  EXPECT_THAT(store_->ClaimFires(Fence{"shard-1", b->token}, batch, kForever),
              IsOk());
}

TEST_F(PostgresStoreTest, RenewalByTheDatabaseClockKeepsTheLease) {
  absl::StatusOr<LeaseGrant> a = store_->AcquireLease(
      "shard-1", "node-a", absl::Milliseconds(600), kForever);
  ASSERT_THAT(a, IsOk());
  const Fence fence{"shard-1", a->token};
  // Renewed every 200 ms for 1.2 s: twice the ttl, never expired.
  for (int i = 0; i < 6; ++i) {
    absl::SleepFor(absl::Milliseconds(200));
    ASSERT_THAT(store_->RenewLease(fence, absl::Milliseconds(600), kForever),
                IsOk());
    EXPECT_THAT(
        store_->AcquireLease("shard-1", "node-b", absl::Seconds(1), kForever),
        StatusIs(absl::StatusCode::kAlreadyExists));
  }
}

TEST_F(PostgresStoreTest, GrantsAndRenewalsSayTheDatabasesTime) {
  // The server runs on this machine: its clock is ours.
  const absl::Time before = absl::Now();
  absl::StatusOr<LeaseGrant> a =
      store_->AcquireLease("shard-1", "node-a", absl::Seconds(5), kForever);
  ASSERT_THAT(a, IsOk());
  absl::StatusOr<LeaseGrant> renewed = store_->RenewLease(
      Fence{"shard-1", a->token}, absl::Seconds(5), kForever);
  ASSERT_THAT(renewed, IsOk());
  const absl::Time after = absl::Now();
  for (const LeaseGrant& g : {*a, *renewed}) {
    EXPECT_GE(g.store_time, before - absl::Milliseconds(1));
    EXPECT_LE(g.store_time, after + absl::Milliseconds(1));
  }
  EXPECT_LE(a->store_time, renewed->store_time);
}

TEST_F(PostgresStoreTest, DeadlineCancelsAStatementBlockedByALock) {
  const JobRecord job = MustPut("a");
  absl::StatusOr<LeaseGrant> a =
      store_->AcquireLease("shard-1", "node-a", absl::Seconds(30), kForever);
  ASSERT_THAT(a, IsOk());
  // Another session holds the lease row as an acquirer would.
  absl::StatusOr<std::unique_ptr<store::PgConn>> other =
      store::PgConn::Connect(conninfo_, RealClock::Get());
  ASSERT_THAT(other, IsOk());
  // (A session that may idle in its transaction: not one of chime's.)
  ASSERT_THAT((*other)->Exec("SET idle_in_transaction_session_timeout = 0",
                             In(absl::Seconds(10))),
              IsOk());
  ASSERT_THAT((*other)->Exec("BEGIN; SELECT * FROM leases FOR UPDATE",
                             In(absl::Seconds(10))),
              IsOk());
  ClaimBatch batch;
  batch.claims = {FireClaim{FireRef{job.id, 1, StoreConformance::At(5)}, 7}};
  batch.at = StoreConformance::At(5);
  const absl::Time start = absl::Now();
  EXPECT_THAT(store_->ClaimFires(Fence{"shard-1", a->token}, batch,
                                 In(absl::Milliseconds(300))),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  ASSERT_THAT((*other)->Exec("ROLLBACK", In(absl::Seconds(10))), IsOk());
  // Nothing was claimed, and the store works on.
  EXPECT_THAT(store_->ClaimFires(Fence{"shard-1", a->token}, batch, kForever),
              IsOk());
}

// A holder frozen (SIGSTOP) inside a fenced write holds the lease row FOR
// SHARE; the server ends its session soon, so that a standby can take the
// lease once it expired instead of waiting for the holder to wake up.
TEST_F(PostgresStoreTest, AHolderFrozenInATransactionDoesNotKeepTheLease) {
  absl::StatusOr<LeaseGrant> a = store_->AcquireLease(
      "shard-1", "node-a", absl::Milliseconds(300), kForever);
  ASSERT_THAT(a, IsOk());
  absl::StatusOr<std::unique_ptr<store::PgConn>> frozen =
      store::PgConn::Connect(conninfo_, RealClock::Get());
  ASSERT_THAT(frozen, IsOk());
  // The fenced write's own check, left open.
  ASSERT_THAT((*frozen)->Exec("BEGIN", In(absl::Seconds(10))), IsOk());
  ASSERT_THAT((*frozen)->Run(PostgresStore::kCheckFenceSql, {"shard-1"},
                             In(absl::Seconds(10))),
              IsOk());
  const absl::Time start = absl::Now();
  absl::StatusOr<LeaseGrant> b;
  do {  // a deadline per call: a blocked acquirer must not hang the test
    b = store_->AcquireLease("shard-1", "node-b", absl::Seconds(5),
                             In(absl::Seconds(5)));
    if (!absl::IsAlreadyExists(b.status())) break;
    absl::SleepFor(absl::Milliseconds(20));
  } while (absl::Now() - start < absl::Seconds(10));
  ASSERT_THAT(b, IsOk());
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  EXPECT_GT(b->token, a->token);
  // The frozen session is gone: what it would write next is refused.
  EXPECT_THAT((*frozen)->Exec("COMMIT", In(absl::Seconds(10))),
              StatusIs(absl::StatusCode::kUnavailable));
}

// A node writes under its leases all the time; its renewals must not queue
// behind those writes (they did with FOR SHARE: seconds under load, until the
// leases expired), while a grant to another node must wait for them.
TEST_F(PostgresStoreTest, RenewalsDoNotWaitForFencedWritesButGrantsDo) {
  absl::StatusOr<LeaseGrant> a = store_->AcquireLease(
      "shard-2", "node-a", absl::Milliseconds(800), kForever);
  ASSERT_THAT(a, IsOk());
  const Fence fence{"shard-2", a->token};
  absl::StatusOr<std::unique_ptr<store::PgConn>> writer =
      store::PgConn::Connect(conninfo_, RealClock::Get());
  ASSERT_THAT(writer, IsOk());
  // A write that takes its time (not a frozen one, which the server ends).
  ASSERT_THAT((*writer)->Exec("SET idle_in_transaction_session_timeout = 0",
                              In(absl::Seconds(10))),
              IsOk());
  ASSERT_THAT((*writer)->Exec("BEGIN", In(absl::Seconds(10))), IsOk());
  ASSERT_THAT((*writer)->Run(PostgresStore::kCheckFenceSql, {"shard-2"},
                             In(absl::Seconds(10))),
              IsOk());
  EXPECT_THAT(store_->RenewLease(fence, absl::Milliseconds(800),
                                 In(absl::Milliseconds(500))),
              IsOk());
  std::vector<Fence> fences = {fence};
  absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>> renewed =
      store_->RenewLeases(fences, absl::Milliseconds(800),
                          In(absl::Milliseconds(500)));
  ASSERT_THAT(renewed, IsOk());
  EXPECT_THAT((*renewed)[0], IsOk());
  // Once expired, another node's grant waits for the write to end: within
  // the writer's transaction it cannot be answered.
  absl::SleepFor(absl::Milliseconds(850));
  EXPECT_THAT(store_->AcquireLease("shard-2", "node-b", absl::Seconds(5),
                                   In(absl::Milliseconds(100))),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  ASSERT_THAT((*writer)->Exec("ROLLBACK", In(absl::Seconds(10))), IsOk());
  EXPECT_THAT(store_->AcquireLease("shard-2", "node-b", absl::Seconds(5),
                                   In(absl::Seconds(10))),
              IsOk());
}

TEST_F(PostgresStoreTest, NodesOpeningAtOnceMigrateOnce) {
  absl::StatusOr<std::string> conninfo = FreshPostgresDatabase();
  ASSERT_THAT(conninfo, IsOk());
  std::atomic<int> opened{0};
  std::vector<std::thread> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.emplace_back([&] {
      PostgresStore::Options options;
      options.conninfo = *conninfo;
      if (PostgresStore::Open(options, In(absl::Seconds(30))).ok()) ++opened;
    });
  }
  for (std::thread& t : nodes) t.join();
  EXPECT_EQ(opened.load(), 4);
  absl::StatusOr<std::unique_ptr<store::PgConn>> conn =
      store::PgConn::Connect(*conninfo, RealClock::Get());
  ASSERT_THAT(conn, IsOk());
  absl::StatusOr<store::PgResult> rows = (*conn)->Run(
      "SELECT COUNT(*) FROM schema_migrations", {}, In(absl::Seconds(10)));
  ASSERT_THAT(rows, IsOk());
  EXPECT_EQ(rows->Int(0, 0), store::kPostgresSchemaVersion);  // each once
}

// Recovery and shard takeovers list unfinished runs by state among every run
// kept: the plan must read only those (runs_unfinished), whatever the
// history, not walk every run by time.
TEST_F(PostgresStoreTest, UnfinishedRunsAreListedWithoutReadingFinishedOnes) {
  absl::StatusOr<std::unique_ptr<store::PgConn>> conn =
      store::PgConn::Connect(conninfo_, RealClock::Get());
  ASSERT_THAT(conn, IsOk());
  // A large history, as the planner sees it.
  ASSERT_THAT((*conn)->Exec("INSERT INTO runs SELECT i, 1, 1, i, false, 4, 1, "
                            "1, 0, 0, '', 0 FROM generate_series(1, 20000) i; "
                            "ANALYZE runs",
                            In(absl::Seconds(30))),
              IsOk());
  for (RunState state : {RunState::kPending, RunState::kRunning,
                         RunState::kRetrying, RunState::kLost}) {
    RunQuery query;
    query.state = state;
    for (bool after : {false, true}) {
      if (after) query.after = RunCursor{absl::Now(), 5};
      std::string sql = "EXPLAIN " + store::PgListRunsSql(query);
      std::vector<store::PgParam> params = {int64_t{0}, INT64_MAX};
      if (after) params.insert(params.end(), {int64_t{5}, int64_t{5}});
      params.push_back(int64_t{1001});
      absl::StatusOr<store::PgResult> plan =
          (*conn)->Run(sql, params, In(absl::Seconds(10)));
      ASSERT_THAT(plan, IsOk());
      std::string text;
      for (int i = 0; i < plan->rows(); ++i) text += plan->Text(i, 0) + "\n";
      EXPECT_THAT(text, HasSubstr("runs_unfinished"))
          << RunStateName(state) << (after ? " after a cursor" : "") << "\n"
          << text;
    }
  }
}

// A prepared statement's cached generic plan is planned for the tables as
// they were: on a new database, a sequential scan of an empty table, kept
// while it grows. Our connections prepare a statement again after 1 s, 2 s,
// 4 s, ... up to every PgConn::kReplanAfter, so its plan follows the tables.
TEST_F(PostgresStoreTest, StatementsArePreparedAgainToFollowTheTables) {
  SimulatedClock clock;
  absl::StatusOr<std::unique_ptr<store::PgConn>> conn =
      store::PgConn::Connect(conninfo_, clock);
  ASSERT_THAT(conn, IsOk());
  constexpr char kHistory[] =
      "SELECT run_id, from_state FROM transitions WHERE run_id = "
      "ANY($1::bigint[])";
  const auto plans = [&]() -> std::vector<std::pair<int64_t, int64_t>> {
    absl::StatusOr<store::PgResult> r = (*conn)->Run(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
        "WHERE statement = $1",
        {kHistory}, kForever);
    EXPECT_THAT(r, IsOk());
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int i = 0; r.ok() && i < r->rows(); ++i)
      out.emplace_back(r->Int(i, 0), r->Int(i, 1));
    return out;
  };
  using Plans = std::vector<std::pair<int64_t, int64_t>>;
  for (int i = 0; i < 8; ++i) {
    ASSERT_THAT((*conn)->Run(kHistory, {"{1,2,3}"}, kForever), IsOk());
  }
  // (PostgreSQL's own choice after five custom plans, here: the cached
  // generic one, 3 + 5.)
  const auto runs = [](const Plans& p) {
    return p.size() == 1 ? p[0].first + p[0].second : -1;
  };
  EXPECT_EQ(runs(plans()), 8);
  int64_t expected = 8;
  for (absl::Duration age :
       {absl::Seconds(1), absl::Seconds(2), absl::Seconds(4), absl::Seconds(8),
        store::PgConn::kReplanAfter, store::PgConn::kReplanAfter}) {
    clock.AdvanceBy(age - absl::Milliseconds(1));
    ASSERT_THAT((*conn)->Run(kHistory, {"{1,2,3}"}, kForever), IsOk());
    EXPECT_EQ(runs(plans()), ++expected) << "at age " << age;  // the same
    clock.AdvanceBy(absl::Milliseconds(1));
    ASSERT_THAT((*conn)->Run(kHistory, {"{1,2,3}"}, kForever), IsOk());
    // Prepared again, planned afresh.
    EXPECT_EQ(plans(), (Plans{{0, 1}})) << "at age " << age;
    expected = 1;
  }
}

// The first node records its number of shards; later ones read it, and
// replace it only when they may.
TEST_F(PostgresStoreTest, AgreeShardsRecordsTheFirstAndChangesOnlyWhenAllowed) {
  EXPECT_THAT(store_->AgreeShards(64, false, kForever), IsOkAndHolds(64u));
  EXPECT_THAT(store_->AgreeShards(8, false, kForever), IsOkAndHolds(64u));
  EXPECT_THAT(store_->AgreeShards(64, false, kForever), IsOkAndHolds(64u));
  EXPECT_THAT(store_->AgreeShards(8, true, kForever), IsOkAndHolds(64u));
  EXPECT_THAT(store_->AgreeShards(0, false, kForever), IsOkAndHolds(8u));
}

// A node following the change feed is told soon after another node's job
// write commits (LISTEN/NOTIFY), and once at the start.
TEST_F(PostgresStoreTest, WatchJobsHintsAtEveryCommittedJobChange) {
  std::unique_ptr<PostgresStore> other = MustOpen(conninfo_);
  ASSERT_NE(other, nullptr);
  std::mutex mu;
  std::condition_variable cv;
  int hints = 0;
  std::unique_ptr<Store::JobWatch> watch = store_->WatchJobs([&] {
    std::lock_guard<std::mutex> lock(mu);
    ++hints;
    cv.notify_all();
  });
  ASSERT_NE(watch, nullptr);
  // Waits (at most 10 s) for more than `n` hints; how many there are.
  const auto more_than = [&](int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return hints > n; });
    return hints;
  };
  const int listening = more_than(0);
  ASSERT_GE(listening, 1);
  JobSpec spec;
  spec.key.id = "a";
  spec.trigger.expression = "*/5 * * * *";
  ASSERT_THAT(other->PutJob(spec, kNoRevision, In(absl::Seconds(10))), IsOk());
  const int after_put = more_than(listening);
  EXPECT_GT(after_put, listening) << "no hint after a put";
  ASSERT_THAT(other->DeleteJob(spec.key, kAnyRevision, In(absl::Seconds(10))),
              IsOk());
  EXPECT_GT(more_than(after_put), after_put) << "no hint after a delete";
}

TEST_F(PostgresStoreTest, SchemaOfANewerBinaryIsRefusedUnchanged) {
  absl::StatusOr<std::unique_ptr<store::PgConn>> conn =
      store::PgConn::Connect(conninfo_, RealClock::Get());
  ASSERT_THAT(conn, IsOk());
  ASSERT_THAT(
      (*conn)->Exec("INSERT INTO schema_migrations(version) VALUES (99)",
                    In(absl::Seconds(10))),
      IsOk());
  PostgresStore::Options options;
  options.conninfo = conninfo_;
  EXPECT_THAT(PostgresStore::Open(options, In(absl::Seconds(30))),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("schema version 99")));
}

TEST(PostgresStoreServerTest,
     LostServerIsUnavailableAndAcknowledgedWritesSurvive) {
  absl::StatusOr<std::unique_ptr<testing::PostgresServer>> server =
      testing::PostgresServer::Start();
  ASSERT_THAT(server, IsOk());
  absl::StatusOr<std::string> conninfo = (*server)->CreateDatabase();
  ASSERT_THAT(conninfo, IsOk());
  std::unique_ptr<PostgresStore> store = MustOpen(*conninfo);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<LeaseGrant> a =
      store->AcquireLease("shard-1", "node-a", absl::Minutes(5), kForever);
  ASSERT_THAT(a, IsOk());

  ASSERT_THAT((*server)->StopImmediately(), IsOk());
  EXPECT_THAT(store->ListLeases(In(absl::Seconds(10))),
              StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_THAT((*server)->Restart(), IsOk());
  // The pool reconnects; the acknowledged grant survived the crash.
  absl::StatusOr<std::vector<LeaseInfo>> leases =
      store->ListLeases(In(absl::Seconds(10)));
  ASSERT_THAT(leases, IsOk());
  ASSERT_EQ(leases->size(), 1u);
  EXPECT_EQ((*leases)[0].holder, "node-a");
  EXPECT_EQ((*leases)[0].token, a->token);
  EXPECT_THAT(
      store->RenewLease(Fence{"shard-1", a->token}, absl::Minutes(5), kForever),
      IsOk());
}

}  // namespace
}  // namespace chime::conformance
