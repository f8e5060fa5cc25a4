// The read-only part of the REST API (docs/api.md), on the daemon's listener:
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
// Errors are application/problem+json (http_util.h). Reads go to the store
// and, for a job's next fire time, to the scheduler.
//
// Thread-safety: the handlers may run concurrently (Store and Scheduler are
// thread-safe).
#ifndef CHIME_SRC_API_READ_ROUTES_H_
#define CHIME_SRC_API_READ_ROUTES_H_

#include "chime/scheduler.h"
#include "chime/store.h"
#include "src/http/router.h"

namespace chime::api {

struct ReadDeps {
  Store* store = nullptr;          // required; outlives the router
  Scheduler* scheduler = nullptr;  // required; outlives the router
};

void AddReadRoutes(http::Router& router, ReadDeps deps);

}  // namespace chime::api

#endif  // CHIME_SRC_API_READ_ROUTES_H_
