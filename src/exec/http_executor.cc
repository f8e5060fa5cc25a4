#include "src/exec/http_executor.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/base/status_macros.h"
#include "src/exec/attempt_identity.h"

namespace chime::exec {
namespace {

// How long a transfer may go without looking at the cancel flags.
constexpr int kPollIntervalMs = 20;

std::string CurlCodeName(CURLcode code) {
  switch (code) {
#define CHIME_CURL_CODE_(name) \
  case name:                   \
    return #name;
    CHIME_CURL_CODE_(CURLE_UNSUPPORTED_PROTOCOL)
    CHIME_CURL_CODE_(CURLE_URL_MALFORMAT)
    CHIME_CURL_CODE_(CURLE_COULDNT_RESOLVE_PROXY)
    CHIME_CURL_CODE_(CURLE_COULDNT_RESOLVE_HOST)
    CHIME_CURL_CODE_(CURLE_COULDNT_CONNECT)
    CHIME_CURL_CODE_(CURLE_WEIRD_SERVER_REPLY)
    CHIME_CURL_CODE_(CURLE_HTTP2)
    CHIME_CURL_CODE_(CURLE_PARTIAL_FILE)
    CHIME_CURL_CODE_(CURLE_WRITE_ERROR)
    CHIME_CURL_CODE_(CURLE_OUT_OF_MEMORY)
    CHIME_CURL_CODE_(CURLE_OPERATION_TIMEDOUT)
    CHIME_CURL_CODE_(CURLE_SSL_CONNECT_ERROR)
    CHIME_CURL_CODE_(CURLE_TOO_MANY_REDIRECTS)
    CHIME_CURL_CODE_(CURLE_GOT_NOTHING)
    CHIME_CURL_CODE_(CURLE_SSL_ENGINE_NOTFOUND)
    CHIME_CURL_CODE_(CURLE_SEND_ERROR)
    CHIME_CURL_CODE_(CURLE_RECV_ERROR)
    CHIME_CURL_CODE_(CURLE_SSL_CERTPROBLEM)
    CHIME_CURL_CODE_(CURLE_SSL_CIPHER)
    CHIME_CURL_CODE_(CURLE_PEER_FAILED_VERIFICATION)
    CHIME_CURL_CODE_(CURLE_BAD_CONTENT_ENCODING)
    CHIME_CURL_CODE_(CURLE_SSL_CACERT_BADFILE)
    CHIME_CURL_CODE_(CURLE_SSL_ISSUER_ERROR)
    CHIME_CURL_CODE_(CURLE_HTTP2_STREAM)
#undef CHIME_CURL_CODE_
    default:
      return absl::StrCat("CURLcode ", static_cast<int>(code));
  }
}

absl::StatusCode StatusCodeFor(CURLcode code) {
  switch (code) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::StatusCode::kInvalidArgument;
    default:
      // A connect timeout too: the scheduler reads DeadlineExceeded as the
      // attempt's own timeout (retry_on_timeout), which it is not.
      return absl::StatusCode::kUnavailable;
  }
}

// `url` with any "user:password@" replaced by "***@", for messages.
std::string RedactedUrl(absl::string_view url) {
  const size_t scheme_end = url.find("://");
  const size_t start =
      scheme_end == absl::string_view::npos ? 0 : scheme_end + 3;
  const size_t end = std::min(url.find_first_of("/?#", start), url.size());
  const size_t at = url.substr(start, end - start).rfind('@');
  if (at == absl::string_view::npos) return std::string(url);
  return absl::StrCat(url.substr(0, start), "***@", url.substr(start + at + 1));
}

// An RFC 9110 token: what a method or a header name may be made of.
bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && !absl::StrContains("!#$%&'*+-.^_`|~", c)) {
      return false;
    }
  }
  return true;
}

// curl takes "Name:" with nothing after it as "remove this header"; "Name;"
// sends it with an empty value.
std::string HeaderLine(absl::string_view name, absl::string_view value) {
  return value.empty() ? absl::StrCat(name, ";")
                       : absl::StrCat(name, ": ", value);
}

// The header lines for curl: the user's, then the identity, which wins.
absl::StatusOr<std::vector<std::string>> HeaderLines(
    const HttpExecutorSpec& spec, const AttemptContext& ctx) {
  std::vector<std::pair<std::string, std::string>> identity;
  identity.emplace_back("Idempotency-Key", ctx.fire_id());
  for (const auto& [suffix, value] : IdentityFields(ctx)) {
    identity.emplace_back(absl::StrCat("Chime-", HeaderName(suffix)), value);
  }
  identity.emplace_back("traceparent", Traceparent(ctx));
  auto is_identity = [&](absl::string_view name) {
    return std::any_of(identity.begin(), identity.end(), [&](const auto& h) {
      return absl::EqualsIgnoreCase(h.first, name);
    });
  };

  std::vector<std::string> lines;
  bool has_content_type = false;
  bool has_expect = false;
  for (const auto& [name, value] : spec.headers) {
    if (!IsToken(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("header name \"", absl::CEscape(name),
                       "\" is not a token (letters, digits, !#$%&'*+-.^_`|~)"));
    }
    if (value.find_first_of(std::string("\r\n\0", 3)) != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("header ", name, ": the value contains CR, LF or NUL"));
    }
    if (is_identity(name)) continue;
    has_content_type |= absl::EqualsIgnoreCase(name, "Content-Type");
    has_expect |= absl::EqualsIgnoreCase(name, "Expect");
    lines.push_back(HeaderLine(name, value));
  }
  // An empty value removes a header curl would add on its own: the form
  // Content-Type it guesses for a body, and "Expect: 100-continue", which
  // costs a round trip (or a one-second stall) on larger bodies.
  if (!has_content_type) lines.push_back("Content-Type:");
  if (!has_expect) lines.push_back("Expect:");
  for (const auto& [name, value] : identity) {
    lines.push_back(HeaderLine(name, value));
  }
  return lines;
}

// The response body as curl delivers it: the head is kept, the rest counted.
struct BodySink {
  size_t limit = 0;
  std::string head;
  int64_t dropped = 0;

  static size_t Write(char* data, size_t size, size_t count, void* sink_ptr) {
    auto* sink = static_cast<BodySink*>(sink_ptr);
    const size_t n = size * count;
    const size_t room =
        sink->limit > sink->head.size() ? sink->limit - sink->head.size() : 0;
    const size_t keep = std::min(n, room);
    sink->head.append(data, keep);
    sink->dropped += static_cast<int64_t>(n - keep);
    return n;  // anything else would abort the transfer
  }
};

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// Runs `easy` to completion on a multi handle of its own, checking the
// attempt's cancel flags every kPollIntervalMs. Returns the transfer's result,
// or Cancelled.
absl::StatusOr<CURLcode> Drive(CURL* easy, const AttemptContext& ctx,
                               absl::string_view what) {
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  if (multi == nullptr) return absl::InternalError("curl_multi_init failed");
  // The last moment before anything is sent (AttemptContext::LeaseHeld).
  if (!ctx.LeaseHeld()) {
    return absl::CancelledError(
        "not sent: the store's lease was lost before the request");
  }
  CURLMcode mc = curl_multi_add_handle(multi.get(), easy);
  if (mc != CURLM_OK) {
    return absl::InternalError(
        absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(mc)));
  }
  // The easy handle must leave the multi before either is cleaned up.
  struct Detach {
    CURLM* multi;
    CURL* easy;
    ~Detach() { curl_multi_remove_handle(multi, easy); }
  } detach{multi.get(), easy};

  while (true) {
    if (ctx.IsCancelled() || ctx.IsKilled()) {
      return absl::CancelledError(absl::StrCat(
          what,
          ": cancelled; the request was aborted (the target may have "
          "received it)"));
    }
    int running = 0;
    mc = curl_multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) {
      return absl::InternalError(
          absl::StrCat("curl_multi_perform: ", curl_multi_strerror(mc)));
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
      if (msg->msg == CURLMSG_DONE) return msg->data.result;
    }
    mc = curl_multi_poll(multi.get(), nullptr, 0, kPollIntervalMs, nullptr);
    if (mc != CURLM_OK) {
      return absl::InternalError(
          absl::StrCat("curl_multi_poll: ", curl_multi_strerror(mc)));
    }
  }
}

bool IsSuccess(long status, const std::vector<std::pair<int, int>>& ranges) {
  if (ranges.empty()) return status >= 200 && status <= 299;
  return std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) {
    return status >= r.first && status <= r.second;
  });
}

}  // namespace

std::string FormatSuccessStatuses(
    const std::vector<std::pair<int, int>>& ranges) {
  if (ranges.empty()) return "200-299";
  return absl::StrJoin(ranges, ", ", [](std::string* out, const auto& r) {
    if (r.first == r.second) {
      absl::StrAppend(out, r.first);
    } else {
      absl::StrAppend(out, r.first, "-", r.second);
    }
  });
}

absl::Status RunHttp(const HttpExecutorSpec& spec, const AttemptContext& ctx) {
  RETURN_IF_ERROR(InitCurlOnce());
  const std::string what =
      absl::StrCat(spec.method, " ", RedactedUrl(spec.url));
  if (!IsToken(spec.method)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": method \"", absl::CEscape(spec.method),
                     "\" is not a token (e.g. GET, POST)"));
  }
  auto lines = HeaderLines(spec, ctx);
  if (!lines.ok()) {
    return absl::Status(lines.status().code(),
                        absl::StrCat(what, ": ", lines.status().message()));
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  for (const std::string& line : *lines) {
    curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
    if (grown == nullptr) return absl::ResourceExhaustedError("curl_slist");
    (void)headers.release();  // `grown` now owns the old list
    headers.reset(grown);
  }

  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (easy == nullptr) return absl::InternalError("curl_easy_init failed");
  char error_buffer[CURL_ERROR_SIZE] = {0};
  BodySink sink;
  sink.limit = static_cast<size_t>(std::max<int64_t>(spec.response_limit, 0));
  // Connect timeout in ms; 0 means curl's default.
  int64_t connect_ms = 0;
  if (spec.connect_timeout != absl::InfiniteDuration()) {
    connect_ms =
        std::max<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(
                              spec.connect_timeout, absl::Milliseconds(1))),
                          1);
  }

  CURL* e = easy.get();
  CURLcode set = CURLE_OK;
  auto setopt = [&](CURLoption option, auto value) {
    if (set == CURLE_OK) set = curl_easy_setopt(e, option, value);
  };
  setopt(CURLOPT_ERRORBUFFER, error_buffer);
  setopt(CURLOPT_URL, spec.url.c_str());
  setopt(CURLOPT_PROTOCOLS_STR, "http,https");
  setopt(CURLOPT_FOLLOWLOCATION, 0L);
  setopt(CURLOPT_NOSIGNAL, 1L);  // worker threads; no SIGALRM for DNS
  // Cancel must not wait for a slow name lookup: let its thread finish alone.
  setopt(CURLOPT_QUICK_EXIT, 1L);
  setopt(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_ms));
  setopt(CURLOPT_SSL_VERIFYPEER, spec.verify_tls ? 1L : 0L);
  setopt(CURLOPT_SSL_VERIFYHOST, spec.verify_tls ? 2L : 0L);
  setopt(CURLOPT_USERAGENT, "chime");
  setopt(CURLOPT_HTTPHEADER, headers.get());
  setopt(CURLOPT_WRITEFUNCTION, &BodySink::Write);
  setopt(CURLOPT_WRITEDATA, static_cast<void*>(&sink));
  const bool with_body = !spec.body.empty() || spec.method == "POST" ||
                         spec.method == "PUT" || spec.method == "PATCH";
  if (spec.method == "HEAD") {
    setopt(CURLOPT_NOBODY, 1L);  // a HEAD response has no body to wait for
  } else if (with_body) {
    setopt(CURLOPT_POSTFIELDS, spec.body.data());
    setopt(CURLOPT_POSTFIELDSIZE_LARGE,
           static_cast<curl_off_t>(spec.body.size()));
    if (spec.method != "POST")
      setopt(CURLOPT_CUSTOMREQUEST, spec.method.c_str());
  } else if (spec.method != "GET") {
    setopt(CURLOPT_CUSTOMREQUEST, spec.method.c_str());
  }
  if (set != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat(what, ": curl_easy_setopt: ", curl_easy_strerror(set),
                     " (", CurlCodeName(set), ")"));
  }

  const absl::StatusOr<CURLcode> result = Drive(e, ctx, what);
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0 && ctx.exit_code != nullptr) {
    *ctx.exit_code = static_cast<int32_t>(status);
  }
  if (status != 0 && ctx.output != nullptr) {
    *ctx.output = absl::StrCat("HTTP ", status);
    if (!sink.head.empty()) absl::StrAppend(ctx.output, "\n", sink.head);
    if (sink.dropped > 0) {
      absl::StrAppend(ctx.output, "\n[chime: ", sink.dropped,
                      " more bytes not kept]");
    }
  }
  if (!result.ok()) return result.status();
  if (*result != CURLE_OK) {
    absl::string_view message = error_buffer[0] != '\0'
                                    ? absl::string_view(error_buffer)
                                    : curl_easy_strerror(*result);
    // OpenSSL's text often names only the symptom ("Connection reset by
    // peer"); say which stage failed.
    absl::string_view stage = "";
    if (*result == CURLE_SSL_CONNECT_ERROR) stage = "TLS handshake failed: ";
    if (*result == CURLE_PEER_FAILED_VERIFICATION) {
      stage = "TLS peer not verified: ";
    }
    return absl::Status(
        StatusCodeFor(*result),
        absl::StrCat(what, ": ", stage,
                     absl::StripTrailingAsciiWhitespace(message), " (",
                     CurlCodeName(*result), ")"));
  }
  if (!IsSuccess(status, spec.success_statuses)) {
    return absl::UnknownError(
        absl::StrCat(what, ": HTTP ", status, " is not a success status (",
                     FormatSuccessStatuses(spec.success_statuses), ")"));
  }
  return absl::OkStatus();
}

JobFunction MakeHttpFunction(HttpExecutorSpec spec) {
  return [spec = std::move(spec)](const AttemptContext& ctx) {
    return RunHttp(spec, ctx);
  };
}

// A function-local static runs curl_global_init exactly once. It is never
// undone: other threads may be mid-request at exit.
absl::Status InitCurlOnce() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat("curl_global_init: ", curl_easy_strerror(code)));
  }
  return absl::OkStatus();
}

}  // namespace chime::exec
