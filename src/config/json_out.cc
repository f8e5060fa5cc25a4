#include "src/config/json_out.h"

#include <utility>

namespace chime::config {

nlohmann::ordered_json& JsonTreeOut::Slot() {
  if (open_.empty()) return root_;
  nlohmann::ordered_json& parent = *open_.back().node;
  if (parent.is_array()) {
    parent.push_back(nullptr);
    return parent.back();
  }
  return parent[key_];
}

void JsonTreeOut::Open(nlohmann::ordered_json empty) {
  const bool member = !open_.empty() && open_.back().node->is_object();
  nlohmann::ordered_json& node = Slot();
  node = std::move(empty);
  // The node stays where it is while it is open: its container gets nothing
  // more until it ends.
  open_.push_back({&node, member ? key_ : std::string()});
}

void JsonTreeOut::EndObjectOrDropIfEmpty() {
  Frame frame = std::move(open_.back());
  open_.pop_back();
  if (!frame.node->empty() || open_.empty()) return;
  open_.back().node->erase(frame.key);
}

}  // namespace chime::config
