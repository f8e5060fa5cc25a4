// GET /v1/cluster (routes.h, docs/api.md, docs/cluster.md): the nodes that
// share this daemon's store, read from the store's leases -- each live
// member's lease "member/<node>", the scheduler's lease -- and this node's
// own clock offset from the store's (DaemonInfo::clock_offset). Needs no
// scheduler: standbys serve it too (daemon/standby_http.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

bool Live(const LeaseInfo& l) {
  return !l.holder.empty() && l.remaining > absl::ZeroDuration();
}

http::Response GetCluster(const ApiDeps& deps, const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<std::vector<LeaseInfo>> leases =
      deps.store->ListLeases(StoreDeadline());
  if (!leases.ok()) return ProblemFromStatus(leases.status());

  const DaemonInfo& daemon = deps.daemon;
  Json body;
  body["node"] = daemon.node_name;
  body["shared_store"] = daemon.shared_store;
  std::string scheduler_node;
  Json& scheduler = body["scheduler"] = nullptr;
  if (const LeaseInfo* l = internal::LiveSchedulerLease(*leases)) {
    scheduler_node = internal::NodeOfHolder(l->holder);
    scheduler = Json{{"node", scheduler_node},
                     {"holder", l->holder},
                     {"epoch", l->token},
                     {"remaining_seconds", absl::ToDoubleSeconds(l->remaining)},
                     {"url", internal::UrlOfHolder(l->holder)}};
  }
  // With shards: each shard lease's live holder, by shard, and how many
  // each node holds.
  std::map<uint32_t, Json> shards;
  std::map<std::string, int> held;
  for (const LeaseInfo& l : *leases) {
    uint32_t shard = 0;
    if (!absl::StartsWith(l.name, kShardLeasePrefix) ||
        !absl::SimpleAtoi(l.name.substr(kShardLeasePrefix.size()), &shard)) {
      continue;
    }
    Json s{{"shard", shard}, {"node", nullptr}, {"epoch", l.token}};
    if (Live(l)) {
      const std::string node = internal::NodeOfHolder(l.holder);
      s["node"] = node;
      s["remaining_seconds"] = absl::ToDoubleSeconds(l.remaining);
      ++held[node];
    }
    shards[shard] = std::move(s);
  }
  // The live members, by name (ListLeases orders by name).
  Json& members = body["members"] = Json::array();
  for (const LeaseInfo& l : *leases) {
    if (!absl::StartsWith(l.name, kMemberLeasePrefix) || !Live(l)) continue;
    const std::string node(l.name.substr(kMemberLeasePrefix.size()));
    Json member{{"node", node},
                {"holder", l.holder},
                {"epoch", l.token},
                {"remaining_seconds", absl::ToDoubleSeconds(l.remaining)},
                {"scheduling", node == scheduler_node || held[node] > 0}};
    if (!shards.empty()) member["shards"] = held[node];
    members.push_back(std::move(member));
  }
  Json& shard_list = body["shards"] = Json::array();
  for (auto& [n, s] : shards) shard_list.push_back(std::move(s));
  const std::optional<absl::Duration> offset =
      daemon.clock_offset ? daemon.clock_offset() : std::nullopt;
  body["clock_offset_seconds"] =
      offset.has_value() ? Json(absl::ToDoubleSeconds(*offset)) : Json(nullptr);
  body["max_clock_skew_seconds"] =
      daemon.max_clock_skew == absl::InfiniteDuration()
          ? Json(nullptr)
          : Json(absl::ToDoubleSeconds(daemon.max_clock_skew));
  return JsonResponse(body);
}

}  // namespace

const LeaseInfo* internal::LiveSchedulerLease(
    const std::vector<LeaseInfo>& leases) {
  for (const LeaseInfo& l : leases) {
    if (l.name == kSchedulerLease && Live(l)) return &l;
  }
  return nullptr;
}

std::optional<std::string> internal::SchedulingNode(Store& store) {
  absl::StatusOr<std::vector<LeaseInfo>> leases =
      store.ListLeases(StoreDeadline());
  if (!leases.ok()) return std::nullopt;
  const LeaseInfo* l = LiveSchedulerLease(*leases);
  if (l == nullptr) return std::nullopt;
  return NodeOfHolder(l->holder);
}

http::Response internal::NotTheScheduler(Store& store, absl::string_view node) {
  const std::optional<std::string> scheduler = SchedulingNode(store);
  http::Response r = Problem(
      503, absl::StrCat(
               "this node (", node, ") is a standby: ask the scheduling node",
               scheduler.has_value() ? absl::StrCat(" (", *scheduler, ")")
                                     : std::string(" (none right now)"),
               "; GET /v1/cluster names it"));
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

std::string internal::UrlOfHolder(absl::string_view holder) {
  const size_t at = holder.find(" url ");
  if (at == absl::string_view::npos) return "";
  return std::string(holder.substr(at + 5));
}

std::string internal::NodeOfHolder(absl::string_view holder) {
  return std::string(holder.substr(0, holder.find(' ')));
}

void internal::AddClusterRoutes(http::Router& router, const ApiDeps& deps) {
  router.Handle("GET", "/v1/cluster",
                deps.auth->Guard(Role::kRead, [deps](const http::Request& r) {
                  return GetCluster(deps, r);
                }));
}

}  // namespace chime::api
