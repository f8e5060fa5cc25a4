// Test support: self-signed certificates for HTTPS tests, made with OpenSSL
// at test time (nothing to expire in the repository).
//
// Thread-safety: thread-safe.
#ifndef CHIME_SRC_HTTP_TEST_CERTIFICATE_H_
#define CHIME_SRC_HTTP_TEST_CERTIFICATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chime::http {

struct TestCertificate {
  std::string cert_pem;  // the certificate; also the CA a client trusts
  std::string key_pem;   // its private key, unencrypted PKCS#8
};

// A fresh P-256 key and a self-signed certificate for it, valid from an hour
// ago for a day, for "localhost" and 127.0.0.1 (subjectAltName), usable as its
// own trust anchor (CA:TRUE). Internal when OpenSSL fails.
absl::StatusOr<TestCertificate> MakeTestCertificate();

struct TestCertificateFiles {
  std::string cert_file;
  std::string key_file;
};

// `base` made unique to this process ("<base>_<pid>"): ctest runs each test
// case as its own process, in parallel, so files in a shared directory such
// as ::testing::TempDir() need names no other test process writes.
std::string UniqueName(absl::string_view base);

// MakeTestCertificate() written to <dir>/<name>.crt and <dir>/<name>.key.
absl::StatusOr<TestCertificateFiles> WriteTestCertificate(
    const std::string& dir, const std::string& name);

}  // namespace chime::http

#endif  // CHIME_SRC_HTTP_TEST_CERTIFICATE_H_
