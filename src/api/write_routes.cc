// Creating, replacing, patching and deleting jobs (routes.h): POST /v1/jobs,
// PUT / PATCH / DELETE /v1/jobs/{namespace}/{id}.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "src/api/http_util.h"
#include "src/api/idempotency.h"
#include "src/api/job_body.h"
#include "src/api/routes.h"
#include "src/base/status_macros.h"
#include "src/config/job_writer.h"
#include "src/http/deferred_response.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

std::string JobPath(const JobKey& key) {
  return absl::StrCat("/v1/jobs/", key.name_space, "/", key.id);
}

// FailedPrecondition (for a 415) unless the body is of one of `types`.
absl::Status CheckContentType(const http::Request& request,
                              std::vector<absl::string_view> types) {
  absl::string_view type = request.Header("Content-Type");
  type = absl::StripAsciiWhitespace(type.substr(0, type.find(';')));
  bool accepted = false;
  for (absl::string_view t : types) accepted |= absl::EqualsIgnoreCase(type, t);
  if (!accepted) {
    return absl::FailedPreconditionError(
        absl::StrCat("Content-Type \"", type, "\": this takes ",
                     absl::StrJoin(types, " or ")));
  }
  return absl::OkStatus();
}

// The body as a JSON object; 415 for another content type, 400 otherwise.
absl::StatusOr<Json> BodyObject(const http::Request& request,
                                std::vector<absl::string_view> types) {
  RETURN_IF_ERROR(CheckContentType(request, std::move(types)));
  return ParseJsonObject(request.body);
}

// An If-Match / If-None-Match precondition as a Store revision.
absl::StatusOr<int64_t> ExpectedRevision(const http::Request& request) {
  absl::string_view match = request.Header("If-Match");
  if (request.Header("If-None-Match") == "*") {
    if (!match.empty()) {
      return absl::InvalidArgumentError(
          "If-Match and If-None-Match: * together cannot both hold");
    }
    return kNoRevision;
  }
  // "*" is resolved by the caller, which reads the job.
  if (match.empty() || match == "*") return kAnyRevision;
  absl::string_view tag = match;
  absl::ConsumePrefix(&tag, "W/");
  int64_t revision = 0;
  if (!absl::ConsumePrefix(&tag, "\"") || !absl::ConsumeSuffix(&tag, "\"") ||
      !absl::SimpleAtoi(tag, &revision) || revision < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "If-Match: ", match, " is not an ETag this server gave (\"7\")"));
  }
  return revision;
}

// The answer to a job change that failed: If-Match mismatches are 412, a
// create of an existing job 409.
http::Response ChangeProblem(const absl::Status& s, const JobKey& key,
                             int64_t expected) {
  if (absl::IsAborted(s)) {
    if (expected == kNoRevision) {
      return Problem(
          409, absl::StrCat("job ", key.ToString(), " already exists; PUT ",
                            JobPath(key), " replaces it"));
    }
    return Problem(412, absl::StrCat("job ", key.ToString(),
                                     " has changed since revision ", expected,
                                     "; read it again"));
  }
  if (absl::IsNotFound(s)) return Problem(404, s.message());
  return ProblemFromStatus(s);
}

// Running a command on the host is more than changing a schedule.
std::optional<http::Response> CheckMayRun(const ApiDeps& deps,
                                          const http::Request& request,
                                          const JobSpec& spec) {
  if (spec.executor.kind != ExecutorSpec::Kind::kShell) return std::nullopt;
  absl::StatusOr<std::string> who = deps.auth->Check(request, Role::kAdmin);
  if (who.ok()) return std::nullopt;
  return Problem(403, absl::StrCat("a job that runs a command needs role "
                                   "admin: ",
                                   who.status().message()));
}

// The answer to a put, once it is durable (or refused).
http::Response Stored(const ApiDeps::OnChange& on_change, const JobKey& key,
                      const std::string& who, int64_t expected,
                      absl::StatusOr<JobDefinitions::PutResult> put) {
  if (!put.ok()) return ChangeProblem(put.status(), key, expected);
  if (on_change) {
    on_change(put->created ? "job created" : "job replaced", key, who,
              absl::StrCat("revision ", put->record.revision));
  }
  http::Response response =
      JsonTextResponse(internal::JobJsonText(put->record, std::nullopt),
                       put->created ? 201 : 200);
  response.headers.emplace_back("ETag",
                                absl::StrCat("\"", put->record.revision, "\""));
  if (put->created) response.headers.emplace_back("Location", JobPath(key));
  return response;
}

// Answered once the put is durable, from the registry's thread: no server
// thread waits for the commit.
http::Response Store(const ApiDeps& deps, const http::Request& request,
                     const std::string& who, JobSpec spec, int64_t expected) {
  if (std::optional<http::Response> denied = CheckMayRun(deps, request, spec))
    return *std::move(denied);
  std::shared_ptr<http::DeferredResponse> later =
      http::DeferredResponse::Create();
  // Copies: the answer may come after the router is gone.
  JobKey key = spec.key;
  deps.jobs->PutAsync(
      std::move(spec), expected,
      [later, key = std::move(key), who, expected, on_change = deps.on_change](
          absl::StatusOr<JobDefinitions::PutResult> put) {
        later->Complete(Stored(on_change, key, who, expected, std::move(put)));
      });
  return later->Response();
}

http::Response Create(const ApiDeps& deps, const http::Request& request,
                      const std::string& who) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  if (absl::Status s = CheckContentType(request, {"application/json"}); !s.ok())
    return Problem(415, s.message());
  absl::StatusOr<JobSpec> spec = ReadJobText(request.body);
  if (!spec.ok()) return ProblemFromStatus(spec.status());
  return Store(deps, request, who, *std::move(spec), kNoRevision);
}

// PUT, PATCH and DELETE of /v1/jobs/{namespace}/{id}.
http::Response Change(const ApiDeps& deps, const http::Request& request,
                      const std::string& who) {
  absl::StatusOr<std::vector<std::string>> parts =
      PathSegments(request.path, "/v1/jobs/");
  if (!parts.ok()) return ProblemFromStatus(parts.status());
  if (parts->size() != 2 || (*parts)[0].empty() || (*parts)[1].empty()) {
    return Problem(404, absl::StrCat("no such resource: ", request.method, " ",
                                     request.path,
                                     " (jobs are /v1/jobs/{namespace}/{id})"));
  }
  const JobKey key{(*parts)[0], (*parts)[1]};
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<int64_t> expected = ExpectedRevision(request);
  if (!expected.ok()) return ProblemFromStatus(expected.status());
  if (request.Header("If-Match") == "*") {
    // "*": the job must exist (RFC 9110 13.1.1); the change is then
    // conditional on the revision read here.
    absl::StatusOr<JobRecord> current =
        deps.store->GetJob(key, StoreDeadline());
    if (absl::IsNotFound(current.status())) {
      return Problem(412, absl::StrCat("job ", key.ToString(),
                                       " does not exist (If-Match: *)"));
    }
    if (!current.ok()) return ProblemFromStatus(current.status());
    expected = current->revision;
  }

  if (request.method == "DELETE") {
    absl::Status s = deps.jobs->Delete(key, *expected);
    if (!s.ok()) return ChangeProblem(s, key, *expected);
    if (deps.on_change) deps.on_change("job deleted", key, who, "");
    return http::Response{.status = 204, .content_type = "", .body = ""};
  }
  const bool patch = request.method == "PATCH";
  absl::StatusOr<Json> body = BodyObject(
      request,
      patch ? std::vector<absl::string_view>{"application/merge-patch+json",
                                             "application/json"}
            : std::vector<absl::string_view>{"application/json"});
  if (absl::IsFailedPrecondition(body.status()))
    return Problem(415, body.status().message());
  if (!body.ok()) return ProblemFromStatus(body.status());
  if (!patch) {
    absl::StatusOr<JobSpec> spec = ReadJobJson(*std::move(body), &key);
    if (!spec.ok()) return ProblemFromStatus(spec.status());
    return Store(deps, request, who, *std::move(spec), *expected);
  }
  // PATCH: the merge patch applied to the job as stored, written back only
  // if nobody changed it meanwhile.
  absl::StatusOr<JobRecord> current = deps.store->GetJob(key, StoreDeadline());
  if (absl::IsNotFound(current.status()))
    return Problem(404, absl::StrCat("no job ", key.ToString()));
  if (!current.ok()) return ProblemFromStatus(current.status());
  if (*expected != kAnyRevision && *expected != current->revision)
    return ChangeProblem(absl::AbortedError(""), key, *expected);
  Json merged = config::JobToJson(current->spec);
  merged.merge_patch(*body);
  if (!merged.is_object())
    return Problem(400, "body: the patch removes the job");
  absl::StatusOr<JobSpec> spec = ReadJobJson(std::move(merged), &key);
  if (!spec.ok()) return ProblemFromStatus(spec.status());
  return Store(deps, request, who, *std::move(spec), current->revision);
}

http::Response NotConfigured() {
  return Problem(501, "changing jobs is not available on this server");
}

}  // namespace

void internal::AddWriteRoutes(http::Router& router, const ApiDeps& deps,
                              std::shared_ptr<IdempotencyGate> gate) {
  const Authorizer& auth = *deps.auth;
  // A create or replace answers once its put is durable (deferred), so it
  // runs inline; one with an Idempotency-Key waits to keep its answer, and
  // PATCH and DELETE wait for the store too: those run on the server's pool.
  router.Handle(
      "POST", "/v1/jobs",
      auth.Guard(Role::kWrite,
                 [deps, gate](const http::Request& r, const std::string& who) {
                   if (deps.jobs == nullptr) return NotConfigured();
                   return gate->Run(r, who,
                                    [&] { return Create(deps, r, who); });
                 }),
      {.run_inline = [](const http::Request& r) {
        return r.Header("Idempotency-Key").empty();
      }});
  for (const char* method : {"PUT", "PATCH", "DELETE"}) {
    http::RouteOptions options;
    if (absl::string_view(method) == "PUT")
      options.run_inline = http::AlwaysInline;
    router.HandlePrefix(
        method, "/v1/jobs/",
        auth.Guard(Role::kWrite,
                   [deps](const http::Request& r, const std::string& who) {
                     if (deps.jobs == nullptr) return NotConfigured();
                     return Change(deps, r, who);
                   }),
        std::move(options));
  }
}

}  // namespace chime::api
