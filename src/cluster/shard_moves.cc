#include "src/cluster/shard_moves.h"

#include <algorithm>

#include "src/cluster/shards.h"

namespace chime::cluster {

ShardMoves PlanShardMoves(const ShardView& view) {
  ShardMoves moves;
  if (std::find(view.members.begin(), view.members.end(), view.self) ==
      view.members.end()) {
    return moves;
  }
  for (uint32_t shard = 0; shard < view.holders.size(); ++shard) {
    const std::string& holder = view.holders[shard];
    const bool mine = OwnerOf(shard, view.members) == view.self;
    if (mine && holder.empty()) moves.acquire.push_back(shard);
    if (!mine && holder == view.self) moves.hand_off.push_back(shard);
  }
  return moves;
}

}  // namespace chime::cluster
