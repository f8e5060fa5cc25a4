// The operations on jobs (routes.h): POST /v1/jobs/{namespace}/{id}/<action>.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

http::Response Trigger(const ApiDeps& deps, const JobKey& key,
                       const std::string& who) {
  absl::StatusOr<uint64_t> run = deps.scheduler->TriggerJob(key);
  if (absl::IsNotFound(run.status())) {
    return Problem(404, absl::StrCat("no job ", key.ToString()));
  }
  if (!run.ok()) return ProblemFromStatus(run.status());
  if (deps.on_change) {
    deps.on_change("job triggered", key, who, absl::StrCat("run ", *run));
  }
  Json body;
  body["run_id"] = *run;
  body["run"] =
      absl::StrCat("/v1/jobs/", key.name_space, "/", key.id, "/runs/", *run);
  http::Response response = JsonResponse(body, 201);
  response.headers.emplace_back("Location", body["run"].get<std::string>());
  return response;
}

http::Response Act(const ApiDeps& deps, const http::Request& request,
                   const std::string& who) {
  absl::StatusOr<std::vector<std::string>> parts =
      PathSegments(request.path, "/v1/jobs/");
  if (!parts.ok()) return ProblemFromStatus(parts.status());
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  if (parts->size() == 3 && !(*parts)[0].empty() && !(*parts)[1].empty() &&
      (*parts)[2] == "trigger") {
    return Trigger(deps, JobKey{(*parts)[0], (*parts)[1]}, who);
  }
  return Problem(404,
                 absl::StrCat("no such operation: POST ", request.path,
                              " (POST /v1/jobs/{namespace}/{id}/trigger)"));
}

}  // namespace

void internal::AddActionRoutes(http::Router& router, const ApiDeps& deps) {
  router.HandlePrefix(
      "POST", "/v1/jobs/",
      deps.auth->Guard(Role::kWrite,
                       [deps](const http::Request& r, const std::string& who) {
                         return Act(deps, r, who);
                       }));
}

}  // namespace chime::api
