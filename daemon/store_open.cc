#include "daemon/store_open.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/sqlite_store.h"
#ifdef CHIME_HAVE_POSTGRES
#include "src/store/postgres_store.h"
#endif

namespace chime::daemon {

absl::StatusOr<std::shared_ptr<Store>> OpenStore(
    const config::DaemonConfig& config, Logger& log) {
  if (SharedStore(config)) {
#ifdef CHIME_HAVE_POSTGRES
    store::PostgresStore::Options options;
    options.conninfo = config.store;
    ASSIGN_OR_RETURN(
        std::unique_ptr<store::PostgresStore> store,
        store::PostgresStore::Open(
            options, RealClock::Get().MonoNow() + absl::Seconds(60)));
    log.Info("store open",
             {{"store", "postgresql"},
              {"lease_ttl", absl::FormatDuration(config.lease_ttl)}});
    return std::shared_ptr<Store>(std::move(store));
#else
    return absl::FailedPreconditionError(
        "store: this chime was built without PostgreSQL "
        "(CHIME_WITH_POSTGRES=OFF)");
#endif
  }
  store::SqliteStore::Options options;
  options.data_dir = config.data_dir;
  ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteStore> store,
                   store::SqliteStore::Open(options));
  log.Info("store open",
           {{"data_dir", config.data_dir}, {"epoch", store->epoch()}});
  return std::shared_ptr<Store>(std::move(store));
}

absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(
    const SchedulerOptions& options, const config::DaemonConfig& config,
    Logger& log, const std::function<bool(absl::Duration)>& pause) {
  for (bool logged = false;;) {
    absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
        Scheduler::Create(options);
    // Another scheduler holds the store's lease (driver/recovery.cc); any
    // other error is final.
    const bool held_elsewhere =
        absl::IsFailedPrecondition(scheduler.status()) &&
        absl::StartsWith(scheduler.status().message(),
                         "another scheduler holds the store's lease");
    if (scheduler.ok() || !SharedStore(config) || !held_elsewhere) {
      if (scheduler.ok() && logged) log.Info("standby: took over the store");
      return scheduler;
    }
    if (!logged) {
      log.Info(
          "standby: another node schedules on this store; waiting for "
          "its lease",
          {{"detail", std::string(scheduler.status().message())}});
      logged = true;
    }
    if (!pause(absl::Seconds(1))) {
      return absl::CancelledError(
          "stopped while waiting as a standby for the store's lease");
    }
  }
}

}  // namespace chime::daemon
