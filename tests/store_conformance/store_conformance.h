// The store conformance suite: one set of tests that every chime::Store
// implementation must pass (ARCHITECTURE.md section 5). Each TEST_P in this
// directory runs once per backend listed by AllStores(): MemoryStore (the
// reference), SqliteStore on a real file in a temporary directory, a
// FaultInjectionStore with no faults armed (it must be transparent), and
// (built with CHIME_WITH_POSTGRES) PostgresStore on a real PostgreSQL 15
// server, a fresh database per test.
//
// A new backend is added to AllStores() (store_factories.cc) and must pass
// everything here unchanged.
#ifndef CHIME_TESTS_STORE_CONFORMANCE_STORE_CONFORMANCE_H_
#define CHIME_TESTS_STORE_CONFORMANCE_STORE_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "chime/store.h"
#include "gtest/gtest.h"
#include "testing/simulated_clock.h"

namespace chime::conformance {

// Every backend keeps this much output per attempt, so the suite can test the
// bound.
inline constexpr size_t kMaxOutputBytes = 1024;

struct StoreFactory {
  std::string name;
  // A store in `dir` (a fresh, empty directory) on `clock`.
  std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string& dir,
                                                       Clock& clock)>
      make;
  friend std::ostream& operator<<(std::ostream& os, const StoreFactory& f) {
    return os << f.name;
  }
};
std::vector<StoreFactory> AllStores();

#ifdef CHIME_WITH_POSTGRES
// The conninfo of a new, empty database on the test process's one PostgreSQL
// server, started on first use (testing::PostgresServer) and stopped at exit.
// Unavailable or NotFound (saying to run scripts/install-deps.sh) if the
// server cannot be started; every later call answers the same.
absl::StatusOr<std::string> FreshPostgresDatabase();
#endif

// A fresh, empty directory under the test temp dir; removed by the fixture.
std::string MakeTempDir();
void RemoveDir(const std::string& dir);

class StoreConformance : public ::testing::TestWithParam<StoreFactory> {
 public:
  // The wall time `minutes` after the suite's epoch (2026-01-01T00:00:00Z).
  static absl::Time At(int minutes) {
    return SimulatedClock::DefaultStart() + absl::Minutes(minutes);
  }

 protected:
  static constexpr MonoTime kForever = MonoTime::Infinite();

  void SetUp() override;
  void TearDown() override;

  Store& store() { return *store_; }
  static JobSpec Spec(const std::string& id,
                      const std::string& expr = "*/5 * * * *");
  // Puts a job (asserting success) and returns its record.
  JobRecord MustPut(const std::string& id,
                    const std::string& expr = "*/5 * * * *");
  // Acquires `lease` for `holder` (ttl 1 minute), asserting success.
  Fence MustAcquire(const std::string& lease = "scheduler",
                    const std::string& holder = "node-a");
  static FireClaim Claim(const JobRecord& job, int minute, RunId run) {
    return FireClaim{FireRef{job.id, job.generation, At(minute)}, run};
  }
  // Claims one fire (asserting success) and returns the batch's status.
  void MustClaim(const Fence& fence, const JobRecord& job, int minute,
                 RunId run);
  RunTransition Step(RunId run, RunState from, RunState to, int attempt,
                     int minute, std::string detail = "") {
    RunTransition t;
    t.run = run;
    t.from = from;
    t.to = to;
    t.attempt = attempt;
    t.at = At(minute);
    t.detail = std::move(detail);
    return t;
  }
  // Takes run `run` (claimed) to a final state, in one batch.
  void MustFinish(const Fence& fence, RunId run, int minute,
                  RunState final_state = RunState::kSucceeded);

  SimulatedClock clock_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace chime::conformance

#endif  // CHIME_TESTS_STORE_CONFORMANCE_STORE_CONFORMANCE_H_
