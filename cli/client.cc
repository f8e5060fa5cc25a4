#include "cli/client.h"

#include <algorithm>
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
    case 413:
    case 415:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
    case 412:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return http_status >= 500 ? absl::StatusCode::kUnavailable
                                : absl::StatusCode::kUnknown;
  }
}

// What every call sets: no signals, the CA to trust, the token. Returns the
// header list (the caller adds to it, sets it and frees it).
curl_slist* SetCommonOptions(CURL* curl, const ClientOptions& options) {
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (!options.ca_file.empty())
    curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
  if (options.token.empty()) return nullptr;
  const std::string auth =
      absl::StrCat("Authorization: Bearer ", options.token);
  return curl_slist_append(nullptr, auth.c_str());  // copies the string
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
  const char* ca = std::getenv("CHIME_CACERT");
  options->ca_file = ca != nullptr ? ca : "";
  cmd->add_option("--cacert", options->ca_file,
                  "CA certificate (PEM) to trust for an https server, e.g. "
                  "its own self-signed one (default $CHIME_CACERT)");
  cmd->add_flag("--json", options->json, "print the API's JSON");
}

absl::StatusOr<nlohmann::ordered_json> CallApi(const ClientOptions& options,
                                               const std::string& method,
                                               const std::string& path,
                                               const std::string& request) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  const std::string url = absl::StrCat(options.server, path);
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method != "GET" && method != "DELETE") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(request.size()));
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
  curl_slist* headers = SetCommonOptions(curl, options);
  if (!request.empty())
    headers = curl_slist_append(headers, "Content-Type: application/json");
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
  if (status == 204) return nlohmann::ordered_json();
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

namespace {

struct Stream {
  CURL* curl = nullptr;
  const std::function<bool(absl::string_view)>* on_data = nullptr;
  long status = 0;
  std::string error_body;  // of a non-2xx answer
  bool stopped = false;    // on_data returned false
};

size_t OnStreamData(char* data, size_t size, size_t n, void* out) {
  Stream& s = *static_cast<Stream*>(out);
  const size_t bytes = size * n;
  if (s.status == 0)
    curl_easy_getinfo(s.curl, CURLINFO_RESPONSE_CODE, &s.status);
  if (s.status < 200 || s.status >= 300) {
    if (s.error_body.size() < (64 << 10)) s.error_body.append(data, bytes);
    return bytes;
  }
  if (!(*s.on_data)(absl::string_view(data, bytes))) {
    s.stopped = true;
    return 0;  // curl ends the transfer (CURLE_WRITE_ERROR)
  }
  return bytes;
}

}  // namespace

absl::Status StreamApi(const ClientOptions& options, const std::string& path,
                       const std::function<bool(absl::string_view)>& on_data) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  const std::string url = absl::StrCat(options.server, path);
  Stream stream{.curl = curl, .on_data = &on_data};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnStreamData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &stream);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_slist* headers = SetCommonOptions(curl, options);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(curl);
  if (stream.status == 0)
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &stream.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (stream.stopped) return absl::OkStatus();
  if (rc != CURLE_OK && stream.status == 0) {  // no answer at all
    return absl::UnavailableError(
        absl::StrCat(options.server, ": ", curl_easy_strerror(rc)));
  }
  if (stream.status < 200 || stream.status >= 300) {
    const nlohmann::ordered_json json =
        nlohmann::ordered_json::parse(stream.error_body, nullptr, false);
    std::string detail = absl::StrCat("HTTP ", stream.status);
    if (!json.is_discarded() && json.is_object() && json.contains("detail") &&
        json["detail"].is_string()) {
      detail = json["detail"].get<std::string>();
    }
    return absl::Status(CodeFor(stream.status), detail);
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(
        "GET ", path, ": the stream broke off: ", curl_easy_strerror(rc)));
  }
  return absl::OkStatus();
}

void PrintTable(const std::vector<std::vector<std::string>>& rows,
                std::ostream& out, bool right_align_after_first) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - row[i].size(), ' ');
      if (i > 0) line += "  ";
      if (i > 0 && right_align_after_first) {
        line += pad + row[i];
      } else {
        line += row[i] + pad;
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
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
