// `chime serve` with `tls:` in chime.yaml: HTTPS on its listener, with a
// certificate made at test time; libcurl verifies the daemon against it.
#include <curl/curl.h>

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/app.h"
#include "cli/job_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/http/test_certificate.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET `url`, trusting `ca_file` only; within 10 s.
absl::StatusOr<HttpResult> HttpsGet(const std::string& url,
                                    const std::string& ca_file) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init");
  HttpResult result;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("GET ", url, ": ", curl_easy_strerror(rc)));
  }
  return result;
}

TEST(DaemonTlsTest, ServesHealthzOverHttps) {
  TempDir dir;
  absl::StatusOr<http::TestCertificateFiles> files =
      http::WriteTestCertificate(dir.path(), "daemon");
  ASSERT_TRUE(files.ok()) << files.status();
  dir.Write("chime.yaml", absl::StrCat("tls:\n  cert: ", files->cert_file,
                                       "\n  key: ", files->key_file, "\n"));
  auto d =
      DaemonProcess::StartIn(dir, {"--config", dir.path() + "/chime.yaml"});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string base = absl::StrCat("https://127.0.0.1:", (*d)->port());

  absl::StatusOr<HttpResult> health =
      HttpsGet(base + "/healthz", files->cert_file);
  ASSERT_TRUE(health.ok()) << health.status() << "\n" << (*d)->LogText();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  // The log says where, with the scheme.
  const nlohmann::json serving = (*d)->WaitForMsg("chime serving");
  ASSERT_FALSE(serving.is_null());
  EXPECT_EQ(serving.value("metrics", ""), base + "/metrics");
  // Plain HTTP gets no answer, and the daemon goes on serving HTTPS.
  EXPECT_FALSE((*d)->Get("/healthz").ok());
  absl::StatusOr<HttpResult> ready =
      HttpsGet(base + "/readyz", files->cert_file);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ((*d)->Terminate(), 0);
}

// The flags --tls-cert and --tls-key, and the CLI trusting the daemon's own
// certificate with --cacert (without it, the system's CAs refuse it).
TEST(DaemonTlsTest, FlagsTurnOnHttpsAndTheCliTrustsTheCertificateItIsGiven) {
  TempDir dir;
  absl::StatusOr<http::TestCertificateFiles> files =
      http::WriteTestCertificate(dir.path(), "daemon");
  ASSERT_TRUE(files.ok()) << files.status();
  dir.Write("jobs/a.yaml",
            "id: a\nschedule: \"@daily\"\nshell: {command: "
            "\"true\"}\n");
  auto d = DaemonProcess::StartIn(
      dir, {"--tls-cert", files->cert_file, "--tls-key", files->key_file});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string server = absl::StrCat("https://127.0.0.1:", (*d)->port());
  const auto chime = [&](std::vector<std::string> args, std::string* out) {
    const CliResult r = RunChime(std::move(args), {cli::AddJobCommand});
    *out = r.out + r.err;
    return r.status;
  };
  std::string out;
  EXPECT_EQ(chime({"job", "list", "--server", server}, &out), 1);
  EXPECT_THAT(out, HasSubstr("certificate"));
  EXPECT_EQ(chime({"job", "get", "a", "--server", server, "--cacert",
                   files->cert_file},
                  &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("schedule: \"@daily\""));
}

TEST(DaemonTlsTest, AKeyThatIsNotTheCertificatesFailsTheStartNamingIt) {
  TempDir dir;
  absl::StatusOr<http::TestCertificateFiles> files =
      http::WriteTestCertificate(dir.path(), "daemon");
  ASSERT_TRUE(files.ok()) << files.status();
  absl::StatusOr<http::TestCertificateFiles> other =
      http::WriteTestCertificate(dir.path(), "other");
  ASSERT_TRUE(other.ok()) << other.status();
  auto d = DaemonProcess::Start({.data_dir = dir.path() + "/data",
                                 .jobs_dir = dir.path() + "/jobs",
                                 .env = {{"CHIME_TLS_CERT", files->cert_file},
                                         {"CHIME_TLS_KEY", other->key_file}}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr(absl::StrCat("TLS private key file \\\"",
                                     other->key_file, "\\\" is not the key")));
}

}  // namespace
}  // namespace chime::daemon_test
