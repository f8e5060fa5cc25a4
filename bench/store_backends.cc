#include "bench/store_backends.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/sqlite_store.h"

#ifdef CHIME_WITH_POSTGRES
#include "src/store/postgres_store.h"
#include "testing/postgres_server.h"
#endif

namespace chime::bench {
namespace {

class SqliteBackend final : public StoreBackend {
 public:
  explicit SqliteBackend(std::string dir) : dir_(std::move(dir)) {}
  ~SqliteBackend() override { RemoveLastRun(); }

  std::string Describe() const override {
    return absl::StrCat("SqliteStore, a new directory under ", dir_,
                        " per run");
  }

  absl::StatusOr<std::unique_ptr<Store>> OpenFresh(Durability durability,
                                                   int writers) override {
    RemoveLastRun();  // the previous run's store is closed by now
    store::SqliteStore::Options options;
    options.data_dir = last_run_ = absl::StrCat(dir_, "/run-", runs_++);
    options.durability = durability == Durability::kSynced
                             ? store::SqliteStore::Durability::kSynced
                             : store::SqliteStore::Durability::kRelaxed;
    ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteStore> store,
                     store::SqliteStore::Open(options));
    return store;
  }

  std::optional<int64_t> Commits(Store& store) override {
    return static_cast<store::SqliteStore&>(store).CommittedTransactions();
  }

 private:
  void RemoveLastRun() {
    if (last_run_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(last_run_, ec);
    last_run_.clear();
  }

  const std::string dir_;
  std::string last_run_;
  int runs_ = 0;
};

#ifdef CHIME_WITH_POSTGRES

class PostgresBackend final : public StoreBackend {
 public:
  PostgresBackend(std::unique_ptr<testing::PostgresServer> server,
                  std::string conninfo)
      : server_(std::move(server)), conninfo_(std::move(conninfo)) {}

  std::string Describe() const override {
    if (server_ == nullptr) {
      return absl::StrCat("PostgresStore on ", conninfo_,
                          " (one database for every run)");
    }
    return absl::StrCat("PostgresStore on a PostgreSQL server started in ",
                        server_->dir(),
                        " (fsync on, a new database per run, removed at exit)");
  }

  absl::StatusOr<std::unique_ptr<Store>> OpenFresh(Durability durability,
                                                   int writers) override {
    std::string conninfo = conninfo_;
    if (server_ != nullptr) {
      ASSIGN_OR_RETURN(conninfo, server_->CreateDatabase());
    }
    store::PostgresStore::Options options;
    // Keywords later in a conninfo override earlier ones; a URL cannot take
    // more keywords, so the option is then passed as a URL parameter.
    const bool url = conninfo.find("://") != std::string::npos;
    if (durability == Durability::kRelaxed) {
      absl::StrAppend(
          &conninfo,
          url ? (conninfo.find('?') == std::string::npos ? "?" : "&") : " ",
          url ? "options=-csynchronous_commit%3Doff"
              : "options='-csynchronous_commit=off'");
    }
    options.conninfo = std::move(conninfo);
    options.pool_size = writers;
    ASSIGN_OR_RETURN(std::unique_ptr<store::PostgresStore> store,
                     store::PostgresStore::Open(options));
    return store;
  }

  std::optional<int64_t> Commits(Store&) override { return std::nullopt; }

 private:
  std::unique_ptr<testing::PostgresServer> server_;  // null: conninfo_ given
  const std::string conninfo_;
};

#endif  // CHIME_WITH_POSTGRES

}  // namespace

std::unique_ptr<StoreBackend> MakeSqliteBackend(std::string dir) {
  return std::make_unique<SqliteBackend>(std::move(dir));
}

absl::StatusOr<std::unique_ptr<StoreBackend>> MakePostgresBackend(
    std::string conninfo) {
#ifdef CHIME_WITH_POSTGRES
  std::unique_ptr<testing::PostgresServer> server;
  if (conninfo.empty()) {
    ASSIGN_OR_RETURN(server, testing::PostgresServer::Start());
  }
  return std::make_unique<PostgresBackend>(std::move(server),
                                           std::move(conninfo));
#else
  return absl::UnimplementedError(
      "--store postgres: chime was built with CHIME_WITH_POSTGRES=OFF");
#endif
}

}  // namespace chime::bench
