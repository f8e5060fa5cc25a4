#include "src/api/stream_routes.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/run_state.h"
#include "src/api/event_hub.h"
#include "src/api/http_util.h"
#include "src/api/live_output.h"

namespace chime::api::internal {
namespace {

// How long a follower whose attempt ended a moment ago waits for the run
// history to have the attempt's output (the store writes behind the
// scheduler, within milliseconds).
constexpr absl::Duration kHistoryWait = absl::Seconds(2);

const http::Headers& StreamHeaders() {
  // nosniff: browsers otherwise hold text/plain back to guess its type.
  static const http::Headers* const kHeaders = new http::Headers{
      {"Cache-Control", "no-cache"}, {"X-Content-Type-Options", "nosniff"}};
  return *kHeaders;
}

http::Response Text(std::string body) {
  return http::Response{.content_type = "text/plain; charset=utf-8",
                        .body = std::move(body),
                        .headers = StreamHeaders()};
}

absl::StatusOr<bool> FollowParam(const Query& q) {
  absl::StatusOr<std::optional<std::string>> text = q.One("follow");
  if (!text.ok()) return text.status();
  if (!text->has_value() || **text == "false") return false;
  if (**text == "true") return true;
  return absl::InvalidArgumentError(
      absl::StrCat("follow: \"", **text, "\" is not true or false"));
}

// A run whose attempts will not change any more here.
bool Over(RunState state) { return IsFinal(state) || state == RunState::kLost; }

// `detail` again until its latest attempt (or the run) has ended in the
// store, for at most kHistoryWait.
RunDetail AwaitHistory(Store& store, RunDetail detail) {
  const absl::Time deadline = absl::Now() + kHistoryWait;
  while (absl::Now() < deadline) {
    if (Over(detail.run.state) ||
        (!detail.attempts.empty() &&
         detail.attempts.back().finished_at != absl::InfiniteFuture())) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
    absl::StatusOr<RunDetail> again =
        store.GetRun(detail.run.id, StoreDeadline());
    if (!again.ok()) break;
    detail = *std::move(again);
  }
  return detail;
}

http::Response Events(const ApiDeps& deps, const http::Request& request) {
  if (deps.events == nullptr)
    return Problem(501, "the event stream is not available on this server");
  absl::StatusOr<Query> q = Query::Parse(request.query, {"namespace", "job"});
  if (!q.ok()) return ProblemFromStatus(q.status());
  EventHub::Filter filter;
  absl::StatusOr<std::optional<std::string>> ns = q->One("namespace");
  if (!ns.ok()) return ProblemFromStatus(ns.status());
  if (ns->has_value()) {
    if ((*ns)->empty()) return Problem(400, "namespace: empty");
    filter.name_space = **ns;
  }
  absl::StatusOr<std::optional<std::string>> job = q->One("job");
  if (!job.ok()) return ProblemFromStatus(job.status());
  if (job->has_value()) {
    const std::string& name = **job;
    const size_t slash = name.find('/');
    JobKey key = slash == std::string::npos
                     ? JobKey{"default", name}
                     : JobKey{name.substr(0, slash), name.substr(slash + 1)};
    if (key.name_space.empty() || key.id.empty() ||
        key.id.find('/') != std::string::npos) {
      return Problem(400, absl::StrCat("job: \"", name,
                                       "\" is not a job name (namespace/id, "
                                       "or id in the default namespace)"));
    }
    filter.job = std::move(key);
  }
  // EventSource sends the last id it saw when it reconnects; anything else
  // there is ignored (as the spec says of ids it cannot use).
  std::optional<uint64_t> last_event_id;
  uint64_t id = 0;
  if (absl::SimpleAtoi(request.Header("Last-Event-ID"), &id))
    last_event_id = id;
  absl::StatusOr<std::shared_ptr<http::ResponseStream>> stream =
      deps.events->Subscribe(filter, last_event_id);
  if (!stream.ok()) {
    http::Response busy = Problem(503, stream.status().message());
    busy.headers.emplace_back("Retry-After", "5");
    return busy;
  }
  return http::Response{
      .content_type = "text/event-stream",
      .headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}},
      .stream = *std::move(stream)};
}

}  // namespace

void AddEventRoutes(http::Router& router, const ApiDeps& deps) {
  router.Handle("GET", "/v1/events",
                deps.auth->Guard(Role::kRead, [deps](const http::Request& r) {
                  return Events(deps, r);
                }));
}

http::Response RunOutput(const ApiDeps& deps, const JobRecord& job,
                         absl::string_view run_text,
                         const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {"follow"});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<bool> follow = FollowParam(*q);
  if (!follow.ok()) return ProblemFromStatus(follow.status());
  RunId id = 0;
  if (!absl::SimpleAtoi(run_text, &id) || id == 0) {
    return Problem(404, absl::StrCat("no run ", run_text, " of job ",
                                     job.spec.key.ToString()));
  }
  absl::StatusOr<RunDetail> detail = deps.store->GetRun(id, StoreDeadline());
  if ((detail.ok() && detail->run.fire.job != job.id) ||
      absl::IsNotFound(detail.status())) {
    return Problem(
        404, absl::StrCat("no run ", id, " of job ", job.spec.key.ToString()));
  }
  if (!detail.ok()) return ProblemFromStatus(detail.status());
  if (!Over(detail->run.state) && deps.live_output != nullptr) {
    if (*follow) {
      if (std::shared_ptr<http::ResponseStream> stream =
              deps.live_output->Follow(id)) {
        return http::Response{.content_type = "text/plain; charset=utf-8",
                              .headers = StreamHeaders(),
                              .stream = std::move(stream)};
      }
      // The attempt ended a moment ago: the history is being written.
      detail = AwaitHistory(*deps.store, *std::move(detail));
    } else if (std::optional<std::string> now =
                   deps.live_output->Snapshot(id)) {
      return Text(*std::move(now));
    }
  }
  return Text(detail->attempts.empty() ? "" : detail->attempts.back().output);
}

}  // namespace chime::api::internal
