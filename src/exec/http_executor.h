// The HTTP executor: each attempt of a job with an HttpExecutorSpec is one
// HTTP request, made with libcurl on the worker thread that runs the attempt.
// RunHttp is the attempt itself (the daemon calls it with the spec it unpacks
// for each attempt); MakeHttpFunction makes a JobFunction of a spec for
// library users.
//
// What is sent:
//   - `spec.method` to `spec.url` (http:// or https:// only), `spec.headers`
//     and `spec.body`. A body is sent with any method but HEAD; POST, PUT and
//     PATCH always carry one (Content-Length: 0 when empty). No Content-Type
//     is added: set one in `spec.headers` when the target needs it.
//   - the attempt's identity: `Idempotency-Key: <fire_id>`, one `Chime-*`
//     header per IdentityFields entry (`Chime-Job`, `Chime-Fire-Id`,
//     `Chime-Scheduled-Time`, `Chime-Attempt`, `Chime-Fencing-Token`,
//     `Chime-Run-Id`) and a W3C `traceparent` (src/exec/attempt_identity.h).
//     These always win: a user header with one of these names (in any case)
//     is dropped, so a target can trust them for deduplication.
//
// How it is sent: TLS peers are verified unless `spec.verify_tls` is false;
// `spec.connect_timeout` bounds name resolution, TCP connect and the TLS
// handshake together (an infinite one means curl's default, 300 s). There is
// no overall deadline of its own: the job's attempt timeout cancels the
// attempt. Redirects are not followed -- a 3xx is judged like any other
// status -- so a request never goes to a host the job does not name.
// No proxy settings are read from the environment beyond what libcurl does
// (http_proxy, https_proxy, no_proxy).
//
// Outcome:
//   - OK when the response status is in `spec.success_statuses` (empty means
//     200-299), after the whole response has arrived.
//   - Unknown: "HTTP 503 is not a success status (200-299)".
//   - InvalidArgument: a malformed or non-http(s) URL, a bad method, or a
//     header name or value that could split the request (CR, LF, ':' in a
//     name). No request is sent.
//   - Unavailable: the request could not be carried out -- name resolution,
//     connection refused, `connect_timeout` passed, TLS failure, the
//     connection dropped mid-response. (Not DeadlineExceeded: the scheduler
//     reads that as the attempt's own timeout.)
//   - Cancelled: AttemptContext::cancelled or ::killed was set; the transfer
//     is aborted at once (within about 20 ms). The target may have received
//     and acted on the request. Also "not sent: the store's lease was lost
//     before the request" (AttemptContext::LeaseHeld false): nothing sent.
// Transport errors read "POST http://host/path: <curl's message>
// (CURLE_COULDNT_CONNECT)"; user:password in the URL is never shown.
//
// `*ctx.exit_code`, when not null, gets the response status when one arrived.
// Output: when `ctx.output` is non-null and a response status arrived, it is
// set to "HTTP <status>", then a newline and the head of the response body, at
// most `spec.response_limit` bytes. The rest of the body is read and counted
// but not kept, marked "\n[chime: 1234 more bytes not kept]"; memory stays
// bounded by the limit whatever the target sends.
//
// Thread-safety: RunHttp may be called from many threads at once; each call
// uses its own curl handles. libcurl's process-wide initialisation happens
// once, on the first call.
#ifndef CHIME_SRC_EXEC_HTTP_EXECUTOR_H_
#define CHIME_SRC_EXEC_HTTP_EXECUTOR_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "chime/job.h"
#include "chime/scheduler.h"

namespace chime::exec {

// Makes the request of one attempt and waits for its response, or until the
// attempt is cancelled. See the file comment for what is sent, recorded and
// returned. `spec` and `ctx` must stay valid until it returns.
absl::Status RunHttp(const HttpExecutorSpec& spec, const AttemptContext& ctx);

// A job function whose every attempt is RunHttp(spec, ctx). It keeps its own
// copy of `spec`.
JobFunction MakeHttpFunction(HttpExecutorSpec spec);

// libcurl's global initialization, once per process (curl_global_init is not
// safe to race with itself); its result every time. Every libcurl user in
// the daemon calls it before its first handle.
absl::Status InitCurlOnce();

// "200-299", or "200-299, 409" for {{200, 299}, {409, 409}}: the success set
// as error messages show it. Empty means the default, 200-299.
std::string FormatSuccessStatuses(
    const std::vector<std::pair<int, int>>& ranges);

}  // namespace chime::exec

#endif  // CHIME_SRC_EXEC_HTTP_EXECUTOR_H_
