// GET /v1/status, GET /v1/namespaces and GET /v1/whoami (routes.h,
// docs/api.md): what an operator looks at first, read from the scheduler
// (Stats, a round trip to its thread), the store (GetInfo; for namespaces,
// every stored job) and what the daemon tells of itself (DaemonInfo).
#include "src/api/status_routes.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

// GET /v1/namespaces reads at most this many jobs (then says so with
// "jobs_capped"), in pages of kNamespacePage.
constexpr int64_t kMaxJobsCounted = 1'000'000;
constexpr int kNamespacePage = 1000;

http::Response GetStatus(const ApiDeps& deps, const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  // A standby has no scheduler: its counts are null.
  std::optional<SchedulerStats> stats;
  if (deps.scheduler != nullptr) {
    absl::StatusOr<SchedulerStats> s = deps.scheduler->Stats();
    if (!s.ok()) return ProblemFromStatus(s.status());
    stats = *std::move(s);
  }
  absl::StatusOr<StoreInfo> info = deps.store->GetInfo(StoreDeadline());
  if (!info.ok()) return ProblemFromStatus(info.status());
  absl::StatusOr<std::vector<LeaseInfo>> leases =
      deps.store->ListLeases(StoreDeadline());
  if (!leases.ok()) return ProblemFromStatus(leases.status());

  const DaemonInfo& daemon = deps.daemon;
  const absl::Time now = absl::Now();
  Json body;
  body["version"] = daemon.version;
  body["started_at"] = TimeOrNull(daemon.started_at);
  if (daemon.started_at == absl::InfinitePast()) {
    body["uptime_seconds"] = nullptr;
  } else {
    body["uptime_seconds"] = absl::ToInt64Seconds(now - daemon.started_at);
  }
  body["time"] = time::FormatUtc(now);
  body["node"] = daemon.node_name;
  body["role"] = stats.has_value() ? "scheduler" : "standby";

  Json& s = body["scheduler"];
  s = nullptr;
  if (stats.has_value()) {
    s["jobs"] = stats->jobs;
    s["jobs_paused"] = stats->jobs_paused;
    s["runs_pending"] = stats->runs_pending;
    s["runs_running"] = stats->runs_running;
    s["fires_run"] = stats->fires_run;
    Json& not_run = s["fires_not_run"];
    not_run = Json::object();
    for (const auto& [reason, count] : stats->fires_not_run)
      not_run[reason] = count;
    s["runs_succeeded"] = stats->runs_succeeded;
    s["runs_failed"] = stats->runs_failed;
    s["runs_cancelled"] = stats->runs_cancelled;
    s["retries"] = stats->retries;
    s["timeouts"] = stats->timeouts;
    s["clock_steps"] = stats->clock_steps;
    // The store's clock minus this node's, at the last lease renewal.
    s["clock_offset_seconds"] =
        stats->clock_offset.has_value()
            ? Json(absl::ToDoubleSeconds(*stats->clock_offset))
            : Json(nullptr);
  }

  std::vector<std::string> errors;
  if (daemon.job_file_errors) errors = daemon.job_file_errors();
  body["job_file_errors"] = std::move(errors);

  Json& st = body["store"];
  st["jobs"] = info->jobs;
  st["runs"] = info->runs;
  st["run_bytes"] = info->run_bytes;
  st["revision"] = info->revision;
  st["max_run_id"] = info->max_run_id;
  // Who schedules on this store: on a shared one, which node holds the
  // lease, under which epoch (the fencing token), for how much longer.
  Json& held = st["leases"] = Json::array();
  for (const LeaseInfo& l : *leases) {
    held.push_back(
        Json{{"name", l.name},
             {"holder", l.holder.empty() ? Json(nullptr) : Json(l.holder)},
             {"epoch", l.token},
             {"remaining_seconds", absl::ToDoubleSeconds(l.remaining)}});
  }
  return JsonResponse(body);
}

http::Response ListNamespaces(const ApiDeps& deps,
                              const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<internal::JobCount> count = internal::CountJobsByNamespace(
      *deps.store, kMaxJobsCounted, kNamespacePage);
  if (!count.ok()) return ProblemFromStatus(count.status());
  // The load now: a namespace with runs going but no stored job (deleted
  // meanwhile) is listed too. A standby does not know it (null).
  std::map<std::string, SchedulerStats::Load> load;
  if (deps.scheduler != nullptr) {
    absl::StatusOr<SchedulerStats> stats = deps.scheduler->Stats();
    if (!stats.ok()) return ProblemFromStatus(stats.status());
    for (const auto& [ns, l] : stats->by_namespace) {
      if (l.pending > 0 || l.running > 0) load[ns] = l;
    }
  }
  // Every namespace with a stored job or a run going, by name.
  std::set<std::string> names;
  for (const auto& [ns, jobs] : count->by_namespace) names.insert(ns);
  for (const auto& [ns, l] : load) names.insert(ns);
  Json list = Json::array();
  for (const std::string& ns : names) {
    const internal::NamespaceJobs jobs = count->by_namespace[ns];
    const SchedulerStats::Load l = load[ns];
    list.push_back(
        Json{{"name", ns},
             {"jobs", jobs.jobs},
             {"paused", jobs.paused},
             {"runs_pending",
              deps.scheduler != nullptr ? Json(l.pending) : Json(nullptr)},
             {"runs_running",
              deps.scheduler != nullptr ? Json(l.running) : Json(nullptr)}});
  }
  Json body;
  body["namespaces"] = std::move(list);
  body["jobs_counted"] = count->counted;
  body["jobs_capped"] = count->capped;
  return JsonResponse(body);
}

// GET /v1/whoami: the caller's token name (null without tokens) and role,
// so that a client such as the web UI shows only what the caller may do.
// Without tokens every request may do everything: "admin".
http::Response WhoAmI(const Authorizer& auth, const http::Request& request,
                      const std::string& name) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::string_view role = "read";
  if (auth.Check(request, Role::kAdmin).ok()) {
    role = "admin";
  } else if (auth.Check(request, Role::kWrite).ok()) {
    role = "write";
  }
  Json body;
  body["name"] = name.empty() ? Json(nullptr) : Json(name);
  body["role"] = role;
  return JsonResponse(body);
}

}  // namespace

absl::StatusOr<internal::JobCount> internal::CountJobsByNamespace(
    Store& store, int64_t max_jobs, int page_size) {
  JobCount count;
  for (JobId after = 0;;) {
    if (count.counted >= max_jobs) {
      // Capped only if there is a job beyond the ones counted.
      absl::StatusOr<JobPage> more = store.LoadJobs(after, 1, StoreDeadline());
      if (!more.ok()) return more.status();
      count.capped = !more->jobs.empty();
      return count;
    }
    const int want = static_cast<int>(
        std::min<int64_t>(page_size, max_jobs - count.counted));
    absl::StatusOr<JobPage> page = store.LoadJobs(after, want, StoreDeadline());
    if (!page.ok()) return page.status();
    for (const JobRecord& record : page->jobs) {
      NamespaceJobs& n = count.by_namespace[record.spec.key.name_space];
      ++n.jobs;
      if (record.spec.paused) ++n.paused;
    }
    count.counted += static_cast<int64_t>(page->jobs.size());
    after = page->next_after;
    if (page->done) return count;
  }
}

void internal::AddStatusRoutes(http::Router& router, const ApiDeps& deps) {
  const Authorizer& auth = *deps.auth;
  router.Handle("GET", "/v1/status",
                auth.Guard(Role::kRead, [deps](const http::Request& r) {
                  return GetStatus(deps, r);
                }));
  router.Handle(
      "GET", "/v1/whoami",
      auth.Guard(Role::kRead,
                 GuardedHandler([a = deps.auth](const http::Request& r,
                                                const std::string& who) {
                   return WhoAmI(*a, r, who);
                 })));
  router.Handle("GET", "/v1/namespaces",
                auth.Guard(Role::kRead, [deps](const http::Request& r) {
                  return ListNamespaces(deps, r);
                }));
}

}  // namespace chime::api
