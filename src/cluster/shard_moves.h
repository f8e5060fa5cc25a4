// PlanShardMoves: what a node does about the shard leases on one lease tick
// (docs/cluster.md, "Shards: the design"), decided from what it read of the
// store -- the live members and each shard lease's holder. Pure: the caller
// takes and releases the leases (a release after handing the shard's runs
// off) and calls again on the next tick.
//
// A node takes the free shards it owns (OwnerOf over the live members) and
// hands off the ones it holds that another live member owns; it leaves alone
// a shard another node holds, even one it owns: that node hands it off, or its
// lease expires. Two nodes that see the same members agree on every owner, so
// no shard moves twice for one change of members. A node that does not see
// itself among the members (not yet, or its member lease lapsed) changes
// nothing: it would compute owners without itself and give its shards away,
// only to take them back once its membership is seen again.
//
// Thread-safety: a function of its argument.
#ifndef CHIME_SRC_CLUSTER_SHARD_MOVES_H_
#define CHIME_SRC_CLUSTER_SHARD_MOVES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace chime::cluster {

struct ShardView {
  std::string self;  // this node's name
  // The live members: names whose member lease has not expired.
  std::vector<std::string> members;
  // Each shard's lease holder, index = shard; "" for a lease that is free
  // (never taken, released, or expired). Its size is the number of shards.
  std::vector<std::string> holders;
};

struct ShardMoves {
  std::vector<uint32_t> acquire;   // free shards this node owns
  std::vector<uint32_t> hand_off;  // held shards another member owns
  friend bool operator==(const ShardMoves&, const ShardMoves&) = default;
};

// Both lists in increasing shard order.
ShardMoves PlanShardMoves(const ShardView& view);

}  // namespace chime::cluster

#endif  // CHIME_SRC_CLUSTER_SHARD_MOVES_H_
