// The status line and header block of a whole (not streamed) response,
// written by hand: Beast's serializer walks its buffer sequences through
// variant iterators and cost about as much CPU per answer as the send itself.
//
//   HTTP/1.1 201 Created\r\n
//   Server: chime\r\n
//   Date: Tue, 01 Dec 2026 23:59:59 GMT\r\n
//   Content-Type: application/json\r\n
//   <the handler's headers that IsAcceptableExtraHeader passes>\r\n
//   Content-Length: 512\r\n          (not for 204 and 304)
//   Connection: close\r\n            (HTTP/1.1 not keep-alive; or HTTP/1.0
//                                     keep-alive: "Connection: keep-alive")
//   \r\n
//
// Internal to HttpServer. Thread-safety: pure, but for a per-thread cache of
// the Date header's text (formatted once a second).
#ifndef CHIME_SRC_HTTP_RESPONSE_HEAD_H_
#define CHIME_SRC_HTTP_RESPONSE_HEAD_H_

#include <cstddef>
#include <string>

#include "absl/time/time.h"
#include "src/http/router.h"

namespace chime::http::internal {

// Handler-supplied headers that would break the framing or inject lines.
bool IsAcceptableExtraHeader(const std::string& name, const std::string& value);

// The head of `answer` (status 200-599, not streamed) in HTTP/1.`minor`
// (0 or 1), dated `now`, stating `body_size` as Content-Length unless the
// status is 204 or 304. An empty content_type, or one with a line break or
// NUL, sends no Content-Type.
std::string FormatResponseHead(const Response& answer, unsigned minor,
                               bool keep_alive, size_t body_size,
                               absl::Time now);

}  // namespace chime::http::internal

#endif  // CHIME_SRC_HTTP_RESPONSE_HEAD_H_
