// The stores `chime-bench store` measures (store_workload.cc): SqliteStore in a
// directory of its own, or PostgresStore on a PostgreSQL server -- one the
// benchmark starts (testing::PostgresServer, fsync on) or one named by a
// conninfo. Every run gets a fresh, empty store: a new SQLite directory, a new
// database on the benchmark's own server. On a server named by conninfo the
// runs share the database; the workload keeps them apart by giving each run
// its own jobs and RunIds.
//
// Durability, the same promise in both backends: kSynced acknowledges a write
// once it is flushed to disk (SQLite synchronous=FULL; PostgreSQL
// synchronous_commit=on, its default); kRelaxed may lose the last
// acknowledged writes in a power failure or kernel crash (SQLite
// synchronous=NORMAL; PostgreSQL synchronous_commit=off, set per connection).
//
// Thread-safety: a backend is driven by one thread; the stores it opens are
// thread-safe.
#ifndef CHIME_BENCH_STORE_BACKENDS_H_
#define CHIME_BENCH_STORE_BACKENDS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "chime/store.h"

namespace chime::bench {

enum class Durability { kSynced, kRelaxed };

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;

  // What is measured, for the report's header.
  virtual std::string Describe() const = 0;
  // A fresh store for one run, with connections (or threads) enough for
  // `writers` concurrent callers.
  virtual absl::StatusOr<std::unique_ptr<Store>> OpenFresh(
      Durability durability, int writers) = 0;
  // Transactions `store` (opened here) committed so far; nullopt when every
  // call is its own transaction (no group commit).
  virtual std::optional<int64_t> Commits(Store& store) = 0;
};

// SqliteStore, each run in a new subdirectory of `dir` (removed after it).
std::unique_ptr<StoreBackend> MakeSqliteBackend(std::string dir);

// PostgresStore. An empty `conninfo` starts a PostgreSQL 15 server in a
// temporary directory (stopped and removed when the backend is destroyed;
// NotFound if PostgreSQL is not installed) and gives each run a new database.
// Unimplemented when chime was built without PostgreSQL.
absl::StatusOr<std::unique_ptr<StoreBackend>> MakePostgresBackend(
    std::string conninfo);

}  // namespace chime::bench

#endif  // CHIME_BENCH_STORE_BACKENDS_H_
