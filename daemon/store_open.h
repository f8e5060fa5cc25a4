// The daemon's store: the embedded SQLite store in its data directory, or a
// PostgreSQL database that several daemons share (config `store`).
//
// On a shared store one daemon schedules at a time: the one holding the
// store's lease. The others wait as standbys (CreateScheduler below) and one
// of them takes over within about `lease_ttl` of the holder's death or
// isolation; a holder that cannot renew its lease stops (Daemon).
//
// Thread-safety: functions of their arguments.
#ifndef CHIME_DAEMON_STORE_OPEN_H_
#define CHIME_DAEMON_STORE_OPEN_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "daemon/logger.h"
#include "src/config/daemon_config.h"

namespace chime::daemon {

// Whether the configuration names a store other daemons may share.
inline bool SharedStore(const config::DaemonConfig& config) {
  return !config.store.empty();
}

// The node's name: config node_name, else the host's name.
std::string NodeName(const config::DaemonConfig& config);

// The URL other nodes reach this one's API at (config advertise_url, else
// from `listen`: http(s)://<host>:<port>, the node's name for a host that
// means every address); "" when `listen` says port 0 (unknown until the
// listener is up: not advertised).
std::string AdvertiseUrl(const config::DaemonConfig& config,
                         const std::string& node);

// Opens the configured store, logging what it opened. The embedded store
// opens `readers` read connections (SqliteStore::Options::max_readers):
// as many as threads that may read at once, so that no read waits for a
// connection -- the listener's I/O threads read too (a job's run page,
// api::internal::BoundedRunPage), and must never wait behind the pool's
// slow reads.
absl::StatusOr<std::shared_ptr<Store>> OpenStore(
    const config::DaemonConfig& config, Logger& log, size_t readers);

// Scheduler::Create(options); on a shared store held by another daemon (or
// with this node's clock off from the store's, or not answering), waits as a
// standby --
// calling `on_standby` once when it starts waiting (its error ends the
// wait), trying again every second, logging what it waits for -- until this
// daemon gets the lease, or `pause` (which waits up to the duration it is
// given) returns false: then Cancelled.
absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(
    const SchedulerOptions& options, const config::DaemonConfig& config,
    Logger& log, const std::function<bool(absl::Duration)>& pause,
    const std::function<absl::Status()>& on_standby);

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_STORE_OPEN_H_
