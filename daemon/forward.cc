#include "daemon/forward.h"

#include <curl/curl.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"
#include "src/cluster/shards.h"
#include "src/exec/http_executor.h"

namespace chime::daemon {
namespace {

constexpr long kTimeoutMs = 10'000;
// The request headers that go along. Not Idempotency-Key: the standby's own
// gate (api/idempotency.h) holds the key in the shared store while the
// request is forwarded and keeps the answer, which a retry on any node gets.
constexpr const char* kPassed[] = {"Authorization", "Content-Type", "If-Match"};

struct Answer {
  http::Response response;
  std::string header_line;  // the header being read
};

size_t OnBody(char* data, size_t size, size_t n, void* answer) {
  static_cast<Answer*>(answer)->response.body.append(data, size * n);
  return size * n;
}

// Keeps Content-Type and Location of the final response.
size_t OnHeader(char* data, size_t size, size_t n, void* answer) {
  http::Response& r = static_cast<Answer*>(answer)->response;
  absl::string_view line(data, size * n);
  if (absl::StartsWith(line, "HTTP/")) r.headers.clear();  // a new response
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    const absl::string_view name = line.substr(0, colon);
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "Content-Type")) {
      r.content_type = std::string(value);
    } else if (absl::EqualsIgnoreCase(name, "Location")) {
      r.headers.emplace_back("Location", std::string(value));
    }
  }
  return size * n;
}

// Lease `lease`'s live holder: (node, advertised URL or "").
std::optional<std::pair<std::string, std::string>> HolderAndUrl(
    Store& store, absl::string_view lease) {
  absl::StatusOr<std::vector<LeaseInfo>> leases =
      store.ListLeases(api::StoreDeadline());
  if (!leases.ok()) return std::nullopt;
  for (const LeaseInfo& l : *leases) {
    if (l.name != lease || l.holder.empty() ||
        l.remaining <= absl::ZeroDuration()) {
      continue;
    }
    return std::make_pair(api::internal::NodeOfHolder(l.holder),
                          api::internal::UrlOfHolder(l.holder));
  }
  return std::nullopt;
}

// Carries `request` to the holder of `lease` ("what" it holds, for messages);
// `unavailable` answers when there is none to carry it to.
http::Response Forward(Store& store, const std::string& node,
                       absl::string_view lease, absl::string_view what,
                       const http::Request& request,
                       const std::function<http::Response()>& unavailable) {
  const auto holder = HolderAndUrl(store, lease);
  if (!request.Header(kForwardedByHeader).empty() || !holder.has_value() ||
      holder->second.empty()) {
    return unavailable();
  }
  const auto& [to, url] = *holder;
  if (absl::Status s = exec::InitCurlOnce(); !s.ok())
    return api::Problem(500, s.message());
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                           curl_easy_cleanup);
  if (curl == nullptr) return api::Problem(500, "curl_easy_init failed");
  curl_slist* headers = nullptr;
  for (const char* name : kPassed) {
    const absl::string_view value = request.Header(name);
    if (!value.empty())
      headers =
          curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
  }
  headers = curl_slist_append(
      headers, absl::StrCat(kForwardedByHeader, ": ", node).c_str());
  headers = curl_slist_append(headers, "Expect:");
  const std::string target = absl::StrCat(url, request.target);
  Answer answer;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, target.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, kTimeoutMs);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &answer);
  const CURLcode code = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    return api::Problem(
        502,
        absl::StrCat("this node (", node, ") could not reach the node ", what,
                     " (", to, ") at ", url, ": ", curl_easy_strerror(code),
                     "; the request may or may not have been carried "
                     "out there"));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  answer.response.status = static_cast<int>(status);
  return std::move(answer.response);
}

}  // namespace

std::function<http::Response(const http::Request&)> ForwardToScheduler(
    Store& store, std::string node) {
  return [&store, node = std::move(node)](const http::Request& request) {
    return Forward(store, node, kSchedulerLease, "that schedules", request,
                   [&] { return api::internal::NotTheScheduler(store, node); });
  };
}

std::function<http::Response(const http::Request&, uint32_t)>
ForwardToShardHolder(Store& store, std::string node) {
  return [&store, node = std::move(node)](const http::Request& request,
                                          uint32_t shard) {
    const std::string lease = cluster::ShardLease(shard);
    return Forward(
        store, node, lease, absl::StrCat("that holds shard ", shard), request,
        [&] {
          http::Response r = api::Problem(
              503, absl::StrCat("shard ", shard,
                                " of this job is held by no "
                                "node that can be reached (it moves within a "
                                "lease ttl); try again"));
          r.headers.emplace_back("Retry-After", "1");
          return r;
        });
  };
}

}  // namespace chime::daemon
