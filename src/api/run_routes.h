// The run-history routes of a job (docs/api.md), dispatched by read_routes:
//
//   GET /v1/jobs/{namespace}/{id}/runs          ?state= &from= &to= (RFC
//                                               3339, scheduled time in
//                                               [from, to)) &limit= &cursor=
//   GET /v1/jobs/{namespace}/{id}/runs/{run}    one run: attempts (with their
//                                               output) and transitions
//   GET /v1/jobs/{namespace}/{id}/missed        fires that did not run, with
//                                               the reason: &limit= &cursor=
//
// Internal to src/api. Thread-safety: as routes.h.
#ifndef CHIME_SRC_API_RUN_ROUTES_H_
#define CHIME_SRC_API_RUN_ROUTES_H_

#include <string>
#include <vector>

#include "chime/store.h"
#include "src/http/router.h"

namespace chime::api::internal {

// `job` is the stored job the path names; `rest` the segments after its id
// ({"runs"}, {"runs", "17"}, {"missed"}).
http::Response JobHistory(Store& store, const JobRecord& job,
                          const std::vector<std::string>& rest,
                          const http::Request& request);

}  // namespace chime::api::internal

#endif  // CHIME_SRC_API_RUN_ROUTES_H_
