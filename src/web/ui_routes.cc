#include "src/web/ui_routes.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace chime::web {
namespace {

// The UI loads only its own files and calls only its own origin's API.
// 'self' covers fetch() of /v1 (connect-src falls back to default-src).
constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// Whether an If-None-Match value ("*", or a list of entity tags, weak ones
// included: the comparison is weak, RFC 9110 13.1.2) matches `etag`.
bool NoneMatchHits(absl::string_view header, absl::string_view etag) {
  for (absl::string_view tag : absl::StrSplit(header, ',')) {
    tag = absl::StripAsciiWhitespace(tag);
    if (tag == "*") return true;
    absl::ConsumePrefix(&tag, "W/");
    if (tag == etag) return true;
  }
  return false;
}

http::Response Serve(const Asset& asset, const http::Request& request) {
  http::Response response;
  response.content_type = std::string(asset.content_type);
  response.headers = {
      {"ETag", std::string(asset.etag)},
      {"Cache-Control", "no-cache"},
      {"Content-Security-Policy", kContentSecurityPolicy},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
  };
  absl::string_view if_none_match = request.Header("If-None-Match");
  if (!if_none_match.empty() && NoneMatchHits(if_none_match, asset.etag)) {
    response.status = 304;
    return response;
  }
  response.body = std::string(asset.data);
  return response;
}

}  // namespace

void RegisterUiAssets(http::Router& router, absl::Span<const Asset> assets) {
  const Asset* index = nullptr;
  for (const Asset& asset : assets) {
    if (asset.path == "/ui/index.html") index = &asset;
  }
  if (index == nullptr) {
    // A build without web/index.html is broken: no UI could load.
    std::fputs("chime: the web UI has no index.html\n", stderr);
    std::abort();
  }
  router.Handle("GET", "/",
                [index](const http::Request& r) { return Serve(*index, r); });
  router.HandlePrefix("GET", "/ui/", [assets](const http::Request& r) {
    for (const Asset& asset : assets) {
      if (asset.path == r.path) return Serve(asset, r);
    }
    http::Response missing = http::ErrorResponse(404);
    missing.headers.emplace_back("X-Content-Type-Options", "nosniff");
    return missing;
  });
}

void RegisterUi(http::Router& router) {
  RegisterUiAssets(router, EmbeddedAssets());
}

}  // namespace chime::web
