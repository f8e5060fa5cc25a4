#include "daemon/store_open.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/driver/recovery.h"
#include "src/store/sqlite_store.h"
#ifdef CHIME_HAVE_POSTGRES
#include "src/store/postgres_store.h"
#endif

namespace chime::daemon {

std::string NodeName(const config::DaemonConfig& config) {
  if (!config.node_name.empty()) return config.node_name;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

std::string AdvertiseUrl(const config::DaemonConfig& config,
                         const std::string& node) {
  if (!config.advertise_url.empty()) return config.advertise_url;
  std::string host;
  int port = 0;
  if (!config::SplitHostPort(config.listen, &host, &port).ok() || port == 0)
    return "";
  if (host.empty() || host == "0.0.0.0" || host == "::") host = node;
  if (absl::StrContains(host, ':')) host = absl::StrCat("[", host, "]");
  return absl::StrCat(config.tls_cert.empty() ? "http" : "https", "://", host,
                      ":", port);
}

#ifdef CHIME_HAVE_POSTGRES
namespace {

// The store records the number of shards its nodes use; a node started with
// another while others run is refused, naming both (docs/cluster.md).
absl::Status AgreeShards(store::PostgresStore& store,
                         const config::DaemonConfig& config, Logger& log) {
  const MonoTime deadline = RealClock::Get().MonoNow() + absl::Seconds(30);
  // Another node runs if it holds a live lease (this node's earlier
  // incarnation, by its name, does not count).
  ASSIGN_OR_RETURN(std::vector<LeaseInfo> leases, store.ListLeases(deadline));
  const std::string self = absl::StrCat(NodeName(config), " pid ");
  bool others = false;
  for (const LeaseInfo& l : leases) {
    others |= !l.holder.empty() && l.remaining > absl::ZeroDuration() &&
              !absl::StartsWith(l.holder, self);
  }
  ASSIGN_OR_RETURN(uint32_t recorded,
                   store.AgreeShards(config.shards, !others, deadline));
  if (recorded == config.shards) return absl::OkStatus();
  if (others) {
    return absl::FailedPreconditionError(absl::StrCat(
        "shards: this node says ", config.shards,
        ", but the nodes running on this store use ", recorded,
        " (recorded in the store): give every node the same `shards`; to "
        "change it, stop every node first"));
  }
  log.Warn("shards changed: no other node runs",
           {{"from", int64_t{recorded}}, {"to", int64_t{config.shards}}});
  return absl::OkStatus();
}

}  // namespace
#endif

absl::StatusOr<std::shared_ptr<Store>> OpenStore(
    const config::DaemonConfig& config, Logger& log, size_t readers) {
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
    RETURN_IF_ERROR(AgreeShards(*store, config, log));
    return std::shared_ptr<Store>(std::move(store));
#else
    return absl::FailedPreconditionError(
        "store: this chime was built without PostgreSQL "
        "(CHIME_WITH_POSTGRES=OFF)");
#endif
  }
  store::SqliteStore::Options options;
  options.data_dir = config.data_dir;
  options.max_readers = readers;
  ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteStore> store,
                   store::SqliteStore::Open(options));
  log.Info("store open",
           {{"data_dir", config.data_dir}, {"epoch", store->epoch()}});
  return std::shared_ptr<Store>(std::move(store));
}

absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(
    const SchedulerOptions& options, const config::DaemonConfig& config,
    Logger& log, const std::function<bool(absl::Duration)>& pause,
    const std::function<absl::Status()>& on_standby) {
  // What the last try's refusal was about (logged when it changes).
  enum class Waiting {
    kNot,
    kHeldElsewhere,
    kClockOff,
    kStoreDown
  } logged = Waiting::kNot;
  for (;;) {
    absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
        Scheduler::Create(options);
    // Another scheduler holds the store's lease, or this node's clock is
    // too far off to take it (driver/recovery.h), or the shared store does
    // not answer (it restarts; the network is down); any other error is
    // final.
    const absl::string_view why = scheduler.status().message();
    const absl::Status& s = scheduler.status();
    const Waiting waiting =
        absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)
            ? Waiting::kStoreDown
        : !absl::IsFailedPrecondition(s) ? Waiting::kNot
        : absl::StartsWith(why, driver::kLeaseHeldElsewhere)
            ? Waiting::kHeldElsewhere
        : absl::StartsWith(why, driver::kClockSkewRefusal) ? Waiting::kClockOff
                                                           : Waiting::kNot;
    if (scheduler.ok() || !SharedStore(config) || waiting == Waiting::kNot) {
      if (scheduler.ok() && logged != Waiting::kNot)
        log.Info("standby: took over the store");
      return scheduler;
    }
    if (logged == Waiting::kNot) RETURN_IF_ERROR(on_standby());
    if (waiting != logged) {
      if (waiting == Waiting::kHeldElsewhere) {
        log.Info(
            "standby: another node schedules on this store; waiting for "
            "its lease",
            {{"detail", std::string(why)}});
      } else if (waiting == Waiting::kStoreDown) {
        log.Warn("standby: the store does not answer; trying again",
                 {{"detail", std::string(why)}});
      } else {
        log.Warn(
            "standby: this node's clock is off from the store's; not "
            "scheduling until it agrees (max_clock_skew)",
            {{"detail", std::string(why)}});
      }
      logged = waiting;
    }
    if (!pause(absl::Seconds(1))) {
      return absl::CancelledError(
          "stopped while waiting as a standby for the store's lease");
    }
  }
}

}  // namespace chime::daemon
