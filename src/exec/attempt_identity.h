// The identity of an attempt as executors hand it to their targets, so a
// target can drop duplicates and join traces: the same fields go to a shell
// command as CHIME_* environment variables and to an HTTP target as Chime-*
// headers (plus Idempotency-Key), with a W3C traceparent for both.
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_EXEC_ATTEMPT_IDENTITY_H_
#define CHIME_SRC_EXEC_ATTEMPT_IDENTITY_H_

#include <string>
#include <utility>
#include <vector>

#include "chime/scheduler.h"

namespace chime::exec {

// (suffix, value) pairs in this order: JOB ("ns/id", or "id" in the default
// namespace), FIRE_ID, SCHEDULED_TIME (RFC 3339, UTC), ATTEMPT (1, 2, ...),
// FENCING_TOKEN, RUN_ID. Shell: "CHIME_" + suffix. HTTP: "Chime-" + the
// suffix in header case ("Chime-Fire-Id").
std::vector<std::pair<std::string, std::string>> IdentityFields(
    const AttemptContext& ctx);

// "Fire-Id" for "FIRE_ID".
std::string HeaderName(const std::string& suffix);

// A W3C trace context header value, "00-<trace>-<span>-01": the trace id is
// derived from the fire id (every attempt of a fire is one trace), the span id
// from the fire id and the attempt number. Never all zeros.
std::string Traceparent(const AttemptContext& ctx);

}  // namespace chime::exec

#endif  // CHIME_SRC_EXEC_ATTEMPT_IDENTITY_H_
