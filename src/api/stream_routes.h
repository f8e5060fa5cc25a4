// The streaming routes of the REST API (docs/api.md), role read:
//
//   GET /v1/events   run transitions and missed/skipped fires as server-sent
//                    events (text/event-stream; event_hub.h): ?namespace=
//                    &job=ns/id (or id: the default namespace). 503 beyond
//                    the hub's subscribers; 501 on a server without a hub.
//   GET /v1/jobs/{namespace}/{id}/runs/{run}/output
//                    the output of the run's latest attempt (text/plain): of
//                    the running attempt, what it has written so far
//                    (live_output.h), else the run history's. With
//                    ?follow=true a stream: what is there, then the output
//                    as it comes, ending when the attempt ends (a run that
//                    has no attempt yet is waited for); for an attempt that
//                    has ended, just its output.
//
// Internal to src/api. Thread-safety: as routes.h.
#ifndef CHIME_SRC_API_STREAM_ROUTES_H_
#define CHIME_SRC_API_STREAM_ROUTES_H_

#include "absl/strings/string_view.h"
#include "chime/store.h"
#include "src/api/routes.h"
#include "src/http/router.h"

namespace chime::api::internal {

// Registers GET /v1/events.
void AddEventRoutes(http::Router& router, const ApiDeps& deps);

// GET .../runs/{run}/output of `job` (the stored job the path names), with
// `run_text` the path's run segment.
http::Response RunOutput(const ApiDeps& deps, const JobRecord& job,
                         absl::string_view run_text,
                         const http::Request& request);

}  // namespace chime::api::internal

#endif  // CHIME_SRC_API_STREAM_ROUTES_H_
