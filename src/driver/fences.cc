#include "src/driver/fences.h"

#include <utility>

#include "src/cluster/shards.h"

namespace chime::driver {

Fences::Fences(bool sharded, uint32_t shards)
    : sharded_(sharded), shards_(shards), held_(shards) {}

Fences::Fences(Fence fence) : Fences(false, 1) { held_[0] = std::move(fence); }

std::shared_ptr<Fences> Fences::Sharded(uint32_t shards) {
  return std::shared_ptr<Fences>(new Fences(true, shards));
}

uint32_t Fences::ShardOf(const JobKey& key) const {
  return sharded_ ? cluster::ShardOf(key, shards_) : 0;
}

std::optional<Fence> Fences::Get(uint32_t shard) const {
  absl::MutexLock lock(&mu_);
  if (shard >= held_.size()) return std::nullopt;
  return held_[shard];
}

void Fences::Hold(uint32_t shard, Fence fence) {
  absl::MutexLock lock(&mu_);
  if (sharded_ && shard < held_.size()) held_[shard] = std::move(fence);
}

void Fences::Drop(uint32_t shard) {
  absl::MutexLock lock(&mu_);
  if (sharded_ && shard < held_.size()) held_[shard].reset();
}

std::vector<std::pair<uint32_t, Fence>> Fences::Held() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<uint32_t, Fence>> held;
  for (uint32_t s = 0; s < held_.size(); ++s) {
    if (held_[s].has_value()) held.emplace_back(s, *held_[s]);
  }
  return held;
}

}  // namespace chime::driver
