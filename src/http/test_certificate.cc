#include "src/http/test_certificate.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <fstream>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace chime::http {
namespace {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO_free>>;
using Extension = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;

absl::Status OpenSslError(const char* step) {
  return absl::InternalError(absl::StrCat("OpenSSL: ", step));
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Extension ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

// The PEM text `write` puts into a memory BIO.
template <class F>
absl::StatusOr<std::string> Pem(F write) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || write(bio.get()) != 1) return OpenSslError("PEM");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

absl::StatusOr<TestCertificate> MakeTestCertificate() {
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("EVP_EC_gen");
  Cert cert(X509_new());
  if (cert == nullptr) return OpenSslError("X509_new");
  BIGNUM* serial = BN_new();
  const bool serial_ok =
      serial != nullptr &&
      BN_rand(serial, 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
      BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get())) != nullptr;
  BN_free(serial);
  if (!serial_ok) return OpenSslError("serial number");
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600) == nullptr ||
      X509_set_pubkey(cert.get(), key.get()) != 1 ||
      X509_NAME_add_entry_by_txt(
          name, "CN", MBSTRING_ASC,
          reinterpret_cast<const unsigned char*>("chime test"), -1, -1,
          0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1) {
    return OpenSslError("certificate fields");
  }
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_subject_key_identifier, "hash") ||
      !AddExtension(cert.get(), NID_subject_alt_name,
                    "DNS:localhost,IP:127.0.0.1")) {
    return OpenSslError("certificate extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return OpenSslError("X509_sign");
  }
  TestCertificate out;
  absl::StatusOr<std::string> cert_pem =
      Pem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); });
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem = Pem([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0,
                                    nullptr, nullptr);
  });
  if (!key_pem.ok()) return key_pem.status();
  out.cert_pem = *std::move(cert_pem);
  out.key_pem = *std::move(key_pem);
  return out;
}

std::string UniqueName(absl::string_view base) {
  return absl::StrCat(base, "_", getpid());
}

absl::StatusOr<TestCertificateFiles> WriteTestCertificate(
    const std::string& dir, const std::string& name) {
  absl::StatusOr<TestCertificate> made = MakeTestCertificate();
  if (!made.ok()) return made.status();
  TestCertificateFiles files{.cert_file = absl::StrCat(dir, "/", name, ".crt"),
                             .key_file = absl::StrCat(dir, "/", name, ".key")};
  for (const auto& [path, text] : {std::pair{files.cert_file, made->cert_pem},
                                   std::pair{files.key_file, made->key_pem}}) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return files;
}

}  // namespace chime::http
