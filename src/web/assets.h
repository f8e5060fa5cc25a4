// The files of the web UI (web/ in the source tree), compiled into the
// binary: cmake/EmbedWeb.cmake turns each one into a byte array at build
// time, so `chime serve` needs nothing on disk to serve the UI.
//
// Thread-safety: immutable data.
#ifndef CHIME_SRC_WEB_ASSETS_H_
#define CHIME_SRC_WEB_ASSETS_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace chime::web {

struct Asset {
  // The URL path it is served at: "/ui/" + its path under web/
  // ("/ui/js/app.js").
  absl::string_view path;
  // "text/javascript; charset=utf-8", by the file's extension.
  absl::string_view content_type;
  // A strong entity tag made from a hash of the content, quotes included.
  absl::string_view etag;
  absl::string_view data;
};

// Every file under web/, sorted by path. Defined in the generated
// web_assets.cc.
absl::Span<const Asset> EmbeddedAssets();

}  // namespace chime::web

#endif  // CHIME_SRC_WEB_ASSETS_H_
