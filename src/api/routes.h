// The REST API (docs/api.md), on the daemon's listener. Reads (role read):
//
//   GET /v1/jobs                   jobs, paged: ?namespace= &label=k=v
//                                  (repeatable, all must match) &paused=
//                                  true|false &limit= (1-1000, default 100)
//                                  &cursor= (the previous page's next_cursor)
//   GET /v1/jobs/{namespace}/{id}  one job, with its next fire time
//   GET /v1/jobs/{namespace}/{id}/runs[/{run}], .../missed: its history
//                                  (run_routes.h)
//   GET /v1/schedule/preview       ?expression= &zone= &count= (1-1000,
//                                  default 10) &from= (RFC 3339; default now)
//                                  &dialect=: the description and the next
//                                  fire times, each with its local time, and
//                                  the offset change (daylight saving) since
//                                  the previous one; or 400 with the parse
//                                  error and its column
//
// A job is shown as {"name", "spec", "status"}: "spec" in the job-file shape
// (config::JobToJson: what `chime job apply -f` takes), "status" what the
// scheduler and the store know (generation, revision, paused, next fire).
// Operations (role write; each is logged through on_change with the
// token's name):
//
//   POST /v1/jobs/{namespace}/{id}/trigger   runs the job now (201, the run)
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
#include <string>

#include "absl/strings/string_view.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "src/api/auth.h"
#include "src/http/router.h"

namespace chime::api {

struct ApiDeps {
  // Required; all outlive the router.
  Store* store = nullptr;
  Scheduler* scheduler = nullptr;
  const Authorizer* auth = nullptr;
  // Told of every change made through the API: what ("job triggered"), the
  // job, who (the token's name; "" without tokens) and a detail ("run 17").
  std::function<void(absl::string_view what, const JobKey& job,
                     const std::string& who, const std::string& detail)>
      on_change;
};

void AddRoutes(http::Router& router, const ApiDeps& deps);

namespace internal {
void AddReadRoutes(http::Router& router, const ApiDeps& deps);
void AddActionRoutes(http::Router& router, const ApiDeps& deps);
}  // namespace internal

}  // namespace chime::api

#endif  // CHIME_SRC_API_ROUTES_H_
