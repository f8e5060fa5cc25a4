// The fixture of SqliteStore's own tests: a store in a fresh temporary
// directory on a SimulatedClock.
#ifndef CHIME_TESTS_STORE_CONFORMANCE_SQLITE_STORE_FIXTURE_H_
#define CHIME_TESTS_STORE_CONFORMANCE_SQLITE_STORE_FIXTURE_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "src/store/sqlite_store.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::store {

inline constexpr MonoTime kForever = MonoTime::Infinite();

inline absl::Time At(int minutes) {
  return SimulatedClock::DefaultStart() + absl::Minutes(minutes);
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = conformance::MakeTempDir(); }
  void TearDown() override { conformance::RemoveDir(dir_); }

  SqliteStore::Options Options() {
    SqliteStore::Options options;
    options.data_dir = dir_ + "/data";
    options.clock = &clock_;
    return options;
  }
  std::unique_ptr<SqliteStore> MustOpen() {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store =
        SqliteStore::Open(Options());
    EXPECT_THAT(store, ::chime::testing::IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }
  std::string DbPath() { return dir_ + "/data/" + SqliteStore::kDatabaseFile; }
  // Puts job `id` (every minute) into `store`, expecting success.
  static JobRecord MustPut(SqliteStore& store, const std::string& id) {
    JobSpec spec;
    spec.key.id = id;
    spec.trigger.expression = "* * * * *";
    absl::StatusOr<JobRecord> job = store.PutJob(spec, kNoRevision, kForever);
    EXPECT_THAT(job, ::chime::testing::IsOk());
    return job.ok() ? *std::move(job) : JobRecord{};
  }
  // Acquires lease "scheduler" for `holder` for an hour, expecting success.
  static Fence MustAcquire(SqliteStore& store,
                           const std::string& holder = "node-a") {
    absl::StatusOr<LeaseGrant> grant =
        store.AcquireLease("scheduler", holder, absl::Hours(1), kForever);
    EXPECT_THAT(grant, ::chime::testing::IsOk());
    return Fence{"scheduler", grant.ok() ? grant->token : 0};
  }

  SimulatedClock clock_;
  std::string dir_;
};

}  // namespace chime::store

#endif  // CHIME_TESTS_STORE_CONFORMANCE_SQLITE_STORE_FIXTURE_H_
