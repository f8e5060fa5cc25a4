// The operations on jobs (routes.h): POST /v1/jobs/{namespace}/{id}/<action>.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"
#include "src/http/deferred_response.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

// With shards, the answer of the node that holds the job's shard when the
// scheduler says another node does; nothing otherwise.
std::optional<http::Response> ElsewhereAnswer(const ApiDeps& deps,
                                              const http::Request& request,
                                              const absl::Status& status) {
  if (!deps.forward_to_shard) return std::nullopt;
  const std::optional<uint32_t> shard = internal::ShardElsewhere(status);
  if (!shard.has_value()) return std::nullopt;
  return deps.forward_to_shard(request, *shard);
}

// The answer to a trigger; `elsewhere` (null: none) asks the node that
// holds the job's shard.
http::Response Triggered(const ApiDeps::OnChange& on_change,
                         const std::optional<http::Response>& elsewhere,
                         const JobKey& key, const std::string& who,
                         const absl::StatusOr<uint64_t>& run) {
  if (absl::IsNotFound(run.status())) {
    return Problem(404, absl::StrCat("no job ", key.ToString()));
  }
  if (elsewhere.has_value()) return *elsewhere;
  if (!run.ok()) return ProblemFromStatus(run.status());
  if (on_change) {
    on_change("job triggered", key, who, absl::StrCat("run ", *run));
  }
  Json body;
  body["run_id"] = *run;
  body["run"] =
      absl::StrCat("/v1/jobs/", key.name_space, "/", key.id, "/runs/", *run);
  http::Response response = JsonResponse(body, 201);
  response.headers.emplace_back("Location", body["run"].get<std::string>());
  return response;
}

// Answered once the claim is durable, from the scheduler's thread -- except
// on a node of a sharded cluster, which may have to ask another node first
// (and then waits, on the server's pool).
http::Response Trigger(const ApiDeps& deps, const http::Request& request,
                       const JobKey& key, const std::string& who) {
  if (deps.forward_to_shard) {
    absl::StatusOr<uint64_t> run = deps.scheduler->TriggerJob(key);
    return Triggered(deps.on_change,
                     ElsewhereAnswer(deps, request, run.status()), key, who,
                     run);
  }
  std::shared_ptr<http::DeferredResponse> later =
      http::DeferredResponse::Create();
  // Copies: the answer may come after the router is gone.
  deps.scheduler->TriggerJobAsync(
      key, [later, key, who,
            on_change = deps.on_change](absl::StatusOr<uint64_t> run) {
        later->Complete(Triggered(on_change, std::nullopt, key, who, run));
      });
  return later->Response();
}

// Pause and resume: the job's definition stays; its fires are recorded
// missed ("paused") until it is resumed.
http::Response SetPaused(const ApiDeps& deps, const JobKey& key,
                         const std::string& who, bool paused) {
  if (deps.jobs == nullptr)
    return Problem(501, "changing jobs is not available on this server");
  absl::StatusOr<JobRecord> record = deps.jobs->SetPaused(key, paused);
  if (!record.ok()) return ProblemFromStatus(record.status());
  if (deps.on_change)
    deps.on_change(paused ? "job paused" : "job resumed", key, who, "");
  return JsonTextResponse(
      internal::JobJsonText(*record, internal::NextFire(deps, *record)));
}

// POST .../runs/{run}/cancel and .../retry: `run` must be the job's.
http::Response RunAction(const ApiDeps& deps, const http::Request& request,
                         const JobKey& key, const std::string& run_text,
                         const std::string& action, const std::string& who) {
  RunId run = 0;
  if (!absl::SimpleAtoi(run_text, &run) || run == 0)
    return Problem(404, absl::StrCat("no run \"", run_text, "\""));
  absl::StatusOr<JobRecord> job = deps.store->GetJob(key, StoreDeadline());
  if (absl::IsNotFound(job.status()))
    return Problem(404, absl::StrCat("no job ", key.ToString()));
  if (!job.ok()) return ProblemFromStatus(job.status());
  absl::StatusOr<RunDetail> detail = deps.store->GetRun(run, StoreDeadline());
  if (absl::IsNotFound(detail.status()) ||
      (detail.ok() && detail->run.fire.job != job->id)) {
    return Problem(404,
                   absl::StrCat("no run ", run, " of job ", key.ToString()));
  }
  if (!detail.ok()) return ProblemFromStatus(detail.status());
  const std::string path =
      absl::StrCat("/v1/jobs/", key.name_space, "/", key.id, "/runs/");
  const RunState state = detail->run.state;
  const bool finished =
      state == RunState::kSucceeded || state == RunState::kFailed ||
      state == RunState::kCancelled || state == RunState::kLost;
  if (action == "cancel") {
    absl::Status s = deps.scheduler->CancelRun(
        run, who.empty() ? std::string("cancelled through the API")
                         : absl::StrCat("cancelled through the API by ", who));
    if (absl::IsNotFound(s)) {
      // Not this node's run: another may schedule the job's shard.
      if (auto answer = ElsewhereAnswer(
              deps, request, deps.scheduler->NextFireTime(key).status())) {
        return *std::move(answer);
      }
      return Problem(409, absl::StrCat("run ", run, " is not going (",
                                       RunStateName(state), ")"));
    }
    if (!s.ok()) return ProblemFromStatus(s);
    if (deps.on_change)
      deps.on_change("run cancelled", key, who, absl::StrCat("run ", run));
    // A running attempt is asked to stop; it ends when it does.
    absl::StatusOr<RunDetail> now = deps.store->GetRun(run, StoreDeadline());
    Json body;
    body["run_id"] = run;
    body["state"] =
        std::string(RunStateName(now.ok() ? now->run.state : state));
    body["run"] = absl::StrCat(path, run);
    return JsonResponse(body, 202);
  }
  // retry: a new manual run of the job, for a run that ended without
  // success (a dead letter, typically).
  if (!finished || state == RunState::kSucceeded) {
    return Problem(409, absl::StrCat("run ", run, " is ", RunStateName(state),
                                     "; only a failed, cancelled or lost run "
                                     "is retried"));
  }
  absl::StatusOr<uint64_t> again = deps.scheduler->TriggerJob(key);
  if (auto answer = ElsewhereAnswer(deps, request, again.status()))
    return *std::move(answer);
  if (absl::IsNotFound(again.status()))
    return Problem(409,
                   absl::StrCat("job ", key.ToString(), " is not in force"));
  if (!again.ok()) return ProblemFromStatus(again.status());
  if (deps.on_change) {
    deps.on_change("run retried", key, who,
                   absl::StrCat("run ", run, " as run ", *again));
  }
  Json body;
  body["run_id"] = *again;
  body["run"] = absl::StrCat(path, *again);
  body["retry_of"] = run;
  http::Response response = JsonResponse(body, 201);
  response.headers.emplace_back("Location", body["run"].get<std::string>());
  return response;
}

// A standby's answer to an action only the scheduling node carries out.
http::Response OnTheScheduler(const ApiDeps& deps,
                              const http::Request& request) {
  if (deps.forward) return deps.forward(request);
  return internal::NotTheScheduler(*deps.store, deps.daemon.node_name);
}

http::Response Act(const ApiDeps& deps, const http::Request& request,
                   const std::string& who) {
  absl::StatusOr<std::vector<std::string>> parts =
      PathSegments(request.path, "/v1/jobs/");
  if (!parts.ok()) return ProblemFromStatus(parts.status());
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  if (parts->size() == 3 && !(*parts)[0].empty() && !(*parts)[1].empty()) {
    const JobKey key{(*parts)[0], (*parts)[1]};
    const std::string& action = (*parts)[2];
    if (action == "trigger") {
      if (deps.scheduler == nullptr) return OnTheScheduler(deps, request);
      return Trigger(deps, request, key, who);
    }
    if (action == "pause") return SetPaused(deps, key, who, true);
    if (action == "resume") return SetPaused(deps, key, who, false);
  }
  if (parts->size() == 5 && !(*parts)[0].empty() && !(*parts)[1].empty() &&
      (*parts)[2] == "runs" &&
      ((*parts)[4] == "cancel" || (*parts)[4] == "retry")) {
    if (deps.scheduler == nullptr) return OnTheScheduler(deps, request);
    return RunAction(deps, request, JobKey{(*parts)[0], (*parts)[1]},
                     (*parts)[3], (*parts)[4], who);
  }
  return Problem(404, absl::StrCat("no such operation: POST ", request.path,
                                   " (POST /v1/jobs/{namespace}/{id}/"
                                   "trigger, pause or resume, or "
                                   ".../runs/{run}/cancel or retry)"));
}

}  // namespace

void internal::AddActionRoutes(http::Router& router, const ApiDeps& deps,
                               std::shared_ptr<IdempotencyGate> gate) {
  // A trigger answers once its claim is durable (deferred), so it runs
  // inline -- unless it has an Idempotency-Key (the answer is kept first) or
  // may be forwarded to another node; the other actions wait for the
  // scheduler or the store, on the server's pool.
  const bool may_forward =
      deps.scheduler == nullptr || static_cast<bool>(deps.forward_to_shard);
  router.HandlePrefix(
      "POST", "/v1/jobs/",
      deps.auth->Guard(
          Role::kWrite,
          [deps, gate](const http::Request& r, const std::string& who) {
            return gate->Run(r, who, [&] { return Act(deps, r, who); });
          }),
      {.run_inline = [may_forward](const http::Request& r) {
        return !may_forward && absl::EndsWith(r.path, "/trigger") &&
               r.Header("Idempotency-Key").empty();
      }});
}

}  // namespace chime::api
