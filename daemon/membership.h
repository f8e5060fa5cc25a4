// Membership: on a shared store every daemon -- the scheduler and the
// standbys alike -- holds a lease of its own, kMemberLeasePrefix + node_name,
// renewed every third of lease_ttl, so that the cluster knows which nodes are
// alive (GET /v1/cluster; the shards of a later step are assigned among them).
// A node that dies drops out when its lease expires by the store's clock.
// Losing the lease (the store unreachable for longer than the ttl) is not
// fatal to a member: it acquires it again when it can, under a new epoch.
// A name held by another live process is waited for (logged once): two
// daemons must not share a node_name. Each grant and renewal also measures
// this node's clock against the store's (src/driver/clock_offset.h), on
// standbys too.
//
//   Membership m(store, "node-1", "node-1 pid 42", absl::Seconds(5), log);
//   m.Start();
//   ...
//   m.Stop();  // releases the lease: the node leaves at once
//
// Thread-safety: Start and Stop from one thread; held() from any.
#ifndef CHIME_DAEMON_MEMBERSHIP_H_
#define CHIME_DAEMON_MEMBERSHIP_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/store.h"
#include "daemon/logger.h"

namespace chime::daemon {

class Membership {
 public:
  // `store` and `log` must outlive the Membership. REQUIRES: ttl positive.
  Membership(Store& store, std::string node, std::string holder,
             absl::Duration ttl, Logger& log);
  ~Membership() { Stop(); }
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  void Start();
  // Stops renewing and releases the lease. Idempotent.
  void Stop();

  // Whether the last acquire or renewal succeeded.
  bool held() const { return held_.load(); }
  // The store's clock minus this node's, at the last grant or renewal.
  std::optional<absl::Duration> clock_offset() const {
    std::lock_guard<std::mutex> lock(mu_);
    return offset_;
  }

 private:
  void Run();

  Store& store_;
  const std::string lease_;
  const std::string holder_;
  const absl::Duration ttl_;
  Logger& log_;
  std::atomic<bool> held_{false};
  Fence fence_;  // the keeper thread's, then Stop's
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                     // guarded by mu_
  std::optional<absl::Duration> offset_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_MEMBERSHIP_H_
