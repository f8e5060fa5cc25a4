#include "src/api/idempotency.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "src/api/http_util.h"
#include "src/http/deferred_response.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxKeyLength = 255;

// FNV-1a, 64 bits: stable across processes and builds (a fingerprint is
// compared with one stored by an earlier daemon), and a collision only lets a
// misused key replay an answer.
uint64_t Fnv1a(absl::string_view text, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Fingerprint(const http::Request& request) {
  const std::string head =
      absl::StrCat(request.method, " ", request.path, "?", request.query, "\n");
  return absl::StrFormat("%016x-%016x-%d", Fnv1a(head),
                         Fnv1a(request.body, Fnv1a(head)), request.body.size());
}

std::string Encode(const http::Response& response) {
  Json j;
  j["status"] = response.status;
  j["content_type"] = response.content_type;
  j["body"] = response.body;
  Json headers = Json::array();
  for (const auto& [name, value] : response.headers)
    headers.push_back({name, value});
  j["headers"] = std::move(headers);
  return j.dump();
}

http::Response Decode(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("status") || !j["status"].is_number() ||
      !j.value("body", Json()).is_string()) {
    return Problem(500, "internal error");
  }
  http::Response response;
  response.status = j["status"].get<int>();
  response.content_type = j.value("content_type", "");
  response.body = j["body"].get<std::string>();
  for (const Json& h : j.value("headers", Json::array())) {
    if (h.is_array() && h.size() == 2 && h[0].is_string() && h[1].is_string())
      response.headers.emplace_back(h[0].get<std::string>(),
                                    h[1].get<std::string>());
  }
  response.headers.emplace_back("Idempotent-Replayed", "true");
  return response;
}

}  // namespace

http::Response IdempotencyGate::Run(
    const http::Request& request, const std::string& who,
    absl::FunctionRef<http::Response()> handler) {
  const absl::string_view key = request.Header("Idempotency-Key");
  if (key.empty() || store_ == nullptr) return handler();
  if (key.size() > kMaxKeyLength) {
    return Problem(400, absl::StrCat("Idempotency-Key: longer than ",
                                     kMaxKeyLength, " characters"));
  }
  for (char c : key) {
    if (c < 0x21 || c > 0x7e) {
      return Problem(400,
                     "Idempotency-Key: only printable ASCII without spaces");
    }
  }
  // Scoped by the caller: two clients cannot see each other's answers.
  const std::string scoped = absl::StrCat(who, "\n", key);
  {
    absl::MutexLock lock(&mu_);
    if (!in_flight_.insert(scoped).second) {
      return Problem(409, absl::StrCat("Idempotency-Key \"", key,
                                       "\": the first request with this key "
                                       "is still being handled"));
    }
  }
  struct Release {
    IdempotencyGate* gate;
    const std::string& key;
    ~Release() {
      absl::MutexLock lock(&gate->mu_);
      gate->in_flight_.erase(key);
    }
  } release{this, scoped};

  const std::string fingerprint = Fingerprint(request);
  const absl::Time now = absl::Now();
  // A probe that expires a nanosecond after it is made: it answers the
  // record in force, if any, without holding the key (CheckIdempotencyKey
  // replaces an expired record, and the answer below is stored later).
  const absl::Time probe_expiry = now + absl::Nanoseconds(1);
  absl::StatusOr<IdempotencyOutcome> seen = store_->CheckIdempotencyKey(
      IdempotencyRecord{scoped, fingerprint, "", now, probe_expiry},
      StoreDeadline());
  if (!seen.ok()) return ProblemFromStatus(seen.status());
  if (!seen->created) {
    if (seen->stored.fingerprint != fingerprint) {
      return Problem(422, absl::StrCat("Idempotency-Key \"", key,
                                       "\" was used for a different request"));
    }
    return Decode(seen->stored.response);
  }
  http::Response response = handler();
  // The answer is kept before it is sent: wait for one that comes later.
  if (response.deferred != nullptr) response = response.deferred->Wait();
  if (response.status >= 500) return response;
  const absl::Time done = std::max(absl::Now(), probe_expiry);
  // A failure to keep the answer costs the protection of a re-send, not
  // this answer.
  (void)store_->CheckIdempotencyKey(
      IdempotencyRecord{scoped, fingerprint, Encode(response), done,
                        done + kWindow},
      StoreDeadline());
  return response;
}

}  // namespace chime::api
