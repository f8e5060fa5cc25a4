#include "src/api/http_util.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int StatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return 503;
    default:
      return 500;
  }
}

}  // namespace

http::Response Problem(int status, absl::string_view detail) {
  nlohmann::ordered_json body;
  body["type"] = "about:blank";
  body["title"] = http::ReasonPhrase(status);
  body["status"] = status;
  body["detail"] = std::string(detail);
  http::Response response = JsonResponse(body, status);
  response.content_type = std::string(kProblemJson);
  return response;
}

http::Response ProblemFromStatus(const absl::Status& status) {
  const int code = StatusFor(status.code());
  // A 500's message is ours, not the client's business.
  return Problem(code, code == 500 ? "internal error" : status.message());
}

http::Response JsonResponse(const nlohmann::ordered_json& body, int status) {
  return JsonTextResponse(
      body.dump(-1, ' ', false,
                nlohmann::ordered_json::error_handler_t::replace),
      status);
}

http::Response JsonTextResponse(std::string json, int status) {
  json.push_back('\n');
  return http::Response{
      .status = status,
      .content_type = "application/json",
      .body = std::move(json),
  };
}

absl::StatusOr<std::string> PercentDecode(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    const bool two_more = i + 2 < text.size();
    const int hi = two_more ? HexValue(text[i + 1]) : -1;
    const int lo = two_more ? HexValue(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\": '%' at offset ", i,
                       " is not followed by two hex digits"));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

absl::StatusOr<Query> Query::Parse(absl::string_view query,
                                   const std::vector<std::string>& allowed) {
  Query q;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    std::string name_raw(kv.first), value_raw(kv.second);
    std::replace(name_raw.begin(), name_raw.end(), '+', ' ');
    std::replace(value_raw.begin(), value_raw.end(), '+', ' ');
    absl::StatusOr<std::string> name = PercentDecode(name_raw);
    if (!name.ok()) return name.status();
    absl::StatusOr<std::string> value = PercentDecode(value_raw);
    if (!value.ok()) return value.status();
    if (std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown query parameter \"", *name,
                       "\"; known: ", absl::StrJoin(allowed, ", ")));
    }
    q.values_.emplace(*std::move(name), *std::move(value));
  }
  return q;
}

absl::StatusOr<std::optional<std::string>> Query::One(
    absl::string_view name) const {
  auto [first, last] = values_.equal_range(name);
  if (first == last) return std::optional<std::string>();
  if (std::next(first) != last) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": given more than once"));
  }
  return std::optional<std::string>(first->second);
}

std::vector<std::string> Query::All(absl::string_view name) const {
  std::vector<std::string> all;
  auto [first, last] = values_.equal_range(name);
  for (auto it = first; it != last; ++it) all.push_back(it->second);
  return all;
}

absl::StatusOr<int64_t> Query::Int(absl::string_view name, int64_t fallback,
                                   int64_t min, int64_t max) const {
  absl::StatusOr<std::optional<std::string>> text = One(name);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(**text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": \"", **text, "\" is not a whole number"));
  }
  if (value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", value, " is outside ", min, "..", max));
  }
  return value;
}

absl::StatusOr<absl::Time> Query::Time(absl::string_view name,
                                       absl::Time fallback) const {
  absl::StatusOr<std::optional<std::string>> text = One(name);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return fallback;
  absl::StatusOr<absl::Time> t = time::ParseRfc3339(**text);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", t.status().message()));
  }
  return *t;
}

MonoTime StoreDeadline() {
  return RealClock::Get().MonoNow() + absl::Seconds(5);
}

nlohmann::ordered_json TimeOrNull(absl::Time t) {
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return nullptr;
  return time::FormatUtc(t);
}

absl::StatusOr<std::vector<std::string>> PathSegments(
    absl::string_view path, absl::string_view prefix) {
  std::vector<std::string> segments;
  if (!absl::ConsumePrefix(&path, prefix)) return segments;
  if (path.empty()) return segments;
  for (absl::string_view raw : absl::StrSplit(path, '/')) {
    absl::StatusOr<std::string> segment = PercentDecode(raw);
    if (!segment.ok()) return segment.status();
    segments.push_back(*std::move(segment));
  }
  return segments;
}

}  // namespace chime::api
