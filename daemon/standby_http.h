// The HTTP listener of a standby: a daemon on a shared store that waits for
// the scheduler's lease (daemon/store_open.h). It is up for as long as the
// daemon waits, on the daemon's `listen` address, so that a node is never a
// closed port while it lives:
//   /healthz      200 "ok" (the process runs: a liveness probe passes);
//   /readyz       503 {"ready":false,"role":"standby","scheduler":"node-1"}
//                 (a load balancer sends it nothing);
//   /metrics      this node's clock offset from the store's, and
//                 chime_standby 1;
//   the API, from the store (api::ApiDeps without a scheduler), with the
//                 same tokens: the reads -- GET /v1/jobs[/...] (a job's next
//                 fire time from the store's watermark), /v1/runs,
//                 /v1/runs/per-minute, /v1/dead-letters,
//                 /v1/schedule/preview, /v1/status ("role": "standby"),
//                 /v1/namespaces, /v1/whoami, /v1/cluster -- and the job
//                 changes: create, replace, patch, delete, pause, resume,
//                 written to the store; the scheduling node follows them
//                 (daemon/job_follower.h); trigger, cancel and retry,
//                 forwarded to the scheduling node (daemon/forward.h);
//   / and /ui/    the web UI, under a banner naming the scheduling node;
//   /v1/... else  (the event stream) 503 problem naming the scheduling
//                 node, Retry-After 1.
// When the daemon takes the lease it stops this listener and starts its full
// one on the same port.
//
// Thread-safety: the server's (its handlers run on its pool).
#ifndef CHIME_DAEMON_STANDBY_HTTP_H_
#define CHIME_DAEMON_STANDBY_HTTP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "chime/store.h"
#include "daemon/logger.h"
#include "src/api/auth.h"
#include "src/api/routes.h"
#include "src/config/daemon_config.h"
#include "src/http/server.h"

namespace chime::daemon {

// Starts the standby's listener on config.listen. `store`, `auth`, what
// `daemon` refers to, `jobs` (a standby's JobRegistry: it writes job changes
// to the store) and `log` must outlive the server.
absl::StatusOr<std::unique_ptr<http::HttpServer>> StartStandbyHttp(
    const config::DaemonConfig& config, Store& store,
    const api::Authorizer& auth, const api::DaemonInfo& daemon,
    api::JobDefinitions& jobs, Logger& log);

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_STANDBY_HTTP_H_
