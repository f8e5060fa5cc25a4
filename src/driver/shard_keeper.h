// ShardKeeper: a node's shard leases in a sharded cluster (docs/cluster.md,
// "Shards: the design").
//
// Every `tick` (a third of the ttl) the keeper
//   - renews every shard lease it holds (the renewer thread). A renewal sent
//     at monotonic time s and answered OK proves the lease held until s + ttl
//     by the store's clock; the keeper takes s + ttl - ttl/5 as the shard's
//     local deadline (as LeaseKeeper does for one lease). Past a held shard's
//     deadline, or when a renewal is refused (another holder has the lease),
//     every shard is lost: Valid() is false for all of them from then on and
//     `on_lost` is called once. A watchdog thread reports a deadline that
//     passes while a renewal hangs in the store;
//   - reads the leases (the mover thread): the live members (member leases,
//     kMemberLeasePrefix + name) and each shard lease's holder, and decides
//     with cluster::PlanShardMoves. It acquires the free shards this node
//     owns -- each is renewed from its grant on -- and hands them to
//     `on_gained` (which takes their jobs over, e.g. recovering their runs,
//     and returns once it has); it asks `on_hand_off` to stop scheduling the
//     shards another member owns, and releases each one's lease once the
//     caller says (Released) that its writes are done. Until then the lease
//     is renewed as before.
// A shard lease's holder is this node's `holder` string, the same as its
// member lease's: other nodes tell whose it is from the member leases. The
// keeper does not hold the member lease itself (the caller does, with a
// LeaseKeeper): it only changes anything while it sees this node among the
// live members.
//
// Misconfigured clusters. A member counts only if its holder string says
// the same number of shards (" shards <S>", ShardsOfHolder): a node
// configured with another number (or none) would hash jobs differently, so
// it is left out of the assignment -- it gets no shard from this node's
// point of view -- and reported through on_warning. While a node without
// shards holds the store's one scheduler lease (kSchedulerLease), no shard
// is taken. (Should two nodes still decide one fire, the store's unique
// FireKey lets only one claim it.)
//
// Clean handoffs. A shard whose lease was released (not expired) by its last
// holder, which released it only after every write of its runs was done, has
// no run that started without its record: GainedShard::released says so,
// when nothing could have been granted between the reading and the grant.
//
// Thread-safety: Valid(), Held() and Released() may be called from any
// thread; Start and Stop from one. The callbacks run on the keeper's threads
// and must not call Stop.
#ifndef CHIME_SRC_DRIVER_SHARD_KEEPER_H_
#define CHIME_SRC_DRIVER_SHARD_KEEPER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "chime/store.h"

namespace chime::driver {

// A shard lease just acquired.
struct GainedShard {
  uint32_t shard = 0;
  Fence fence;
  // The lease was released by its last holder just before this grant (see
  // the file comment); false when it expired, was never taken, or cannot be
  // told.
  bool released = false;
  // When the grant was asked for, and the store's time in it.
  MonoTime granted_at;
  absl::Time store_time = absl::InfinitePast();
};

// The number of shards a lease holder string says (" shards <S>"), if any.
std::optional<uint32_t> ShardsOfHolder(absl::string_view holder);

class ShardKeeper {
 public:
  struct Options {
    uint32_t shards = 64;
    std::string member;  // this node's member name
    std::string holder;  // the holder string of this node's leases
    absl::Duration ttl = absl::Seconds(5);
  };
  struct Callbacks {
    // REQUIRED. Takes the shards over; an error gives them back (their leases
    // are released, and acquired again on a later tick).
    std::function<absl::Status(const std::vector<GainedShard>&)> on_gained;
    // REQUIRED. Stop scheduling these shards; call Released for each.
    std::function<void(const std::vector<uint32_t>&)> on_hand_off;
    // Every shard is lost (see the file comment). Called once.
    std::function<void(const absl::Status&)> on_lost;
    // Optional: false takes no shard on this tick (e.g. this node's clock
    // is off from the store's by more than its bound); hand-offs go on.
    std::function<bool()> may_acquire;
    // Optional: a condition an operator must hear of (once per cause).
    std::function<void(const std::string&)> on_warning;
  };

  ShardKeeper(Store& store, Clock& clock, Options options, Callbacks callbacks);
  ~ShardKeeper() { Stop(); }
  ShardKeeper(const ShardKeeper&) = delete;
  ShardKeeper& operator=(const ShardKeeper&) = delete;

  void Start();
  // From now on no shard is taken or handed off (a move under way ends
  // first); the held leases are still renewed. For a node shutting down:
  // its attempts end, and their outcomes are written, under its leases.
  void StopMoving();
  // Stops the threads (StopMoving, then the renewals). Held leases stay held
  // until they expire, unless ReleaseAll. Idempotent.
  void Stop();
  // After Stop: releases every lease still held (the caller's writes under
  // them are done).
  void ReleaseAll();

  // A handed-off shard's writes are done: `clean` -- every write under its
  // lease was accepted -- releases the lease; otherwise it is left to expire
  // (its next holder then treats its runs as a crash's).
  void Released(uint32_t shard, bool clean);

  // Whether `shard` is surely held at `now`.
  bool Valid(uint32_t shard, MonoTime now) const;
  // The shards held (handing off included), ascending.
  std::vector<uint32_t> Held() const;

 private:
  enum class State { kFree, kHeld, kHandingOff, kReleasing };
  struct Shard {
    State state = State::kFree;
    Fence fence;
    bool clean = false;  // kReleasing: release the lease
  };

  void Renew();
  void Watch();
  void Move();
  // One pass of Move: read, decide, acquire, hand off. Returns how soon to
  // look again: a tick, or sooner when a lease held by someone else (a
  // member's or a shard's) expires before then -- a dead node's shards are
  // taken as soon as they are free, not up to a tick later.
  absl::Duration MoveOnce();
  // Releases the leases of shards in kReleasing.
  void ReleaseDone();
  void ReportLost(const absl::Status& why);
  // on_warning(`what`), the first time for `cause`.
  void Warn(const std::string& cause, const std::string& what);
  void SetValidUntil(uint32_t shard, MonoTime t);
  MonoTime ValidUntil(uint32_t shard) const;

  Store& store_;
  Clock& clock_;
  const Options options_;
  const Callbacks callbacks_;
  const absl::Duration margin_;
  // By shard: the local deadline in nanoseconds since the monotonic origin
  // (0: not held, or lost).
  std::unique_ptr<std::atomic<int64_t>[]> valid_until_ns_;
  // The deadline of the renewal in flight (0: none), for Watch.
  std::atomic<int64_t> renewal_deadline_ns_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Shard> shards_;     // guarded by mu_
  bool stop_ = false;             // guarded by mu_
  bool stop_moving_ = false;      // guarded by mu_
  bool lost_ = false;             // guarded by mu_
  bool released_ = false;         // guarded by mu_: a Released() to act on
  std::set<std::string> warned_;  // mover thread only: on_warning's causes
  std::thread renewer_;
  std::thread watchdog_;
  std::thread mover_;
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_SHARD_KEEPER_H_
