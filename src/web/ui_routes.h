// Serves the web UI (docs/ui.md) from the daemon's HTTP listener:
//
//   GET /            web/index.html: the page that loads the rest
//   GET /ui/<path>   web/<path>: stylesheets, JavaScript modules, images
//
// Every answer carries `Cache-Control: no-cache` with an `ETag` (a hash of
// the content), so a browser revalidates each time and gets 304 Not Modified
// when its copy is current (If-None-Match), and security headers: a
// Content-Security-Policy that allows only the daemon's own scripts, styles
// and API (no inline code, no other origin, no framing), nosniff, no
// referrer. An unknown path under /ui/ is 404.
//
// The UI itself is static: it reads and changes jobs through the REST API
// (/v1) with the bearer token the user gives it, so serving it needs no
// token.
//
// Thread-safety: registration as for http::Router; the handlers only read
// immutable data.
#ifndef CHIME_SRC_WEB_UI_ROUTES_H_
#define CHIME_SRC_WEB_UI_ROUTES_H_

#include "absl/types/span.h"
#include "src/http/router.h"
#include "src/web/assets.h"

namespace chime::web {

// Registers GET / and GET /ui/ for the embedded assets (EmbeddedAssets()).
void RegisterUi(http::Router& router);

// The same for `assets`, which must outlive the router and contain
// "/ui/index.html" (served at /). For tests.
void RegisterUiAssets(http::Router& router, absl::Span<const Asset> assets);

}  // namespace chime::web

#endif  // CHIME_SRC_WEB_UI_ROUTES_H_
