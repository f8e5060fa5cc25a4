#include "daemon/standby_http.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/daemon_metrics.h"
#include "daemon/forward.h"
#include "daemon/job_registry.h"
#include "nlohmann/json.hpp"
#include "src/api/http_util.h"
#include "src/base/status_macros.h"
#include "src/metrics/registry.h"
#include "src/web/ui_routes.h"

namespace chime::daemon {
namespace {

using Json = nlohmann::ordered_json;

// A standby answers health checks, scrapes and reads.
constexpr int kStandbyThreads = 4;

}  // namespace

absl::StatusOr<std::unique_ptr<http::HttpServer>> StartStandbyHttp(
    const config::DaemonConfig& config, Store& store,
    const api::Authorizer& auth, const api::DaemonInfo& daemon,
    api::JobDefinitions& jobs, Logger& log) {
  http::HttpServer::Options http;
  std::string host;
  int port = 0;
  RETURN_IF_ERROR(config::SplitHostPort(config.listen, &host, &port));
  http.address = host;
  http.port = static_cast<uint16_t>(port);
  http.threads = kStandbyThreads;
  http.tls_cert_file = config.tls_cert;
  http.tls_key_file = config.tls_key;

  http.router.Handle("GET", "/healthz", [](const http::Request&) {
    return http::Response{.status = 200, .body = "ok\n"};
  });
  http.router.Handle("GET", "/readyz", [&store](const http::Request&) {
    const std::optional<std::string> scheduler =
        api::internal::SchedulingNode(store);
    Json j{{"ready", false},
           {"role", "standby"},
           {"scheduler", scheduler.has_value() ? Json(*scheduler) : Json()}};
    return http::Response{.status = 503,
                          .content_type = "application/json",
                          .body = j.dump() + "\n"};
  });
  auto registry = std::make_shared<metrics::Registry>();
  RETURN_IF_ERROR(registry->AddGaugeCallback(
      "chime_standby",
      "1 while this daemon waits as a standby for the store's lease.", {}, [] {
        return std::vector<metrics::Sample>{{{}, 1.0}};
      }));
  RETURN_IF_ERROR(
      AddClockOffsetGauge(*registry, [clock_offset = daemon.clock_offset] {
        return clock_offset ? clock_offset() : std::nullopt;
      }));
  http.router.Handle("GET", "/metrics", [registry](const http::Request&) {
    return http::Response{.status = 200,
                          .content_type = std::string(metrics::kContentType),
                          .body = registry->Render()};
  });
  // The web UI, under a banner naming the scheduling node (web/js/app.js).
  web::RegisterUi(http.router);
  // Every route: job changes are written to the store for the scheduling
  // node to follow; its actions (trigger, cancel, retry) are forwarded to it
  // (daemon/forward.h); the event stream is its own.
  const api::ApiDeps deps{
      .store = &store,
      .auth = &auth,
      .jobs = &jobs,
      .on_change = LogApiChanges(log),
      .daemon = daemon,
      .forward = ForwardToScheduler(store, daemon.node_name)};
  api::AddRoutes(http.router, deps);
  const auto not_here = [&store,
                         node = daemon.node_name](const http::Request&) {
    return api::internal::NotTheScheduler(store, node);
  };
  for (absl::string_view method : {"GET", "POST", "PUT", "PATCH", "DELETE"})
    http.router.HandlePrefix(method, "/v1/", not_here);
  // The reads registered the event stream (501 without a hub): the stream is
  // the scheduling node's.
  http.router.Handle("GET", "/v1/events", not_here);
  return http::HttpServer::Start(std::move(http));
}

}  // namespace chime::daemon
