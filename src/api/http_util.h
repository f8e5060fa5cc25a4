// What every REST route needs (docs/api.md): problem+json errors, JSON
// bodies, and the request's query parameters and path segments decoded.
//
//   absl::StatusOr<Query> q = Query::Parse(request.query, {"limit"});
//   if (!q.ok()) return ProblemFromStatus(q.status());
//   return JsonResponse(body);
//
// Errors are RFC 9457 problem details, `application/problem+json`:
//   {"type":"about:blank","title":"Bad Request","status":400,
//    "detail":"limit: \"x\" is not a whole number"}
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_API_HTTP_UTIL_H_
#define CHIME_SRC_API_HTTP_UTIL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "nlohmann/json.hpp"
#include "src/http/router.h"

namespace chime::api {

inline constexpr absl::string_view kProblemJson = "application/problem+json";

// A problem response with `status`, its reason phrase as title, and `detail`.
http::Response Problem(int status, absl::string_view detail);
// The problem for a failed Status: InvalidArgument/OutOfRange 400, NotFound
// 404, AlreadyExists/Aborted 409, FailedPrecondition 409, PermissionDenied
// 403, Unauthenticated 401, Unavailable/DeadlineExceeded 503, others 500
// (whose detail is not the internal message but "internal error").
http::Response ProblemFromStatus(const absl::Status& status);
// In a handler: returns ProblemFromStatus of `expr` if it is not OK.
#define RETURN_PROBLEM_IF_ERROR(expr)                                     \
  do {                                                                    \
    if (absl::Status _s = (expr); !_s.ok()) return ProblemFromStatus(_s); \
  } while (0)
// 200 (or `status`) with `body` as application/json.
http::Response JsonResponse(const nlohmann::ordered_json& body,
                            int status = 200);
// The same for a body already printed (json_writer.h): 200 (or `status`)
// with `json` and a newline as application/json.
http::Response JsonTextResponse(std::string json, int status = 200);

// Query parameters, percent-decoded ('+' is a space), by name; a name may
// repeat. InvalidArgument for a malformed escape or a name that is not in
// `allowed` ("unknown query parameter \"limt\"; known: ...").
class Query {
 public:
  static absl::StatusOr<Query> Parse(absl::string_view query,
                                     const std::vector<std::string>& allowed);

  // The value of `name`, or nullopt; InvalidArgument if it is given twice.
  absl::StatusOr<std::optional<std::string>> One(absl::string_view name) const;
  // Every value of `name`, in order.
  std::vector<std::string> All(absl::string_view name) const;
  // `name` as an integer in [min, max], or `fallback` when absent;
  // InvalidArgument naming the parameter otherwise.
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t fallback,
                              int64_t min, int64_t max) const;
  // `name` as an RFC 3339 time, or `fallback` when absent.
  absl::StatusOr<absl::Time> Time(absl::string_view name,
                                  absl::Time fallback) const;

 private:
  std::multimap<std::string, std::string, std::less<>> values_;
};

// The deadline of a store read made by a route: 5 s from now (a store that
// does not answer in time makes the route answer 503).
MonoTime StoreDeadline();

// An RFC 3339 UTC time, or JSON null for an infinite one.
nlohmann::ordered_json TimeOrNull(absl::Time t);

// Percent-decodes `text` ('+' stays '+'); InvalidArgument on a bad escape.
absl::StatusOr<std::string> PercentDecode(absl::string_view text);

// The path below `prefix` split at '/', each segment percent-decoded
// ("/v1/jobs/ops/backup" with prefix "/v1/jobs/" -> {"ops", "backup"}); an
// empty path gives no segments. InvalidArgument on a bad escape.
absl::StatusOr<std::vector<std::string>> PathSegments(absl::string_view path,
                                                      absl::string_view prefix);

}  // namespace chime::api

#endif  // CHIME_SRC_API_HTTP_UTIL_H_
