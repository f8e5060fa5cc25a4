// SqliteStore beyond the conformance suite: what only a durable, single-node
// store promises -- reopening keeps everything, the epoch fences earlier
// opens, one process per data directory, schema versions and migrations,
// corruption. Group commit is in sqlite_group_commit_test.cc.
#include "src/store/sqlite_store.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/job_codec.h"
#include "src/store/sqlite_db.h"
#include "src/store/sqlite_schema.h"
#include "src/store/store_util.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/sqlite_store_fixture.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::store {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

TEST_F(SqliteStoreTest, ReopeningKeepsEverythingAcknowledged) {
  JobId job_id;
  {
    std::unique_ptr<SqliteStore> store = MustOpen();
    ASSERT_NE(store, nullptr);
    JobSpec spec;
    spec.key.id = "nightly";
    spec.trigger.expression = "30 2 * * *";
    absl::StatusOr<JobRecord> job = store->PutJob(spec, kNoRevision, kForever);
    ASSERT_THAT(job, IsOk());
    job_id = job->id;
    absl::StatusOr<LeaseGrant> grant =
        store->AcquireLease("scheduler", "node-a", absl::Minutes(1), kForever);
    ASSERT_THAT(grant, IsOk());
    const Fence fence{"scheduler", grant->token};
    ClaimBatch batch;
    batch.claims = {FireClaim{FireRef{job_id, 1, At(5)}, 12}};
    batch.missed = {MissedRecord{job_id, 1, At(0), At(0), 1, false,
                                 MissReason::kCatchupWindow}};
    batch.watermarks = {{job_id, 1, At(5)}};
    batch.at = At(5);
    ASSERT_THAT(store->ClaimFires(fence, batch, kForever), IsOk());
    RunTransition start{12,   RunState::kPending, RunState::kRunning, 1, 0,
                        At(6)};
    RunTransition end{
        12,     RunState::kRunning, RunState::kSucceeded, 1, 0, At(7), "ok",
        "hello"};
    ASSERT_THAT(store->TransitionRuns(fence, {start, end}, kForever), IsOk());
    ASSERT_THAT(
        store->CheckIdempotencyKey(
            IdempotencyRecord{"req", "f", "r", At(0), At(100)}, kForever),
        IsOk());
  }
  std::unique_ptr<SqliteStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<JobRecord> job =
      store->GetJob(JobKey{"default", "nightly"}, kForever);
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->id, job_id);
  EXPECT_EQ(job->spec.trigger.expression, "30 2 * * *");
  EXPECT_EQ(job->watermark, At(5));
  EXPECT_EQ(job->watermark_generation, 1);
  absl::StatusOr<RunDetail> run = store->GetRun(12, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kSucceeded);
  EXPECT_THAT(run->transitions, SizeIs(2));
  ASSERT_THAT(run->attempts, SizeIs(1));
  EXPECT_EQ(run->attempts[0].output, "hello");
  absl::StatusOr<MissedPage> missed =
      store->ListMissed(job_id, std::nullopt, 10, kForever);
  ASSERT_THAT(missed, IsOk());
  EXPECT_THAT(missed->records, SizeIs(1));
  absl::StatusOr<IdempotencyOutcome> key = store->CheckIdempotencyKey(
      IdempotencyRecord{"req", "f", "other", At(1), At(101)}, kForever);
  ASSERT_THAT(key, IsOk());
  EXPECT_FALSE(key->created);
  absl::StatusOr<StoreInfo> info = store->GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->max_run_id, 12u);
  EXPECT_EQ(info->jobs, 1);
}

TEST_F(SqliteStoreTest, EveryOpenHasANewEpochThatFencesEarlierTokens) {
  int64_t old_token;
  {
    std::unique_ptr<SqliteStore> store = MustOpen();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->epoch(), 1);
    absl::StatusOr<LeaseGrant> grant =
        store->AcquireLease("scheduler", "node-a", absl::Hours(1), kForever);
    ASSERT_THAT(grant, IsOk());
    old_token = grant->token;
  }
  std::unique_ptr<SqliteStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->epoch(), 2);
  // The earlier open's lease was released at open: free at once, and the
  // old token writes nothing.
  EXPECT_THAT(store->RenewLease(Fence{"scheduler", old_token}, absl::Hours(1),
                                kForever),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::StatusOr<LeaseGrant> grant =
      store->AcquireLease("scheduler", "node-b", absl::Hours(1), kForever);
  ASSERT_THAT(grant, IsOk());
  EXPECT_GT(grant->token, old_token);
  EXPECT_GT(grant->token, int64_t{2} << 32);
}

TEST_F(SqliteStoreTest, SecondOpenerOfADataDirectoryIsRefused) {
  std::unique_ptr<SqliteStore> first = MustOpen();
  ASSERT_NE(first, nullptr);
  EXPECT_THAT(SqliteStore::Open(Options()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(dir_ + "/data/LOCK")));
  first.reset();
  EXPECT_THAT(SqliteStore::Open(Options()), IsOk());
}

TEST_F(SqliteStoreTest, NewerSchemaIsRefusedAndLeftAlone) {
  MustOpen().reset();
  {
    absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath(), false);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec("UPDATE schema_version SET version = 99"), IsOk());
  }
  EXPECT_THAT(SqliteStore::Open(Options()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("schema version 99 is newer")));
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath(), false);
  ASSERT_THAT(db, IsOk());
  absl::StatusOr<StmtRef> stmt =
      (*db)->Prepare("SELECT version FROM schema_version");
  ASSERT_THAT(stmt, IsOk());
  ASSERT_THAT((*stmt)->Step(), IsOk());
  EXPECT_EQ((*stmt)->Int(0), 99);
}

// Schema version 1 as it shipped, for the migration test: never edit.
constexpr char kSchemaVersion1[] = R"sql(
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES ('epoch', 1), ('revision', 3), ('last_token', 0),
                        ('max_run_id', 0);
CREATE TABLE leases(
  name TEXT PRIMARY KEY, holder TEXT NOT NULL, token INTEGER NOT NULL,
  expires_mono INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL,
  generation INTEGER NOT NULL, revision INTEGER NOT NULL,
  deleted INTEGER NOT NULL, watermark INTEGER NOT NULL, spec BLOB NOT NULL,
  UNIQUE(namespace, name));
CREATE INDEX jobs_by_revision ON jobs(revision);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,
  generation INTEGER NOT NULL, scheduled INTEGER NOT NULL,
  manual INTEGER NOT NULL, state INTEGER NOT NULL, attempt INTEGER NOT NULL,
  token INTEGER NOT NULL, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, detail TEXT NOT NULL, bytes INTEGER NOT NULL);
CREATE UNIQUE INDEX runs_by_fire ON runs(job_id, generation, scheduled, manual);
CREATE INDEX runs_by_job ON runs(job_id, scheduled, id);
CREATE INDEX runs_by_time ON runs(scheduled, id);
CREATE TABLE transitions(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, from_state INTEGER NOT NULL,
  to_state INTEGER NOT NULL, attempt INTEGER NOT NULL, token INTEGER NOT NULL,
  at INTEGER NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE INDEX transitions_by_step
  ON transitions(run_id, from_state, to_state, attempt);
CREATE TABLE attempts(
  run_id INTEGER NOT NULL, number INTEGER NOT NULL, token INTEGER NOT NULL,
  started_at INTEGER NOT NULL, finished_at INTEGER NOT NULL,
  outcome INTEGER NOT NULL, exit_code INTEGER NOT NULL, detail TEXT NOT NULL,
  output BLOB NOT NULL, output_truncated INTEGER NOT NULL,
  PRIMARY KEY(run_id, number)) WITHOUT ROWID;
CREATE TABLE missed(
  job_id INTEGER NOT NULL, first INTEGER NOT NULL, reason INTEGER NOT NULL,
  generation INTEGER NOT NULL, last INTEGER NOT NULL, count INTEGER NOT NULL,
  capped INTEGER NOT NULL,
  PRIMARY KEY(job_id, first, reason, generation)) WITHOUT ROWID;
CREATE TABLE idempotency(
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, response BLOB NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX idempotency_by_expiry ON idempotency(expires_at);
)sql";

// Version 2 gives every job's watermark a generation. Version 1 kept one
// watermark per job, meant to be resumed by the job's current schedule: an
// existing watermark gets the job's current generation (tombstones too), and a
// job without one keeps generation 0.
TEST_F(SqliteStoreTest, MigrationGivesOldWatermarksTheirJobsGeneration) {
  ASSERT_TRUE(std::filesystem::create_directory(dir_ + "/data"));
  {
    absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath(), true);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec(kSchemaVersion1), IsOk());
    struct Row {
      const char* name;
      int64_t generation;
      bool deleted;
      absl::Time watermark;
    };
    const Row rows[] = {{"resumed", 3, false, At(20)},
                        {"fresh", 1, false, absl::InfinitePast()},
                        {"gone", 2, true, At(7)}};
    int64_t revision = 0;
    for (const Row& row : rows) {
      JobSpec spec;
      spec.key.id = row.name;
      spec.trigger.expression = "*/5 * * * *";
      absl::StatusOr<StmtRef> insert = (*db)->Prepare(
          "INSERT INTO jobs (namespace, name, generation, revision, deleted, "
          "watermark, spec) VALUES (?, ?, ?, ?, ?, ?, ?)");
      ASSERT_THAT(insert, IsOk());
      ASSERT_THAT((*insert)
                      ->Bind(1, spec.key.name_space)
                      .Bind(2, spec.key.id)
                      .Bind(3, row.generation)
                      .Bind(4, ++revision)
                      .Bind(5, int64_t{row.deleted})
                      .Bind(6, TimeToNanos(row.watermark))
                      .BindBlob(7, EncodeJobSpec(spec))
                      .Run(),
                  IsOk());
    }
  }
  std::unique_ptr<SqliteStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->epoch(), 2);  // the version 1 file's epoch was 1
  absl::StatusOr<JobRecord> resumed =
      store->GetJob(JobKey{"default", "resumed"}, kForever);
  ASSERT_THAT(resumed, IsOk());
  EXPECT_EQ(resumed->generation, 3);
  EXPECT_EQ(resumed->watermark_generation, 3);
  EXPECT_EQ(resumed->watermark, At(20));
  absl::StatusOr<JobRecord> fresh =
      store->GetJob(JobKey{"default", "fresh"}, kForever);
  ASSERT_THAT(fresh, IsOk());
  EXPECT_EQ(fresh->watermark_generation, 0);
  EXPECT_EQ(fresh->watermark, absl::InfinitePast());
  absl::StatusOr<JobChanges> changes = store->JobChangesSince(2, 10, kForever);
  ASSERT_THAT(changes, IsOk());
  ASSERT_THAT(changes->changes, SizeIs(1));
  EXPECT_TRUE(changes->changes[0].deleted);
  EXPECT_EQ(changes->changes[0].watermark_generation, 2);
  EXPECT_EQ(changes->changes[0].watermark, At(7));

  // The migrated pair follows the rule: forward only within generation 3.
  absl::StatusOr<LeaseGrant> grant =
      store->AcquireLease("scheduler", "node-a", absl::Minutes(1), kForever);
  ASSERT_THAT(grant, IsOk());
  const Fence fence{"scheduler", grant->token};
  ClaimBatch batch;
  batch.watermarks = {{resumed->id, 3, At(15)}, {fresh->id, 1, At(15)}};
  ASSERT_THAT(store->ClaimFires(fence, batch, kForever), IsOk());
  resumed = store->GetJob(JobKey{"default", "resumed"}, kForever);
  ASSERT_THAT(resumed, IsOk());
  EXPECT_EQ(resumed->watermark, At(20));
  fresh = store->GetJob(JobKey{"default", "fresh"}, kForever);
  ASSERT_THAT(fresh, IsOk());
  EXPECT_EQ(fresh->watermark_generation, 1);
  EXPECT_EQ(fresh->watermark, At(15));

  store.reset();
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath(), false);
  ASSERT_THAT(db, IsOk());
  absl::StatusOr<StmtRef> version =
      (*db)->Prepare("SELECT version FROM schema_version");
  ASSERT_THAT(version, IsOk());
  ASSERT_THAT((*version)->Step(), IsOk());
  EXPECT_EQ((*version)->Int(0), kSchemaVersion);
}

TEST_F(SqliteStoreTest, CorruptDatabaseIsReportedAndNotRecreated) {
  MustOpen().reset();
  const std::string garbage(8192, 'x');
  { std::ofstream(DbPath(), std::ios::trunc) << garbage; }
  std::remove((DbPath() + "-wal").c_str());
  std::remove((DbPath() + "-shm").c_str());
  EXPECT_THAT(SqliteStore::Open(Options()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(DbPath())));
  std::ifstream in(DbPath());
  std::string content((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  EXPECT_EQ(content, garbage);
}

// Reads on many threads run on a bounded set of read connections, each
// seeing every write acknowledged before it began, while writes go on.
TEST_F(SqliteStoreTest, ConcurrentReadsShareABoundedSetOfConnections) {
  SqliteStore::Options options = Options();
  options.max_readers = 2;
  absl::StatusOr<std::unique_ptr<SqliteStore>> opened =
      SqliteStore::Open(options);
  ASSERT_THAT(opened, IsOk());
  SqliteStore& store = **opened;
  EXPECT_EQ(store.IdleReadConnectionsForTest(), 2u);
  for (int i = 0; i < 20; ++i) MustPut(store, absl::StrCat("before", i));
  std::atomic<int64_t> acknowledged{20};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) {
      MustPut(store, absl::StrCat("during", i));
      acknowledged.fetch_add(1);
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 6; ++r) {
    readers.emplace_back([&, r] {
      int64_t seen = 0;
      for (int i = 0; i < 60; ++i) {
        const int64_t floor = acknowledged.load();
        absl::StatusOr<StoreInfo> info = store.GetInfo(kForever);
        absl::StatusOr<JobRecord> job = store.GetJob(
            JobKey{"default", absl::StrCat("before", (r + i) % 20)}, kForever);
        if (!info.ok() || !job.ok() || info->jobs < floor ||
            info->jobs < seen || info->jobs > 60) {
          failures.fetch_add(1);
        }
        if (info.ok()) seen = info->jobs;
      }
    });
  }
  writer.join();
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store.IdleReadConnectionsForTest(), 2u);  // every one returned
  absl::StatusOr<StoreInfo> info = store.GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->jobs, 60);
}

// The run listings of the API search an index that also gives their order
// (no sort of the whole history), with the job's key by primary key: every
// job's runs newest first, with and without a state (failed ones, the dead
// letters, through their partial index), and one job's.
TEST_F(SqliteStoreTest, RunListingsSearchAnIndex) {
  MustOpen().reset();
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(DbPath(), false);
  ASSERT_THAT(db, IsOk());
  const auto plan = [&](const RunQuery& query) {
    std::string text;
    absl::StatusOr<StmtRef> stmt =
        (*db)->Prepare("EXPLAIN QUERY PLAN " + ListRunsSql(query));
    EXPECT_THAT(stmt, IsOk());
    if (!stmt.ok()) return text;
    while (true) {
      absl::StatusOr<bool> row = (*stmt)->Step();
      EXPECT_THAT(row, IsOk());
      if (!row.ok() || !*row) return text;
      absl::StrAppend(&text, (*stmt)->Text(3), "\n");
    }
  };
  RunQuery all;
  all.after = RunCursor{At(5), 3};
  const auto searches = [](absl::string_view index) {
    return AllOf(HasSubstr(absl::StrCat("SEARCH runs USING INDEX ", index)),
                 HasSubstr("SEARCH jobs USING INTEGER PRIMARY KEY"),
                 Not(HasSubstr("SCAN runs")), Not(HasSubstr("ORDER BY")));
  };
  EXPECT_THAT(plan(all), searches("runs_by_time"));
  RunQuery failed = all;
  failed.state = RunState::kFailed;
  EXPECT_THAT(plan(failed), searches("runs_failed"));
  RunQuery running = all;
  running.state = RunState::kRunning;
  EXPECT_THAT(plan(running), searches("runs_by_time"));
  // One job's: the claim's index.
  RunQuery job = failed;
  job.job = 1;
  // Without a sort: runs at one time are put in id order by ListRuns.
  EXPECT_THAT(plan(job), AllOf(HasSubstr("SEARCH runs USING INDEX runs_by_fire "
                                         "(job_id=? AND scheduled>?"),
                               Not(HasSubstr("SCAN runs")),
                               Not(HasSubstr("TEMP B-TREE"))));
}

}  // namespace
}  // namespace chime::store
