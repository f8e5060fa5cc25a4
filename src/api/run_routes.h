// The run-history routes (docs/api.md). A job's, dispatched by read_routes:
//
//   GET /v1/jobs/{namespace}/{id}/runs          ?state= &from= &to= (RFC
//                                               3339, scheduled time in
//                                               [from, to)) &limit= &cursor=
//   GET /v1/jobs/{namespace}/{id}/runs/{run}    one run: attempts (with their
//                                               output) and transitions
//   GET /v1/jobs/{namespace}/{id}/missed        fires that did not run, with
//                                               the reason: &limit= &cursor=
//
// Every job's, registered by AddRunListRoutes (role read):
//
//   GET /v1/runs             ?state= &namespace= &from= &to= &limit= &cursor=
//   GET /v1/dead-letters     failed runs (their retries exhausted): the same
//                            without state
//   GET /v1/runs/per-minute  ?minutes= (1-1440, default 30) &namespace=: the
//                            runs of the last minutes counted by scheduled
//                            minute and state (for the web UI's overview)
//
// Both newest scheduled time first (then highest run id), each run as a
// job's list shows it plus "job" (its name, "ops/report") and "run" (its
// path, /v1/jobs/{namespace}/{id}/runs/{run}). A namespace filter may give
// a short page, even an empty one, with a next_cursor: follow it until null.
//
// Internal to src/api. Thread-safety: as routes.h.
#ifndef CHIME_SRC_API_RUN_ROUTES_H_
#define CHIME_SRC_API_RUN_ROUTES_H_

#include <memory>
#include <string>
#include <vector>

#include "chime/store.h"
#include "src/api/auth.h"
#include "src/base/concurrency_gate.h"
#include "src/http/router.h"

namespace chime::api::internal {

// `job` is the stored job the path names; `rest` the segments after its id
// ({"runs"}, {"runs", "17"}, {"missed"}).
http::Response JobHistory(Store& store, const JobRecord& job,
                          const std::vector<std::string>& rest,
                          const http::Request& request);

// True for GET /v1/jobs/{namespace}/{id}/runs and GET /v1/runs without a
// state or namespace filter and with a limit of at most 100 (or none): an
// index walk of at most 100 runs, answered in well under a millisecond,
// which the server may run on the thread that read it (RouteOptions::
// run_inline) and outside the history gate. Other listings may scan (a rare
// state, a namespace) or be long (limit=1000).
bool BoundedRunPage(const http::Request& request);

// GET /v1/runs/per-minute (run_counts.cc).
http::Response RunsPerMinute(Store& store, const http::Request& request);

// Registers GET /v1/runs, /v1/runs/per-minute and /v1/dead-letters;
// `store` (which may be null while no route is called) and `auth` outlive the
// router. The two run listings go through `gate` (shared with the job
// histories' reads), but for a BoundedRunPage with `inline_pages`, which
// runs inline.
void AddRunListRoutes(http::Router& router, Store* store,
                      const Authorizer& auth,
                      std::shared_ptr<ConcurrencyGate> gate, bool inline_pages);

}  // namespace chime::api::internal

#endif  // CHIME_SRC_API_RUN_ROUTES_H_
