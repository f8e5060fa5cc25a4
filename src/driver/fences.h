// Fences: the lease that fences each job's writes to the store.
//
// A scheduler alone on its store (an embedded store, or the one scheduling
// node of a shared store) writes everything under one lease: Fences(fence).
// A node of a sharded cluster (docs/cluster.md, "Shards: the design") writes a
// job's claims and transitions under the lease of the job's shard
// (cluster::ShardOf of its key), which it holds while it schedules that
// shard's jobs: Fences::Sharded(S), then Hold/Drop as shard leases come and
// go. A write for a job whose shard is not held has no fence: the caller must
// not make one (the driver stops scheduling a shard's jobs, and lets their
// writes finish, before it drops the shard).
//
// Example: with Sharded(64), job "ops/backup" is in shard 16; after
// Hold(16, {"shard/16", 7}), its claims are written under token 7.
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_SRC_DRIVER_FENCES_H_
#define CHIME_SRC_DRIVER_FENCES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "chime/job.h"
#include "chime/store_types.h"

namespace chime::driver {

class Fences {
 public:
  // Every job under `fence` (always held).
  explicit Fences(Fence fence);
  // Jobs hash into `shards` shards, none held yet. REQUIRES: shards >= 1.
  static std::shared_ptr<Fences> Sharded(uint32_t shards);

  Fences(const Fences&) = delete;
  Fences& operator=(const Fences&) = delete;

  bool sharded() const { return sharded_; }
  // The number of shards (1 with a single fence).
  uint32_t shards() const { return shards_; }
  // The shard of job `key` (0 with a single fence).
  uint32_t ShardOf(const JobKey& key) const;
  // The fence of `shard`; nothing while it is not held.
  std::optional<Fence> Get(uint32_t shard) const;

  // Sharded only: `shard` is held under `fence` from now on / no more.
  void Hold(uint32_t shard, Fence fence);
  void Drop(uint32_t shard);
  // The shards held, ascending, with their fences.
  std::vector<std::pair<uint32_t, Fence>> Held() const;

 private:
  Fences(bool sharded, uint32_t shards);

  bool sharded_;
  uint32_t shards_;
  mutable absl::Mutex mu_;
  std::vector<std::optional<Fence>> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_FENCES_H_
