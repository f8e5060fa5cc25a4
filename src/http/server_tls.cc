#include "src/http/server_tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "boost/system/error_code.hpp"

namespace chime::http::internal {
namespace {

namespace ssl = boost::asio::ssl;

// OK when `path` can be opened for reading; otherwise the reason, for a
// message that says "No such file or directory" rather than OpenSSL's
// "system lib".
absl::Status CheckReadable(const char* what, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " \"", path, "\" cannot be read: ", std::strerror(errno)));
  }
  std::fclose(f);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(
    const std::string& cert_file, const std::string& key_file) {
  constexpr char kCert[] = "TLS certificate file";
  constexpr char kKey[] = "TLS private key file";
  if (absl::Status s = CheckReadable(kCert, cert_file); !s.ok()) return s;
  if (absl::Status s = CheckReadable(kKey, key_file); !s.ok()) return s;

  boost::system::error_code ec;
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    ERR_clear_error();
    return absl::InternalError("OpenSSL: cannot require TLS 1.2");
  }
  context->set_options(
      ssl::context::default_workarounds | ssl::context::no_compression, ec);
  if (!ec) SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);
  // An encrypted key fails to load instead of OpenSSL asking for its
  // passphrase on the terminal.
  if (!ec) {
    context->set_password_callback(
        [](size_t, ssl::context::password_purpose) { return std::string(); },
        ec);
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("OpenSSL: cannot set up TLS: ", ec.message()));
  }

  context->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(kCert, " \"", cert_file,
                     "\" holds no PEM certificate: ", ec.message()));
  }
  const auto mismatch = [&] {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        kKey, " \"", key_file, "\" is not the key of the certificate in \"",
        cert_file, "\""));
  };
  context->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    // ec's value is OpenSSL's error code.
    const auto code = static_cast<unsigned long>(ec.value());
    if (ERR_GET_LIB(code) == ERR_LIB_X509 &&
        ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH) {
      return mismatch();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        kKey, " \"", key_file,
        "\" holds no PEM private key (or an encrypted one): ", ec.message()));
  }
  // A key of another type than the certificate's (RSA for an EC
  // certificate) loads without a word, beside it; this is where that shows.
  if (SSL_CTX_check_private_key(native) != 1) return mismatch();
  return context;
}

}  // namespace chime::http::internal
