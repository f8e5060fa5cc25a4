#include "tests/store_conformance/store_conformance.h"

#include <stdlib.h>

#include <filesystem>

#include "src/store/memory_store.h"
#include "src/store/sqlite_store.h"
#include "testing/fault_injection_store.h"
#include "testing/status_matchers.h"
#ifdef CHIME_WITH_POSTGRES
#include "src/store/postgres_store.h"
#include "testing/postgres_server.h"
#endif

namespace chime::conformance {

using ::chime::testing::IsOk;

#ifdef CHIME_WITH_POSTGRES
absl::StatusOr<std::string> FreshPostgresDatabase() {
  // Started once, by the first test that needs it, on the main thread (gtest
  // runs tests there), and stopped by the static's destructor at exit.
  static absl::StatusOr<std::unique_ptr<testing::PostgresServer>>* server =
      new absl::StatusOr<std::unique_ptr<testing::PostgresServer>>(
          testing::PostgresServer::Start());
  static struct StopAtExit {
    ~StopAtExit() { delete server; }
  } stop_at_exit;
  if (!server->ok()) return server->status();
  return (**server)->CreateDatabase();
}
#endif

std::vector<StoreFactory> AllStores() {
  return {
      {"Memory",
       [](const std::string&,
          Clock& clock) -> absl::StatusOr<std::unique_ptr<Store>> {
         return std::make_unique<store::MemoryStore>(
             store::MemoryStore::Options{&clock, kMaxOutputBytes});
       }},
      {"Sqlite",
       [](const std::string& dir,
          Clock& clock) -> absl::StatusOr<std::unique_ptr<Store>> {
         store::SqliteStore::Options options;
         options.data_dir = dir + "/data";
         options.clock = &clock;
         options.max_output_bytes = kMaxOutputBytes;
         auto store = store::SqliteStore::Open(options);
         if (!store.ok()) return store.status();
         return std::unique_ptr<Store>(*std::move(store));
       }},
      {"FaultInjectionOverMemory",
       [](const std::string&,
          Clock& clock) -> absl::StatusOr<std::unique_ptr<Store>> {
         return std::make_unique<testing::FaultInjectionStore>(
             std::make_unique<store::MemoryStore>(
                 store::MemoryStore::Options{&clock, kMaxOutputBytes}));
       }},
#ifdef CHIME_WITH_POSTGRES
      {"Postgres",
       [](const std::string&,
          Clock& clock) -> absl::StatusOr<std::unique_ptr<Store>> {
         absl::StatusOr<std::string> conninfo = FreshPostgresDatabase();
         if (!conninfo.ok()) return conninfo.status();
         store::PostgresStore::Options options;
         options.conninfo = *conninfo;
         options.clock = &clock;
         options.max_output_bytes = kMaxOutputBytes;
         auto store = store::PostgresStore::Open(options);
         if (!store.ok()) return store.status();
         return std::unique_ptr<Store>(*std::move(store));
       }},
#endif
  };
}

std::string MakeTempDir() {
  std::string pattern = ::testing::TempDir() + "chime-store-XXXXXX";
  char* dir = ::mkdtemp(pattern.data());
  if (dir == nullptr) {
    ADD_FAILURE() << "mkdtemp failed for " << pattern;
    return {};
  }
  return dir;
}

void RemoveDir(const std::string& dir) {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

void StoreConformance::SetUp() {
  dir_ = MakeTempDir();
  absl::StatusOr<std::unique_ptr<Store>> store = GetParam().make(dir_, clock_);
  ASSERT_THAT(store, IsOk());
  store_ = *std::move(store);
}

void StoreConformance::TearDown() {
  store_.reset();
  RemoveDir(dir_);
}

JobSpec StoreConformance::Spec(const std::string& id, const std::string& expr) {
  JobSpec spec;
  spec.key.id = id;
  spec.trigger.expression = expr;
  return spec;
}

JobRecord StoreConformance::MustPut(const std::string& id,
                                    const std::string& expr) {
  absl::StatusOr<JobRecord> job =
      store().PutJob(Spec(id, expr), kAnyRevision, kForever);
  EXPECT_THAT(job, IsOk());
  return job.ok() ? *job : JobRecord{};
}

Fence StoreConformance::MustAcquire(const std::string& lease,
                                    const std::string& holder) {
  absl::StatusOr<LeaseGrant> grant =
      store().AcquireLease(lease, holder, absl::Minutes(1), kForever);
  EXPECT_THAT(grant, IsOk());
  return Fence{lease, grant.ok() ? grant->token : 0};
}

void StoreConformance::MustClaim(const Fence& fence, const JobRecord& job,
                                 int minute, RunId run) {
  ClaimBatch batch;
  batch.claims.push_back(Claim(job, minute, run));
  batch.at = At(minute);
  EXPECT_THAT(store().ClaimFires(fence, batch, kForever), IsOk());
}

void StoreConformance::MustFinish(const Fence& fence, RunId run, int minute,
                                  RunState final_state) {
  std::vector<RunTransition> steps = {
      Step(run, RunState::kPending, RunState::kRunning, 1, minute),
      Step(run, RunState::kRunning, final_state, 1, minute, "done")};
  EXPECT_THAT(store().TransitionRuns(fence, steps, kForever), IsOk());
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreConformance,
                         ::testing::ValuesIn(AllStores()),
                         [](const auto& info) { return info.param.name; });

}  // namespace chime::conformance
