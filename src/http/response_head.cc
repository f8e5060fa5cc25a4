#include "src/http/response_head.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chime::http::internal {
namespace {

bool IsToken(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           absl::StrContains("!#$%&'*+-.^_`|~", c);
  });
}

// "Tue, 01 Dec 2026 23:59:59 GMT" for `now`, formatted again only when the
// second changes.
absl::string_view HttpDate(absl::Time now) {
  thread_local int64_t second = INT64_MIN;
  thread_local std::string text;
  const int64_t s = absl::ToUnixSeconds(now);
  if (s != second) {
    second = s;
    text = absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT",
                            absl::FromUnixSeconds(s), absl::UTCTimeZone());
  }
  return text;
}

}  // namespace

bool IsAcceptableExtraHeader(const std::string& name,
                             const std::string& value) {
  for (absl::string_view own :
       {"Content-Length", "Connection", "Date", "Transfer-Encoding"}) {
    if (absl::EqualsIgnoreCase(name, own)) return false;
  }
  return IsToken(name) && value.find_first_of("\r\n\0", 0, 3) == value.npos;
}

std::string FormatResponseHead(const Response& answer, unsigned minor,
                               bool keep_alive, size_t body_size,
                               absl::Time now) {
  std::string head;
  head.reserve(160 + 64 * answer.headers.size());
  absl::StrAppend(&head, "HTTP/1.", minor == 0 ? "0 " : "1 ", answer.status,
                  " ", ReasonPhrase(answer.status),
                  "\r\nServer: chime\r\nDate: ", HttpDate(now), "\r\n");
  // (A handler's content type may come from another node's answer: no
  // line breaks into the head.)
  if (!answer.content_type.empty() &&
      answer.content_type.find_first_of("\r\n\0", 0, 3) == std::string::npos)
    absl::StrAppend(&head, "Content-Type: ", answer.content_type, "\r\n");
  for (const auto& [name, value] : answer.headers) {
    if (IsAcceptableExtraHeader(name, value))
      absl::StrAppend(&head, name, ": ", value, "\r\n");
  }
  if (answer.status != 204 && answer.status != 304)
    absl::StrAppend(&head, "Content-Length: ", body_size, "\r\n");
  if (minor == 0 && keep_alive) {
    head += "Connection: keep-alive\r\n";
  } else if (minor != 0 && !keep_alive) {
    head += "Connection: close\r\n";
  }
  head += "\r\n";
  return head;
}

}  // namespace chime::http::internal
