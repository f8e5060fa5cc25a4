// Shards (docs/cluster.md, "Shards: the design"): which of S shards a job
// belongs to, and which live member owns each shard. Pure functions: no I/O,
// no clock.
//
// A job's shard is a fixed 64-bit hash of its namespace and id modulo S. The
// hash is our own and never changes between versions or platforms (not
// absl::Hash, which is seeded per process): nodes of different versions in one
// cluster must agree on every job's shard.
//
// A shard's owner is chosen by rendezvous (highest random weight) hashing:
// each member scores Weight(shard, member) and the highest score owns the
// shard. Every node computes the same owners from the same member list, in
// any order, without talking to the others; and when a member joins or leaves,
// only the shards it gains or held change owner (about S/N), never a shard
// between two members that stay.
//
// Example: members {a, b, c}; say shard 2's weights are a: 9, b: 3, c: 14
// (64-bit numbers in truth) -- c owns it. If d joins and scores 15, d takes
// shard 2 over; if a leaves instead, shard 2 stays with c: its score is
// still the highest.
//
// Thread-safety: functions of their arguments only.
#ifndef CHIME_SRC_CLUSTER_SHARDS_H_
#define CHIME_SRC_CLUSTER_SHARDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "chime/job.h"

namespace chime::cluster {

// The default number of shards of a cluster.
inline constexpr uint32_t kDefaultShards = 64;

// A fixed 64-bit hash of `bytes` (FNV-1a, then a 64-bit finalizer that spreads
// every input bit over the output).
uint64_t StableHash(absl::string_view bytes);

// The shard of job `key` among `shards`. REQUIRES: shards >= 1.
uint32_t ShardOf(const JobKey& key, uint32_t shards);

// Member `member`'s score for `shard`: the highest score owns the shard.
uint64_t Weight(uint32_t shard, absl::string_view member);

// The owner of `shard` among `members` (names; duplicates count once): the
// highest Weight, ties (of equal 64-bit scores) to the smaller name. "" when
// there is no member.
std::string OwnerOf(uint32_t shard, absl::Span<const std::string> members);

// Every shard's owner, index = shard: OwnerOf for each of `shards` shards.
std::vector<std::string> Assign(uint32_t shards,
                                absl::Span<const std::string> members);

// The name of shard `shard`'s lease in the store: "shard/<shard>".
std::string ShardLease(uint32_t shard);

}  // namespace chime::cluster

#endif  // CHIME_SRC_CLUSTER_SHARDS_H_
