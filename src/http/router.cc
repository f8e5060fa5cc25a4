#include "src/http/router.h"

#include <algorithm>
#include <exception>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/beast/http/status.hpp"
#include "src/http/deferred_response.h"

namespace chime::http {

absl::string_view Request::Header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

std::string ReasonPhrase(int status) {
  namespace beast_http = boost::beast::http;
  const auto reason = beast_http::obsolete_reason(
      beast_http::int_to_status(static_cast<unsigned>(status)));
  return std::string(reason.data(), reason.size());
}

Response ErrorResponse(int status) {
  return Response{
      .status = status,
      .body = absl::StrCat(status, " ", ReasonPhrase(status), "\n"),
  };
}

bool AlwaysInline(const Request&) { return true; }

void Router::Handle(absl::string_view method, absl::string_view path,
                    Handler handler, RouteOptions options) {
  exact_[std::string(path)][std::string(method)] = {std::move(handler),
                                                    std::move(options)};
}

void Router::HandlePrefix(absl::string_view method, absl::string_view prefix,
                          Handler handler, RouteOptions options) {
  prefixes_[std::string(prefix)][std::string(method)] = {std::move(handler),
                                                         std::move(options)};
}

namespace {

Response Call(const Handler& handler, const Request& request) {
  try {
    return handler(request);
  } catch (...) {
    // A handler's bug must not take the connection or the server with it.
    return ErrorResponse(500);
  }
}

}  // namespace

const Router::Methods* Router::Find(absl::string_view path) const {
  if (auto it = exact_.find(path); it != exact_.end()) return &it->second;
  const Methods* best = nullptr;
  size_t best_length = 0;
  for (const auto& [prefix, methods] : prefixes_) {
    if (absl::StartsWith(path, prefix) &&
        (best == nullptr || prefix.size() > best_length)) {
      best = &methods;
      best_length = prefix.size();
    }
  }
  return best;
}

bool Router::Handles(absl::string_view method, absl::string_view path) const {
  const Methods* methods = Find(path);
  if (methods == nullptr) return false;
  return methods->contains(method) ||
         (method == "HEAD" && methods->contains("GET"));
}

std::vector<std::string> Router::Registrations() const {
  std::vector<std::string> all;
  for (const auto& [path, methods] : exact_) {
    for (const auto& [method, handler] : methods)
      all.push_back(absl::StrCat(method, " ", path));
  }
  for (const auto& [prefix, methods] : prefixes_) {
    for (const auto& [method, handler] : methods)
      all.push_back(absl::StrCat(method, " ", prefix, "*"));
  }
  std::sort(all.begin(), all.end());
  return all;
}

Response Router::Route(Request request, const BlockingRunner* blocking) const {
  if (request.path.empty() || request.path[0] != '/') {
    Response response = ErrorResponse(400);
    response.body = "400 Bad Request: the request target must start with '/'\n";
    return response;
  }
  const Methods* methods = Find(request.path);
  if (methods == nullptr) return ErrorResponse(404);

  auto it = methods->find(request.method);
  if (it == methods->end() && request.method == "HEAD")
    it = methods->find("GET");
  if (it == methods->end()) {
    std::set<std::string> allowed;
    for (const auto& [method, handler] : *methods) allowed.insert(method);
    if (allowed.count("GET") > 0) allowed.insert("HEAD");
    Response response = ErrorResponse(405);
    response.headers.emplace_back("Allow", absl::StrJoin(allowed, ", "));
    return response;
  }
  const Entry& route = it->second;
  if (blocking == nullptr ||
      (route.options.run_inline && route.options.run_inline(request))) {
    return Call(route.handler, request);
  }
  std::shared_ptr<DeferredResponse> later = DeferredResponse::Create();
  // The router outlives the server's pool, and with it the task.
  (*blocking)([&handler = route.handler, request = std::move(request), later] {
    Response answer = Call(handler, request);
    if (answer.deferred == nullptr) return later->Complete(std::move(answer));
    // The handler defers too: its answer is this one.
    internal::DeferredControl::Attach(
        *answer.deferred,
        [later](Response inner) { later->Complete(std::move(inner)); });
  });
  return later->Response();
}

}  // namespace chime::http
