#include "src/driver/shard_keeper.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/base/thread_name.h"
#include "src/cluster/shard_moves.h"
#include "src/cluster/shards.h"

namespace chime::driver {
namespace {

// Store calls other than renewals (listing, acquiring, releasing) get this
// long.
constexpr absl::Duration kStoreCallTimeout = absl::Seconds(10);
// How long after a lease's expiry by the store's clock the mover looks.
constexpr absl::Duration kAfterExpiry = absl::Milliseconds(20);

}  // namespace

std::optional<uint32_t> ShardsOfHolder(absl::string_view holder) {
  const size_t at = holder.find(" shards ");
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = holder.substr(at + 8);
  rest = rest.substr(0, rest.find(' '));
  uint32_t shards = 0;
  if (!absl::SimpleAtoi(rest, &shards)) return std::nullopt;
  return shards;
}

void ShardKeeper::Warn(const std::string& cause, const std::string& what) {
  if (!warned_.insert(cause).second || !callbacks_.on_warning) return;
  callbacks_.on_warning(what);
}

ShardKeeper::ShardKeeper(Store& store, Clock& clock, Options options,
                         Callbacks callbacks)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      margin_(options_.ttl / 5),
      valid_until_ns_(new std::atomic<int64_t>[options_.shards]),
      shards_(options_.shards) {
  for (uint32_t s = 0; s < options_.shards; ++s) valid_until_ns_[s] = 0;
}

void ShardKeeper::Start() {
  if (mover_.joinable()) return;
  renewer_ = base::NamedThread("chime-shrenew", [this] { Renew(); });
  watchdog_ = base::NamedThread("chime-shwatch", [this] { Watch(); });
  mover_ = base::NamedThread("chime-shmove", [this] { Move(); });
}

void ShardKeeper::StopMoving() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_moving_ = true;
  }
  cv_.notify_all();
  if (mover_.joinable()) mover_.join();
}

void ShardKeeper::Stop() {
  StopMoving();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread* t : {&watchdog_, &renewer_}) {
    if (t->joinable()) t->join();
  }
}

void ShardKeeper::ReleaseAll() {
  std::vector<Fence> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t s = 0; s < shards_.size(); ++s) {
      if (shards_[s].state == State::kFree) continue;
      held.push_back(shards_[s].fence);
      shards_[s].state = State::kFree;
      SetValidUntil(s, MonoTime());
    }
  }
  for (const Fence& fence : held)
    (void)store_.ReleaseLease(fence, clock_.MonoNow() + kStoreCallTimeout);
}

void ShardKeeper::Released(uint32_t shard, bool clean) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shard >= shards_.size() || shards_[shard].state != State::kHandingOff)
      return;
    shards_[shard].state = State::kReleasing;
    shards_[shard].clean = clean;
    released_ = true;
  }
  cv_.notify_all();
}

bool ShardKeeper::Valid(uint32_t shard, MonoTime now) const {
  return shard < options_.shards && now < ValidUntil(shard);
}

std::vector<uint32_t> ShardKeeper::Held() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint32_t> held;
  for (uint32_t s = 0; s < shards_.size(); ++s) {
    if (shards_[s].state != State::kFree) held.push_back(s);
  }
  return held;
}

void ShardKeeper::SetValidUntil(uint32_t shard, MonoTime t) {
  valid_until_ns_[shard].store(absl::ToInt64Nanoseconds(t.SinceOrigin()),
                               std::memory_order_release);
}

MonoTime ShardKeeper::ValidUntil(uint32_t shard) const {
  return MonoTime::FromSinceOrigin(absl::Nanoseconds(
      valid_until_ns_[shard].load(std::memory_order_acquire)));
}

void ShardKeeper::ReportLost(const absl::Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_) return;
    lost_ = true;
    for (uint32_t s = 0; s < options_.shards; ++s) SetValidUntil(s, MonoTime());
  }
  cv_.notify_all();
  if (callbacks_.on_lost) callbacks_.on_lost(why);
}

void ShardKeeper::Renew() {
  const absl::Duration period = options_.ttl / 3;
  for (;;) {
    std::vector<std::pair<uint32_t, Fence>> held;
    {
      // Real time: the renewals must keep pace with the store's clock,
      // which a simulated clock does not drive.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, absl::ToChronoNanoseconds(period),
                   [this] { return stop_ || lost_; });
      if (stop_ || lost_) return;
      for (uint32_t s = 0; s < shards_.size(); ++s) {
        if (shards_[s].state != State::kFree)
          held.emplace_back(s, shards_[s].fence);
      }
    }
    if (held.empty()) continue;
    // Every held lease in one call (one transaction on PostgreSQL): a node
    // holding many shards renews them in the time of one.
    const MonoTime sent = clock_.MonoNow();
    std::vector<Fence> fences;
    for (const auto& [shard, fence] : held) {
      if (!Valid(shard, sent)) {
        return ReportLost(absl::UnavailableError(
            absl::StrCat("lost the store's lease \"", fence.lease, "\" (token ",
                         fence.token, "): not renewed within its ttl of ",
                         absl::FormatDuration(options_.ttl))));
      }
      fences.push_back(fence);
    }
    renewal_deadline_ns_.store(
        absl::ToInt64Nanoseconds((sent + period).SinceOrigin()),
        std::memory_order_release);
    absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>> renewed =
        store_.RenewLeases(fences, options_.ttl, sent + period);
    renewal_deadline_ns_.store(0, std::memory_order_release);
    if (!renewed.ok() || renewed->size() != held.size()) continue;
    std::optional<absl::Status> refused;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < held.size() && !lost_; ++i) {
        const auto& [shard, fence] = held[i];
        if (shards_[shard].state == State::kFree ||
            shards_[shard].fence.token != fence.token) {
          continue;  // released meanwhile
        }
        const absl::StatusOr<LeaseGrant>& grant = (*renewed)[i];
        if (grant.ok()) {
          SetValidUntil(shard, sent + options_.ttl - margin_);
        } else if (absl::IsFailedPrecondition(grant.status()) && !refused) {
          // Another holder has it: no later renewal can succeed.
          refused = absl::FailedPreconditionError(absl::StrCat(
              "lost the store's lease \"", fence.lease, "\" (token ",
              fence.token, "): ", grant.status().message()));
        }
      }
    }
    if (refused.has_value()) return ReportLost(*refused);
  }
}

void ShardKeeper::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_ && !lost_) {
    const MonoTime now = clock_.MonoNow();
    // A renewal sent before the deadline may still answer OK until its own
    // deadline (Renew decides then); past both, it hangs.
    const MonoTime renewal = MonoTime::FromSinceOrigin(absl::Nanoseconds(
        renewal_deadline_ns_.load(std::memory_order_acquire)));
    MonoTime until = MonoTime::Infinite();
    uint32_t first = 0;
    for (uint32_t s = 0; s < shards_.size(); ++s) {
      if (shards_[s].state == State::kFree) continue;
      const MonoTime t = std::max(ValidUntil(s), renewal);
      if (t < until) {
        until = t;
        first = s;
      }
    }
    if (now >= until) {
      const Fence fence = shards_[first].fence;
      lock.unlock();
      ReportLost(absl::UnavailableError(
          absl::StrCat("lost the store's lease \"", fence.lease, "\" (token ",
                       fence.token, "): not renewed within its ttl of ",
                       absl::FormatDuration(options_.ttl),
                       "; a renewal is still waiting for the store")));
      return;
    }
    // Real time, as Renew's waits; wake at least every tick to see shards
    // acquired meanwhile.
    cv_.wait_for(lock, absl::ToChronoNanoseconds(
                           std::min(until - now, options_.ttl / 3)));
  }
}

void ShardKeeper::Move() {
  // The first pass at once, each next when the last one said.
  for (absl::Duration next = absl::ZeroDuration();;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, absl::ToChronoNanoseconds(next),
                   [this] { return stop_moving_ || lost_ || released_; });
      if (stop_moving_ || lost_) return;
      const bool released = released_;
      released_ = false;
      if (released) {
        lock.unlock();
        ReleaseDone();
        continue;
      }
    }
    next = MoveOnce();
  }
}

void ShardKeeper::ReleaseDone() {
  std::vector<Fence> release;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t s = 0; s < shards_.size(); ++s) {
      Shard& shard = shards_[s];
      if (shard.state != State::kReleasing) continue;
      shard.state = State::kFree;
      SetValidUntil(s, MonoTime());
      if (shard.clean) release.push_back(shard.fence);
    }
  }
  // A lease not released (a write under it failed) expires in its ttl.
  for (const Fence& fence : release)
    (void)store_.ReleaseLease(fence, clock_.MonoNow() + kStoreCallTimeout);
}

absl::Duration ShardKeeper::MoveOnce() {
  const absl::Duration tick = options_.ttl / 3;
  const MonoTime listed = clock_.MonoNow();
  absl::StatusOr<std::vector<LeaseInfo>> leases =
      store_.ListLeases(listed + kStoreCallTimeout);
  if (!leases.ok()) return tick;  // the next tick tries again
  // The first expiry of a lease someone else holds, then a little: the
  // store's clock is read at the listing, ours measures from there.
  absl::Duration first_expiry = absl::InfiniteDuration();
  for (const LeaseInfo& l : *leases) {
    if (l.holder.empty() || l.holder == options_.holder ||
        l.remaining <= absl::ZeroDuration()) {
      continue;
    }
    first_expiry = std::min(first_expiry, l.remaining);
  }
  const absl::Duration next = std::max(
      std::min(tick, first_expiry + kAfterExpiry - (clock_.MonoNow() - listed)),
      kAfterExpiry);
  cluster::ShardView view;
  view.self = options_.member;
  view.holders.resize(options_.shards);
  absl::flat_hash_map<std::string, std::string> member_of;  // holder -> name
  bool unsharded_scheduler = false;
  for (const LeaseInfo& l : *leases) {
    if (l.holder.empty() || l.remaining <= absl::ZeroDuration()) continue;
    if (l.name == kSchedulerLease) unsharded_scheduler = true;
    if (!absl::StartsWith(l.name, kMemberLeasePrefix)) continue;
    std::string name(l.name.substr(kMemberLeasePrefix.size()));
    member_of[l.holder] = name;
    if (ShardsOfHolder(l.holder) != options_.shards) {
      // Hashes jobs otherwise: not a member of this assignment.
      Warn(name, absl::StrCat(
                     "node ", name, " (", l.holder,
                     ") does not run with shards ", options_.shards,
                     " as this one does: it gets no shard; give every node of "
                     "the store the same `shards`"));
      continue;
    }
    view.members.push_back(std::move(name));
  }
  std::vector<bool> released(options_.shards, false);
  for (const LeaseInfo& l : *leases) {
    uint32_t shard = 0;
    if (!absl::StartsWith(l.name, kShardLeasePrefix) ||
        !absl::SimpleAtoi(l.name.substr(kShardLeasePrefix.size()), &shard) ||
        shard >= options_.shards) {
      continue;
    }
    if (l.holder.empty()) {
      released[shard] = true;
      continue;
    }
    if (l.remaining <= absl::ZeroDuration()) continue;  // expired: free
    // A holder that is no live member still holds the lease until it
    // expires.
    auto it = member_of.find(l.holder);
    view.holders[shard] = it != member_of.end() ? it->second : l.holder;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t s = 0; s < shards_.size(); ++s) {
      if (shards_[s].state != State::kFree) view.holders[s] = options_.member;
    }
  }
  cluster::ShardMoves moves = cluster::PlanShardMoves(view);
  if (unsharded_scheduler && !moves.acquire.empty()) {
    Warn(std::string(kSchedulerLease),
         "a node without shards holds the store's scheduler lease: taking no "
         "shard while it does (give every node of the store the same "
         "`shards`)");
    moves.acquire.clear();
  }
  if (callbacks_.may_acquire && !moves.acquire.empty() &&
      !callbacks_.may_acquire()) {
    moves.acquire.clear();
  }

  std::vector<GainedShard> gained;
  for (uint32_t shard : moves.acquire) {
    const MonoTime sent = clock_.MonoNow();
    absl::StatusOr<LeaseGrant> grant =
        store_.AcquireLease(cluster::ShardLease(shard), options_.holder,
                            options_.ttl, sent + kStoreCallTimeout);
    if (!grant.ok()) continue;  // taken meanwhile, or the store is down
    GainedShard g;
    g.shard = shard;
    g.fence = Fence{cluster::ShardLease(shard), grant->token};
    // Nothing else can have been granted and have expired since the
    // listing if less than a ttl has passed.
    g.released = released[shard] && clock_.MonoNow() - listed < options_.ttl;
    g.granted_at = sent;
    g.store_time = grant->store_time;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (lost_ || stop_moving_) {
        gained.push_back(g);  // released below
        break;
      }
      shards_[shard].state = State::kHeld;
      shards_[shard].fence = g.fence;
      SetValidUntil(shard, sent + options_.ttl - margin_);
    }
    gained.push_back(std::move(g));
  }
  if (!gained.empty()) {
    absl::Status taken = absl::CancelledError("stopping");
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!lost_ && !stop_moving_) taken = absl::OkStatus();
    }
    if (taken.ok()) taken = callbacks_.on_gained(gained);
    if (!taken.ok()) {
      // Given back: nothing was scheduled under them.
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const GainedShard& g : gained) {
          shards_[g.shard].state = State::kFree;
          SetValidUntil(g.shard, MonoTime());
        }
      }
      for (const GainedShard& g : gained)
        (void)store_.ReleaseLease(g.fence,
                                  clock_.MonoNow() + kStoreCallTimeout);
    }
  }

  std::vector<uint32_t> hand_off;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t shard : moves.hand_off) {
      if (shards_[shard].state != State::kHeld) continue;
      shards_[shard].state = State::kHandingOff;
      hand_off.push_back(shard);
    }
  }
  if (!hand_off.empty()) callbacks_.on_hand_off(hand_off);
  return next;
}

}  // namespace chime::driver
