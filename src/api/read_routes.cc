#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "chime/cron.h"
#include "chime/run_state.h"
#include "src/api/http_util.h"
#include "src/api/json_writer.h"
#include "src/api/routes.h"
#include "src/api/run_routes.h"
#include "src/api/stream_routes.h"
#include "src/config/job_writer.h"
#include "src/core/fire_source.h"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

// A filtered listing reads at most this many jobs per request; a page may
// come back short, with a cursor to go on from.
constexpr int kMaxScannedPerRequest = 20'000;

}  // namespace

void internal::WriteJobJson(const JobRecord& record,
                            std::optional<absl::Time> next_fire,
                            config::JsonOut& out) {
  const auto time_or_null = [&out](absl::Time t) {
    if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) {
      out.Null();
    } else {
      out.String(time::FormatUtc(t));
    }
  };
  out.BeginObject();
  out.Key("name");
  out.String(record.spec.key.ToString());
  out.Key("spec");
  config::WriteJobJson(record.spec, out);
  out.Key("status");
  out.BeginObject();
  out.Key("generation");
  out.Int(record.generation);
  out.Key("revision");
  out.Int(record.revision);
  out.Key("paused");
  out.Bool(record.spec.paused);
  out.Key("watermark");
  time_or_null(record.watermark);
  if (next_fire.has_value()) {
    out.Key("next_fire_time");
    time_or_null(*next_fire);
  }
  // Who defines the job: its job file (changes through the API are
  // refused), or the API.
  out.Key("managed_by");
  out.String(record.spec.source_file.empty() ? "api" : "file");
  if (!record.spec.source_file.empty()) {
    out.Key("file");
    out.String(record.spec.source_file);
  }
  out.EndObject();
  out.EndObject();
}

Json internal::JobJson(const JobRecord& record,
                       std::optional<absl::Time> next_fire) {
  Json j;
  config::JsonTreeOut out(&j);
  WriteJobJson(record, next_fire, out);
  return j;
}

std::string internal::JobJsonText(const JobRecord& record,
                                  std::optional<absl::Time> next_fire) {
  std::string text;
  JsonWriter w(&text);
  JsonWriterOut out(&w);
  WriteJobJson(record, next_fire, out);
  return text;
}

namespace {

// label=k=v filters: every one must match.
bool LabelsMatch(const JobSpec& spec,
                 const std::vector<std::pair<std::string, std::string>>& want) {
  for (const auto& [k, v] : want) {
    auto it = spec.labels.find(k);
    if (it == spec.labels.end() || it->second != v) return false;
  }
  return true;
}

// The search= filter: `lower_needle` (lower case) is part of the job's name
// ("ops/backup"), ignoring case; "" matches every job.
bool NameContains(const JobKey& key, absl::string_view lower_needle) {
  if (lower_needle.empty()) return true;
  return absl::StrContains(absl::AsciiStrToLower(key.ToString()), lower_needle);
}

// What a listing shows of the job's schedule without a round trip to the
// scheduler: its English description (for a cron or @every trigger) and,
// unless the job is paused, the first time it gives after `now` (null when
// it gives no more). The scheduler's own next fire time, which GET of one job
// shows, can differ from it only while a fire is being decided.
void AddScheduleSummary(const JobSpec& spec, absl::Time now, Json& status) {
  absl::StatusOr<core::FireSource> source = core::FireSource::Create(spec);
  if (!source.ok()) return;
  if (const cron::Schedule* s = source->schedule())
    status["schedule_description"] = s->Describe();
  status["next_fire_time"] =
      spec.paused ? Json(nullptr) : TimeOrNull(source->Next(now));
}

// The job's newest run (by scheduled time) as {"id", "state",
// "scheduled_time", "updated_at"}, or null when it has none: one indexed
// read of the run history (LIMIT 1 in SQLite's runs_by_job).
absl::StatusOr<Json> LastRunJson(Store& store, JobId job) {
  RunQuery query;
  query.job = job;
  query.limit = 1;
  absl::StatusOr<RunPage> page = store.ListRuns(query, StoreDeadline());
  if (!page.ok()) return page.status();
  if (page->runs.empty()) return Json(nullptr);
  const RunRecord& run = page->runs.front();
  Json j;
  j["id"] = run.id;
  j["state"] = std::string(RunStateName(run.state));
  j["scheduled_time"] = time::FormatUtc(run.fire.scheduled_time);
  j["updated_at"] = time::FormatUtc(run.updated_at);
  return j;
}

absl::StatusOr<std::optional<bool>> ParseBool(const Query& q,
                                              absl::string_view name) {
  absl::StatusOr<std::optional<std::string>> text = q.One(name);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::optional<bool>();
  if (**text == "true") return std::optional<bool>(true);
  if (**text == "false") return std::optional<bool>(false);
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": \"", **text, "\" is not true or false"));
}

http::Response ListJobs(const ApiDeps& deps, const http::Request& request) {
  absl::StatusOr<Query> q =
      Query::Parse(request.query, {"namespace", "label", "paused", "search",
                                   "last_run", "limit", "cursor"});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<int64_t> limit = q->Int("limit", 100, 1, 1000);
  if (!limit.ok()) return ProblemFromStatus(limit.status());
  absl::StatusOr<std::optional<std::string>> ns = q->One("namespace");
  if (!ns.ok()) return ProblemFromStatus(ns.status());
  absl::StatusOr<std::optional<bool>> paused = ParseBool(*q, "paused");
  if (!paused.ok()) return ProblemFromStatus(paused.status());
  absl::StatusOr<std::optional<std::string>> search = q->One("search");
  if (!search.ok()) return ProblemFromStatus(search.status());
  const std::string needle = absl::AsciiStrToLower(search->value_or(""));
  absl::StatusOr<std::optional<bool>> last_run = ParseBool(*q, "last_run");
  if (!last_run.ok()) return ProblemFromStatus(last_run.status());
  std::vector<std::pair<std::string, std::string>> labels;
  for (const std::string& label : q->All("label")) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(label, absl::MaxSplits('=', 1));
    if (label.find('=') == std::string::npos || kv.first.empty()) {
      return Problem(400, absl::StrCat("label: \"", label,
                                       "\" is not of the form key=value"));
    }
    labels.push_back(std::move(kv));
  }
  absl::StatusOr<std::optional<std::string>> cursor = q->One("cursor");
  if (!cursor.ok()) return ProblemFromStatus(cursor.status());
  JobId after = 0;
  if (cursor->has_value() && (!absl::SimpleAtoi(**cursor, &after) || after < 0))
    return Problem(400, absl::StrCat("cursor: \"", **cursor,
                                     "\" is not a cursor this server gave"));

  const absl::Time now = absl::Now();
  Json jobs = Json::array();
  bool done = false;
  int scanned = 0;
  // Reads pages of at least kScanPage jobs (a filter may match few of them)
  // and stops at the limit: the cursor is then the last job looked at.
  constexpr int kScanPage = 256;
  while (static_cast<int64_t>(jobs.size()) < *limit &&
         scanned < kMaxScannedPerRequest) {
    const int want = static_cast<int>(*limit) - static_cast<int>(jobs.size());
    absl::StatusOr<JobPage> page =
        deps.store->LoadJobs(after, std::max(want, kScanPage), StoreDeadline());
    if (!page.ok()) return ProblemFromStatus(page.status());
    bool filled = false;
    for (size_t i = 0; i < page->jobs.size() && !filled; ++i) {
      const JobRecord& record = page->jobs[i];
      const JobSpec& spec = record.spec;
      after = record.id;
      ++scanned;
      if ((!ns->has_value() || spec.key.name_space == **ns) &&
          (!paused->has_value() || spec.paused == **paused) &&
          LabelsMatch(spec, labels) && NameContains(spec.key, needle)) {
        Json job = internal::JobJson(record, std::nullopt);
        AddScheduleSummary(spec, now, job["status"]);
        if (last_run->value_or(false)) {
          absl::StatusOr<Json> last = LastRunJson(*deps.store, record.id);
          if (!last.ok()) return ProblemFromStatus(last.status());
          job["last_run"] = *std::move(last);
        }
        jobs.push_back(std::move(job));
      }
      filled = static_cast<int64_t>(jobs.size()) == *limit;
      // The page's last job ends the listing if the store has no more.
      if (filled && i + 1 == page->jobs.size() && page->done) done = true;
    }
    if (filled) break;
    after = page->next_after;
    if (page->done) {
      done = true;
      break;
    }
  }
  Json body;
  body["jobs"] = std::move(jobs);
  body["next_cursor"] = done ? Json(nullptr) : Json(absl::StrCat(after));
  return JsonResponse(body);
}

// `inline_pages`: bounded run pages run on the I/O thread that read them
// (BoundedRunPage), outside the gate.
http::Response GetJob(const ApiDeps& deps, ConcurrencyGate& history_gate,
                      bool inline_pages, const http::Request& request) {
  absl::StatusOr<std::vector<std::string>> parts =
      PathSegments(request.path, "/v1/jobs/");
  if (!parts.ok()) return ProblemFromStatus(parts.status());
  if (parts->size() < 2 || (*parts)[0].empty() || (*parts)[1].empty()) {
    return Problem(404, absl::StrCat("no such resource: ", request.path,
                                     " (jobs are /v1/jobs/{namespace}/{id})"));
  }
  // A job's history (runs, a run, missed fires; not a run's output, which
  // may follow the run) is read through the gate.
  std::optional<ConcurrencyGate::Pass> pass;
  if (parts->size() > 2 && parts->back() != "output" &&
      !(inline_pages && internal::BoundedRunPage(request)))
    pass.emplace(history_gate.Enter());
  const JobKey key{(*parts)[0], (*parts)[1]};
  absl::StatusOr<JobRecord> record = deps.store->GetJob(key, StoreDeadline());
  if (absl::IsNotFound(record.status())) {
    return Problem(404, absl::StrCat("no job ", key.ToString()));
  }
  if (!record.ok()) return ProblemFromStatus(record.status());
  if (parts->size() == 3 && (*parts)[2] == "next") {
    return internal::JobNext(*record, request);
  }
  if (parts->size() == 5 && (*parts)[2] == "runs" && (*parts)[4] == "output") {
    return internal::RunOutput(deps, *record, (*parts)[3], request);
  }
  if (parts->size() > 2) {
    return internal::JobHistory(
        *deps.store, *record,
        std::vector<std::string>(parts->begin() + 2, parts->end()), request);
  }
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<core::FireSource> source =
      core::FireSource::Create(record->spec);
  Json body = internal::JobJson(*record, internal::NextFire(deps, *record));
  if (source.ok() && source->schedule() != nullptr)
    body["status"]["schedule_description"] = source->schedule()->Describe();
  return JsonResponse(body);
}

}  // namespace

std::optional<uint32_t> internal::ShardElsewhere(const absl::Status& status) {
  if (!absl::IsFailedPrecondition(status)) return std::nullopt;
  const auto shard = status.GetPayload(kShardElsewherePayload);
  uint32_t n = 0;
  if (!shard.has_value() || !absl::SimpleAtoi(std::string(*shard), &n))
    return std::nullopt;
  return n;
}

std::optional<absl::Time> internal::NextFire(const ApiDeps& deps,
                                             const JobRecord& record) {
  if (deps.scheduler != nullptr) {
    absl::StatusOr<absl::Time> t =
        deps.scheduler->NextFireTime(record.spec.key);
    if (t.ok()) return *t;
    // Another node schedules it: from the store, as a standby does.
    if (!ShardElsewhere(t.status()).has_value()) return std::nullopt;
  }
  if (record.spec.paused) return std::nullopt;
  absl::StatusOr<core::FireSource> source =
      core::FireSource::Create(record.spec);
  if (!source.ok()) return std::nullopt;
  // A standby: the first fire after the store's watermark -- what the
  // scheduler decides next (in the past if it is behind). Without a
  // watermark of this generation (a schedule just changed), after now.
  const absl::Time t = source->Next(
      record.watermark_generation == record.generation ? record.watermark
                                                       : absl::Now());
  if (t == absl::InfiniteFuture()) return std::nullopt;
  return t;
}

void AddRoutes(http::Router& router, const ApiDeps& deps) {
  internal::AddReadRoutes(router, deps);
  internal::AddStatusRoutes(router, deps);
  internal::AddClusterRoutes(router, deps);
  auto gate = std::make_shared<IdempotencyGate>(deps.store);
  internal::AddActionRoutes(router, deps, gate);
  internal::AddWriteRoutes(router, deps, gate);
}

void internal::AddReadRoutes(http::Router& router, const ApiDeps& deps) {
  const Authorizer& auth = *deps.auth;
  router.Handle("GET", "/v1/jobs",
                auth.Guard(Role::kRead, [deps](const http::Request& r) {
                  return ListJobs(deps, r);
                }));
  // Run histories are CPU-bound reads (the store, then the JSON of up to a
  // page of runs): at most one per core at a time, in arrival order, so
  // that each runs to its end once begun rather than share the cores with
  // 31 others (concurrency_gate.h). Job listings (a search may be long)
  // and everything else are not held by it.
  // A bounded run page (the common read: a dashboard's, a CLI's) is
  // answered on the I/O thread that read it, without two hand-offs between
  // threads, when the store reads a local file (the embedded SQLite, with a
  // read connection for every thread: daemon/store_open.h); a shared store's
  // read is a network round trip, on the pool.
  auto history_gate = std::make_shared<ConcurrencyGate>(
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const bool inline_pages = !deps.daemon.shared_store;
  router.HandlePrefix(
      "GET", "/v1/jobs/",
      auth.Guard(Role::kRead,
                 [deps, history_gate, inline_pages](const http::Request& r) {
                   return GetJob(deps, *history_gate, inline_pages, r);
                 }),
      {.run_inline = inline_pages ? internal::BoundedRunPage : nullptr});
  internal::AddRunListRoutes(router, deps.store, auth, history_gate,
                             inline_pages);
  router.Handle("GET", "/v1/schedule/preview",
                auth.Guard(Role::kRead, [](const http::Request& r) {
                  return internal::SchedulePreview(r);
                }));
  internal::AddEventRoutes(router, deps);
}

}  // namespace chime::api
