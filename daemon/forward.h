// Forwarding: a standby (daemon/standby_http.h) -- or, with shards, a node
// that does not hold the job's shard -- carries the requests only the
// scheduling node can answer -- POST .../trigger, .../runs/{run}/cancel and
// .../retry -- to it, at the URL the scheduler lease's holder advertises
// (" url http://10.0.0.5:8712"; SchedulerOptions::advertise_url), and answers
// with what it answered: status, body, Content-Type and Location.
//
// The request keeps its Authorization, Content-Type and body, and gains
// `Chime-Forwarded-By: <this node>` (its Idempotency-Key stays with the
// standby's own gate, which keeps the answer in the shared store); a request
// that already has that header is not forwarded again (503: one hop at most, so
// two standbys that both think the other schedules cannot bounce a request). No
// scheduling node, or none advertising a URL: 503 naming it, as before
// (Retry-After 1). The scheduling node unreachable or answering nothing
// within 10 s: 502 naming it and its URL (the action may or may not have been
// carried out; an Idempotency-Key makes a retry safe: a 5xx is not kept).
//
// Thread-safety: the function is called on the listener's threads,
// concurrently (one libcurl handle a call).
#ifndef CHIME_DAEMON_FORWARD_H_
#define CHIME_DAEMON_FORWARD_H_

#include <cstdint>
#include <functional>
#include <string>

#include "chime/store.h"
#include "src/http/router.h"

namespace chime::daemon {

inline constexpr char kForwardedByHeader[] = "Chime-Forwarded-By";

// ApiDeps::forward for standby `node` on `store` (which outlives it).
std::function<http::Response(const http::Request&)> ForwardToScheduler(
    Store& store, std::string node);

// ApiDeps::forward_to_shard for node `node` of a sharded cluster: the same,
// to the holder of the job's shard lease ("shard/<n>"); 503 (Retry-After 1)
// while no node holds it or it advertises no URL.
std::function<http::Response(const http::Request&, uint32_t shard)>
ForwardToShardHolder(Store& store, std::string node);

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_FORWARD_H_
