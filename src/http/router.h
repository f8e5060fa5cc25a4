// Request, Response and Router: what an HTTP handler sees, with no trace of
// the transport (Boost.Beast stays inside server.cc).
//
// The HttpServer parses a request into a Request, asks its Router for the
// Response, and writes it. The Router picks the handler by method and path:
//
//   Router router;
//   router.Handle("GET", "/healthz", [](const Request&) {
//     return Response{.status = 200, .body = "ok\n"};
//   });
//   router.HandlePrefix("GET", "/api/v1/jobs/", ListOrGetJob);
//
// Dispatch rules, in order:
//   - a path that does not start with '/' is 400;
//   - an exact registration for the path beats any prefix one; among prefix
//     registrations the longest matching prefix wins;
//   - the chosen path has a handler for the method: it answers. HEAD uses the
//     GET handler when there is no HEAD one (the server sends no body);
//   - the path is known but not for this method: 405, with `Allow` listing
//     the methods it has;
//   - otherwise 404.
// A handler that throws gives 500; the exception goes no further. A handler
// may answer later, from another thread (Response::deferred).
//
// Thread-safety: registration is not thread-safe; finish it before the Router
// is handed to the server. Route() is const and may run on several threads at
// once, so handlers must be safe to call concurrently.
#ifndef CHIME_SRC_HTTP_ROUTER_H_
#define CHIME_SRC_HTTP_ROUTER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "src/http/response_stream.h"

namespace chime::http {

class DeferredResponse;

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;  // as sent, e.g. "GET"
  std::string target;  // as sent, e.g. "/api/v1/jobs?limit=10"
  std::string path;    // target up to '?', not percent-decoded: "/api/v1/jobs"
  std::string query;   // after the first '?', not decoded: "limit=10"
  Headers headers;     // in arrival order, names as sent
  std::string body;    // complete; chunked bodies are reassembled

  // The value of the first header named `name` (compared case-insensitively),
  // or "" when there is none.
  absl::string_view Header(absl::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Extra headers. The server sets Content-Length, Connection and Date itself
  // and drops those names here.
  Headers headers;
  // Set for a body produced over time (response_stream.h): `body` is then
  // ignored, and the server sends what the producer writes to the stream
  // until it is closed.
  std::shared_ptr<ResponseStream> stream;
  // Set for an answer that comes later (deferred_response.h): everything
  // else here is then ignored, and the server sends what the handler gives
  // to the DeferredResponse.
  std::shared_ptr<DeferredResponse> deferred;
};

// Plain-text response with the reason phrase as body, e.g. "404 Not Found\n".
Response ErrorResponse(int status);
// "Not Found" for 404; "<unknown-status>" for a status HTTP does not define.
std::string ReasonPhrase(int status);

using Handler = std::function<Response(const Request&)>;

// Where a handler runs when the Router is given a BlockingRunner (the
// HttpServer's pool for handlers that may block): on that pool -- the
// default, safe for a handler that waits for a store, a scheduler, a lock --
// or on the thread that read the request.
struct RouteOptions {
  // True for a request the handler answers quickly without blocking
  // (microseconds of work, or an answer deferred: deferred_response.h): it
  // then runs on the server thread that read it, which serves every other
  // connection too. Null: always on the pool.
  std::function<bool(const Request&)> run_inline;
};
// RouteOptions::run_inline for a handler that never blocks.
bool AlwaysInline(const Request&);

// Runs a task on a pool of threads for handlers that may block.
using BlockingRunner = std::function<void(std::function<void()>)>;

class Router {
 public:
  // Registers `handler` for `method` on exactly `path`. A later registration
  // for the same method and path replaces the earlier one.
  void Handle(absl::string_view method, absl::string_view path, Handler handler,
              RouteOptions options = {});
  // Registers `handler` for `method` on every path starting with `prefix`
  // (e.g. "/ui/"). A later registration for the same method and prefix
  // replaces the earlier one.
  void HandlePrefix(absl::string_view method, absl::string_view prefix,
                    Handler handler, RouteOptions options = {});

  // The response to `request`, by the rules in the file comment. Never
  // throws. With `blocking`, a handler that is not to run inline (see
  // RouteOptions) is handed to it, and the response is deferred: it comes
  // once the handler has returned there. Without, every handler runs here.
  Response Route(Request request,
                 const BlockingRunner* blocking = nullptr) const;

  // Whether a request `method` `path` would reach a handler (no 404 or 405
  // of the router's own), without calling it. For checks of documentation.
  bool Handles(absl::string_view method, absl::string_view path) const;
  // Every registration, as "METHOD /path" for exact ones and
  // "METHOD /prefix*" for prefixes, sorted.
  std::vector<std::string> Registrations() const;

 private:
  struct Entry {
    Handler handler;
    RouteOptions options;
  };
  using Methods = std::map<std::string, Entry, std::less<>>;
  // Methods registered for the path that `path` falls under, or null.
  const Methods* Find(absl::string_view path) const;

  std::map<std::string, Methods, std::less<>> exact_;
  std::map<std::string, Methods, std::less<>> prefixes_;
};

}  // namespace chime::http

#endif  // CHIME_SRC_HTTP_ROUTER_H_
