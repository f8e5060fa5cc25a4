#include "cli/client.h"

#include <cctype>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "curl/curl.h"

namespace chime::cli {
namespace {

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

absl::StatusCode CodeFor(long http_status) {
  switch (http_status) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return http_status >= 500 ? absl::StatusCode::kUnavailable
                                : absl::StatusCode::kUnknown;
  }
}

}  // namespace

void AddClientOptions(CLI::App* cmd, ClientOptions* options) {
  const char* server = std::getenv("CHIME_SERVER");
  options->server = server != nullptr ? server : "http://127.0.0.1:8712";
  const char* token = std::getenv("CHIME_TOKEN");
  options->token = token != nullptr ? token : "";
  cmd->add_option("--server", options->server,
                  "the daemon's URL (default $CHIME_SERVER, else "
                  "http://127.0.0.1:8712)");
  cmd->add_option("--token", options->token,
                  "bearer token (default $CHIME_TOKEN)");
  cmd->add_flag("--json", options->json, "print the API's JSON");
}

absl::StatusOr<nlohmann::ordered_json> CallApi(const ClientOptions& options,
                                               const std::string& method,
                                               const std::string& path) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  const std::string url = absl::StrCat(options.server, path);
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST") curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_slist* headers = nullptr;
  const std::string auth =
      absl::StrCat("Authorization: Bearer ", options.token);
  if (!options.token.empty())
    headers = curl_slist_append(headers, auth.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat(options.server, ": ", curl_easy_strerror(rc)));
  }
  nlohmann::ordered_json json =
      nlohmann::ordered_json::parse(body, nullptr, false);
  if (status >= 200 && status < 300) {
    if (json.is_discarded()) {
      return absl::UnavailableError(
          absl::StrCat(method, " ", path, ": the answer is not JSON"));
    }
    return json;
  }
  std::string detail = absl::StrCat("HTTP ", status);
  if (!json.is_discarded() && json.is_object() && json.contains("detail") &&
      json["detail"].is_string()) {
    detail = json["detail"].get<std::string>();
  }
  return absl::Status(CodeFor(status), detail);
}

int ReportError(const absl::Status& status, const Io& io) {
  io.err << "chime: " << status.message() << "\n";
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitNotAllowed;
    case absl::StatusCode::kFailedPrecondition:
      return kExitConflict;
    default:
      return kExitFailure;
  }
}

std::pair<std::string, std::string> SplitJobName(const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return {"default", name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

std::string EncodeQueryValue(const std::string& value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace chime::cli
