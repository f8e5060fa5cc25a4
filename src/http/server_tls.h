// Internal to HttpServer (server.cc): the TLS settings of an HTTPS listener.
#ifndef CHIME_SRC_HTTP_SERVER_TLS_H_
#define CHIME_SRC_HTTP_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "boost/asio/ssl/context.hpp"

namespace chime::http::internal {

// A server context: TLS 1.2 or later, OpenSSL's default ciphers, no
// compression or renegotiation, the certificate chain from `cert_file` (PEM:
// the server's certificate first, then any intermediates) and its private key
// from `key_file` (PEM, not encrypted). Both files are read now, once.
// InvalidArgument naming the file when one cannot be read or holds no
// certificate or key, or when the key is not the certificate's; Internal when
// OpenSSL fails otherwise.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeTlsContext(
    const std::string& cert_file, const std::string& key_file);

}  // namespace chime::http::internal

#endif  // CHIME_SRC_HTTP_SERVER_TLS_H_
