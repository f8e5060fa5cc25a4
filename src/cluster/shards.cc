#include "src/cluster/shards.h"

#include "absl/strings/str_cat.h"
#include "chime/store_types.h"

namespace chime::cluster {
namespace {

// A bijective mix of 64 bits (the finalizer of SplitMix64): FNV-1a's low bits
// depend weakly on the last bytes; after this every output bit depends on
// every input bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t Fnv1a(uint64_t h, absl::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;

}  // namespace

uint64_t StableHash(absl::string_view bytes) {
  return Mix(Fnv1a(kFnvOffset, bytes));
}

uint32_t ShardOf(const JobKey& key, uint32_t shards) {
  // The namespace's length first, so that ("ab", "c") and ("a", "bc") differ.
  uint64_t h = Fnv1a(kFnvOffset, absl::StrCat(key.name_space.size(), ":",
                                              key.name_space, "/", key.id));
  return static_cast<uint32_t>(Mix(h) % shards);
}

uint64_t Weight(uint32_t shard, absl::string_view member) {
  return Mix(StableHash(member) ^ Mix(uint64_t{shard} + 0x9e3779b97f4a7c15ULL));
}

std::string OwnerOf(uint32_t shard, absl::Span<const std::string> members) {
  const std::string* best = nullptr;
  uint64_t best_weight = 0;
  for (const std::string& m : members) {
    const uint64_t w = Weight(shard, m);
    if (best == nullptr || w > best_weight || (w == best_weight && m < *best)) {
      best = &m;
      best_weight = w;
    }
  }
  return best == nullptr ? std::string() : *best;
}

std::vector<std::string> Assign(uint32_t shards,
                                absl::Span<const std::string> members) {
  std::vector<std::string> owners;
  owners.reserve(shards);
  for (uint32_t s = 0; s < shards; ++s) owners.push_back(OwnerOf(s, members));
  return owners;
}

std::string ShardLease(uint32_t shard) {
  return absl::StrCat(kShardLeasePrefix, shard);
}

}  // namespace chime::cluster
