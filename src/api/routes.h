// The REST API (docs/api.md), on the daemon's listener. Reads (role read):
//
//   GET /v1/jobs                   jobs, paged: ?namespace= &label=k=v
//                                  (repeatable, all must match) &paused=
//                                  true|false &search= (part of the name,
//                                  any case) &last_run=true (each job's
//                                  newest run) &limit= (1-1000, default
//                                  100) &cursor= (the previous page's
//                                  next_cursor)
//   GET /v1/jobs/{namespace}/{id}  one job, with its next fire time
//   GET /v1/jobs/{namespace}/{id}/runs[/{run}], .../missed: its history
//                                  (run_routes.h)
//   GET /v1/runs, /v1/dead-letters every job's runs, and its failed ones;
//   GET /v1/runs/per-minute        their counts by minute and state
//                                  (run_routes.h)
//   GET /v1/jobs/{namespace}/{id}/runs/{run}/output  its latest attempt's
//                                  output, ?follow=true as it comes; GET
//                                  /v1/events: run transitions as server-sent
//                                  events (stream_routes.h)
//   GET /v1/schedule/preview       ?expression= &zone= &count= (1-1000,
//                                  default 10) &from= (RFC 3339; default now)
//                                  &dialect=: the description and the next
//                                  fire times, each with its local time, and
//                                  the offset change (daylight saving) since
//                                  the previous one; or 400 with the parse
//                                  error and its column
//   GET /v1/status                 what an operator checks first: version,
//                                  uptime, the scheduler's counts, job file
//                                  errors, the store's size (status_routes.cc)
//   GET /v1/namespaces             each namespace's jobs (paused ones too)
//                                  and runs pending/running; reads every
//                                  stored job, up to 1,000,000
//   GET /v1/whoami                 the caller's token name and role (for
//                                  the web UI: which buttons to show)
//
// A job is shown as {"name", "spec", "status"}: "spec" in the job-file shape
// (config::JobToJson: what `chime job apply -f` takes), "status" what the
// scheduler and the store know (generation, revision, paused, next fire).
// Changes (role write, and admin for a job that runs a command; each is
// logged through on_change with the token's name; write_routes.cc):
//
//   POST   /v1/jobs                      creates the job the body defines
//                                        (201; 409 if it exists)
//   PUT    /v1/jobs/{namespace}/{id}     creates or replaces it (201 / 200);
//                                        If-Match: "<revision>" makes it
//                                        conditional (412 if stale),
//                                        If-None-Match: * create-only
//   PATCH  /v1/jobs/{namespace}/{id}     a JSON merge patch (RFC 7396) of
//                                        the job-file shape
//   DELETE /v1/jobs/{namespace}/{id}     204; If-Match as for PUT
//   POST   /v1/jobs/{namespace}/{id}/pause, .../resume   (200, the job)
//   POST   /v1/jobs/{namespace}/{id}/trigger   runs the job now (201, the run)
//
// Bodies are JSON in the job-file shape (config::JobToJson); a body that is
// not JSON, is not an object, has an unknown field or a value of the wrong
// type or out of range is 400 naming the field. Jobs a job file defines are
// refused (409: change the file). POST takes an Idempotency-Key
// (idempotency.h).
//
// Errors are application/problem+json (http_util.h); access is checked by
// the Authorizer (auth.h). Reads go to the store and, for a job's next fire
// time, to the scheduler; operations go to the scheduler.
//
// Thread-safety: the handlers may run concurrently (Store and Scheduler are
// thread-safe).
#ifndef CHIME_SRC_API_ROUTES_H_
#define CHIME_SRC_API_ROUTES_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "nlohmann/json.hpp"
#include "src/api/auth.h"
#include "src/api/idempotency.h"
#include "src/config/json_out.h"
#include "src/http/router.h"

namespace chime::api {

class EventHub;    // event_hub.h
class LiveOutput;  // live_output.h

// Changes to job definitions made through the API. The daemon implements it
// (daemon/job_registry.h), serialized with its reloads of the job files, and
// keeps the jobs it is given in the store and the scheduler.
class JobDefinitions {
 public:
  struct PutResult {
    JobRecord record;      // in force after the put
    bool created = false;  // the job did not exist (or was deleted)
  };
  using PutDone = std::function<void(absl::StatusOr<PutResult>)>;
  virtual ~JobDefinitions() = default;
  // Creates or replaces the job (its source_file is cleared: the job is the
  // API's), durably, and puts it in force; then calls `done` with the
  // outcome, once, on a thread of the implementation's (or on this one, for
  // a put refused before it is queued). `done` must be quick and must not
  // call back into this object. expected_revision as for Store::PutJobs
  // (Aborted on a mismatch). FailedPrecondition, naming the file, for a job a
  // job file defines.
  virtual void PutAsync(JobSpec spec, int64_t expected_revision,
                        PutDone done) = 0;
  // Deletes the job. NotFound if there is none; Aborted, FailedPrecondition
  // as for Put.
  virtual absl::Status Delete(const JobKey& key, int64_t expected_revision) = 0;
  // Pauses or resumes the job (a no-op if it is already so); the record
  // after. NotFound, FailedPrecondition as above.
  virtual absl::StatusOr<JobRecord> SetPaused(const JobKey& key,
                                              bool paused) = 0;
};

// What GET /v1/status shows of the daemon itself; the route reads the rest
// (the scheduler's and the store's counts) from ApiDeps.
struct DaemonInfo {
  // The daemon's version, "0.1.0".
  std::string version;
  // When the daemon started.
  absl::Time started_at = absl::InfinitePast();
  // This node's name, whether its store is shared by several daemons, and
  // its bound on clock skew (GET /v1/cluster). A store not shared is read
  // from a local file: its bounded run pages are then answered on the
  // listener's I/O threads (run_routes.h, BoundedRunPage).
  std::string node_name;
  bool shared_store = false;
  absl::Duration max_clock_skew = absl::InfiniteDuration();
  // The store's clock minus this node's, as last measured; null or nothing:
  // not measured.
  std::function<std::optional<absl::Duration>()> clock_offset;
  // The job files that do not load ("jobs/a.yaml:3:5: ..."); null: none
  // are known. Called on the handler's thread.
  std::function<std::vector<std::string>()> job_file_errors;
};

struct ApiDeps {
  // Required (but `scheduler`, see below); all outlive the router.
  Store* store = nullptr;
  // Null on a standby, which serves the reads from the store alone
  // (AddReadRoutes, AddStatusRoutes): a job's next fire time is then the
  // first after the store's watermark, GET /v1/status says "role":
  // "standby" with "scheduler": null, and GET /v1/namespaces has no load
  // (runs_pending, runs_running null). The other routes require it.
  Scheduler* scheduler = nullptr;
  const Authorizer* auth = nullptr;
  // Required for the routes that change jobs (without it they answer 501).
  JobDefinitions* jobs = nullptr;
  // Told of every change made through the API: what ("job triggered"), the
  // job, who (the token's name; "" without tokens) and a detail ("run 17").
  using OnChange =
      std::function<void(absl::string_view what, const JobKey& job,
                         const std::string& who, const std::string& detail)>;
  OnChange on_change;
  // For GET /v1/status (left at its defaults: no version, no start time).
  DaemonInfo daemon;
  // Optional; outlive the router. The event stream (without it GET
  // /v1/events answers 501) and the output of running attempts (without it
  // a run's output is the run history's, and follow does not wait).
  EventHub* events = nullptr;
  LiveOutput* live_output = nullptr;
  // A standby's (no scheduler): carries a request only the scheduling node
  // can answer -- trigger, cancel, retry -- to it, and answers with its
  // answer (daemon/forward.h). Null: such requests answer 503 naming the
  // scheduling node.
  std::function<http::Response(const http::Request&)> forward;
  // A node of a sharded cluster's: carries a trigger, cancel or retry of a
  // job whose shard another node holds (the scheduler answers with
  // kShardElsewherePayload) to that node (daemon/forward.h). Null: such
  // requests answer the scheduler's 409.
  std::function<http::Response(const http::Request&, uint32_t shard)>
      forward_to_shard;
};

void AddRoutes(http::Router& router, const ApiDeps& deps);

namespace internal {
void AddReadRoutes(http::Router& router, const ApiDeps& deps);
// POSTs pass through `gate` (Idempotency-Key).
void AddActionRoutes(http::Router& router, const ApiDeps& deps,
                     std::shared_ptr<IdempotencyGate> gate);
void AddWriteRoutes(http::Router& router, const ApiDeps& deps,
                    std::shared_ptr<IdempotencyGate> gate);
// GET /v1/status, GET /v1/namespaces, GET /v1/whoami (status_routes.cc).
void AddStatusRoutes(http::Router& router, const ApiDeps& deps);
// GET /v1/cluster (cluster_routes.cc).
void AddClusterRoutes(http::Router& router, const ApiDeps& deps);
// The scheduling node's name (the live scheduler lease's holder's), or
// nothing (none holds it, or the store does not answer).
std::optional<std::string> SchedulingNode(Store& store);
// The answer of a standby (this node, `node`) to a request only the
// scheduling node can carry out: 503 naming it, Retry-After 1.
http::Response NotTheScheduler(Store& store, absl::string_view node);
// The scheduler lease among `leases` if someone holds it now, else null.
const LeaseInfo* LiveSchedulerLease(const std::vector<LeaseInfo>& leases);
// The node a lease holder names: "<node> pid <pid>[ scheduler <n>]" (node
// names have no spaces).
std::string NodeOfHolder(absl::string_view holder);
// The URL a lease holder advertises ("... url http://10.0.0.5:8712"), or "".
std::string UrlOfHolder(absl::string_view holder);
// The shard of a FailedPrecondition a scheduler with shards answers for a
// job another node schedules (kShardElsewherePayload), or nothing.
std::optional<uint32_t> ShardElsewhere(const absl::Status& status);
// The job's next fire time as the API shows it: the scheduler's; on a
// standby (no scheduler) the first after the store's watermark; nothing when
// paused or there is none.
std::optional<absl::Time> NextFire(const ApiDeps& deps,
                                   const JobRecord& record);
// The job as the API shows it: {"name", "spec", "status"}; next_fire is
// shown when known. WriteJobJson writes it to `out`; JobJson gives it as a
// tree and JobJsonText as the text JsonResponse would print of that tree.
void WriteJobJson(const JobRecord& record, std::optional<absl::Time> next_fire,
                  config::JsonOut& out);
nlohmann::ordered_json JobJson(const JobRecord& record,
                               std::optional<absl::Time> next_fire);
std::string JobJsonText(const JobRecord& record,
                        std::optional<absl::Time> next_fire);
// GET /v1/schedule/preview: an expression's description and next fire times
// (schedule_routes.cc).
http::Response SchedulePreview(const http::Request& request);
// GET /v1/jobs/{ns}/{id}/next: `job`'s own next fire times.
http::Response JobNext(const JobRecord& job, const http::Request& request);
}  // namespace internal

}  // namespace chime::api

#endif  // CHIME_SRC_API_ROUTES_H_
