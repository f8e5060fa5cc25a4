// GET /v1/runs/per-minute (run_routes.h): the web UI's overview counts.
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "chime/run_state.h"
#include "src/api/http_util.h"
#include "src/api/run_routes.h"
#include "src/time/rfc3339.h"

namespace chime::api::internal {
namespace {

using Json = nlohmann::ordered_json;

// GET /v1/runs/per-minute counts at most this many runs per request.
constexpr int64_t kMaxCountedPerMinute = 100'000;

}  // namespace

// GET /v1/runs/per-minute: every job's runs of the last `minutes` minutes
// (by scheduled time, the minute now included) counted by minute and state,
// oldest minute first. Reads the runs newest first, at most
// kMaxCountedPerMinute of them ("capped" then says the oldest minutes are
// short).
http::Response RunsPerMinute(Store& store, const http::Request& request) {
  absl::StatusOr<Query> q =
      Query::Parse(request.query, {"minutes", "namespace"});
  RETURN_PROBLEM_IF_ERROR(q.status());
  absl::StatusOr<int64_t> minutes = q->Int("minutes", 30, 1, 1440);
  RETURN_PROBLEM_IF_ERROR(minutes.status());
  absl::StatusOr<std::optional<std::string>> ns = q->One("namespace");
  RETURN_PROBLEM_IF_ERROR(ns.status());
  constexpr RunState kStates[] = {RunState::kPending,  RunState::kRunning,
                                  RunState::kRetrying, RunState::kSucceeded,
                                  RunState::kFailed,   RunState::kCancelled,
                                  RunState::kLost};
  const absl::Time now = absl::Now();
  const absl::Time first_minute =
      absl::UnixEpoch() +
      absl::Floor(now - absl::UnixEpoch(), absl::Minutes(1)) -
      absl::Minutes(*minutes - 1);
  // counts[minute][state]
  std::vector<std::array<int64_t, 8>> counts(*minutes);
  RunQuery query;
  query.from = first_minute;
  query.limit = 1000;
  int64_t counted = 0;
  bool capped = false;
  for (;;) {
    absl::StatusOr<RunPage> page = store.ListRuns(query, StoreDeadline());
    RETURN_PROBLEM_IF_ERROR(page.status());
    for (const RunRecord& run : page->runs) {
      if (ns->has_value() && run.job_key.name_space != **ns) continue;
      const int64_t i =
          (run.fire.scheduled_time - first_minute) / absl::Minutes(1);
      if (i < 0 || i >= *minutes) continue;  // scheduled in the future
      ++counts[i][static_cast<size_t>(run.state)];
      ++counted;
    }
    if (!page->next) break;
    if (counted >= kMaxCountedPerMinute) {
      capped = true;
      break;
    }
    query.after = page->next;
  }
  Json list = Json::array();
  for (int64_t i = 0; i < *minutes; ++i) {
    Json minute;
    minute["minute"] = time::FormatUtc(first_minute + absl::Minutes(i));
    for (RunState state : kStates) {
      minute[std::string(RunStateName(state))] =
          counts[i][static_cast<size_t>(state)];
    }
    list.push_back(std::move(minute));
  }
  Json body;
  body["minutes"] = std::move(list);
  body["runs_counted"] = counted;
  body["capped"] = capped;
  return JsonResponse(body);
}

}  // namespace chime::api::internal
