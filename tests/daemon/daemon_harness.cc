#include "tests/daemon/daemon_harness.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

extern char** environ;

namespace chime::daemon_test {
namespace {

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits for `pid` (at most `limit`); its exit status, 128+signal, or -1.
int WaitExit(pid_t pid, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (r < 0 || absl::Now() > deadline) return -1;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/chime-daemon-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::Write(const std::string& name, const std::string& text) const {
  const std::filesystem::path final_path = path_ + "/" + name;
  const std::filesystem::path tmp =
      final_path.parent_path() /
      ("." + final_path.filename().string() + ".tmp");
  std::filesystem::create_directories(final_path.parent_path());
  { std::ofstream(tmp) << text; }
  std::filesystem::rename(tmp, final_path);
}

absl::StatusOr<HttpResult> HttpGet(int port, const std::string& path) {
  return HttpDo(port, "GET", path, {});
}

static size_t AppendHeader(char* data, size_t size, size_t n, void* out) {
  absl::string_view line(data, size * n);
  line = absl::StripTrailingAsciiWhitespace(line);
  if (!line.empty())
    static_cast<std::vector<std::string>*>(out)->emplace_back(line);
  return size * n;
}

std::string HttpResult::Header(absl::string_view name) const {
  for (const std::string& h : headers) {
    const size_t colon = h.find(':');
    if (colon != std::string::npos &&
        absl::EqualsIgnoreCase(absl::string_view(h).substr(0, colon), name)) {
      return std::string(
          absl::StripAsciiWhitespace(absl::string_view(h).substr(colon + 1)));
    }
  }
  return "";
}

absl::StatusOr<HttpResult> HttpDo(int port, const std::string& method,
                                  const std::string& path,
                                  const std::vector<std::string>& headers,
                                  const std::string& body) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init");
  HttpResult result;
  const std::string url = absl::StrCat("http://127.0.0.1:", port, path);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method != "GET") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(body.size()));
  }
  curl_slist* list = nullptr;
  for (const std::string& h : headers)
    list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result.headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
  curl_easy_cleanup(curl);
  curl_slist_free_all(list);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("GET ", url, ": ", curl_easy_strerror(rc)));
  }
  return result;
}

namespace {

struct StreamState {
  CURL* curl = nullptr;
  HttpResult* result = nullptr;
  const std::function<bool(const HttpResult&)>* until = nullptr;
  bool stopped = false;
};

bool StreamDone(StreamState& s) {
  if (s.result->status == 0)
    curl_easy_getinfo(s.curl, CURLINFO_RESPONSE_CODE, &s.result->status);
  if (!s.stopped && (*s.until)(*s.result)) s.stopped = true;
  return s.stopped;
}

size_t StreamWrite(char* data, size_t size, size_t n, void* out) {
  StreamState& s = *static_cast<StreamState*>(out);
  s.result->body.append(data, size * n);
  return StreamDone(s) ? 0 : size * n;
}

int StreamProgress(void* out, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return StreamDone(*static_cast<StreamState*>(out)) ? 1 : 0;
}

}  // namespace

absl::StatusOr<StreamedResult> HttpStream(
    int port, const std::string& path, const std::vector<std::string>& headers,
    const std::function<bool(const HttpResult&)>& until, absl::Duration limit) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init");
  StreamedResult out;
  StreamState state{.curl = curl, .result = &out.http, .until = &until};
  const std::string url = absl::StrCat("http://127.0.0.1:", port, path);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_slist* list = nullptr;
  for (const std::string& h : headers)
    list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &StreamWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &out.http.headers);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &StreamProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &state);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(limit)));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.http.status);
  curl_easy_cleanup(curl);
  curl_slist_free_all(list);
  if (state.stopped) return out;
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("GET ", url, ": ", curl_easy_strerror(rc),
                     "; the body so far: ", out.http.body));
  }
  out.ended = true;
  return out;
}

absl::StatusOr<std::unique_ptr<DaemonProcess>> DaemonProcess::Start(
    Options options) {
  static std::atomic<int> counter{0};
  std::string log_file = options.log_file;
  if (log_file.empty()) {
    log_file = absl::StrCat(options.data_dir, ".daemon-", ++counter, ".log");
  }
  std::vector<std::string> args = {
      CHIME_BINARY,  "serve",          "--data-dir",   options.data_dir,
      "--jobs-dir",  options.jobs_dir, "--log-format", "json",
      "--log-level", "debug"};
  // Any free port on 127.0.0.1, unless the test listens elsewhere.
  if (std::find(options.args.begin(), options.args.end(), "--listen") ==
      options.args.end()) {
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  }
  args.insert(args.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (!options.env.contains(name) && !absl::StartsWith(name, "CHIME_"))
      env_text.push_back(entry);
  }
  for (const auto& [k, v] : options.env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("posix_spawn ", CHIME_BINARY));
  }
  std::unique_ptr<DaemonProcess> d(new DaemonProcess(pid, log_file));
  if (!options.wait_until_serving) return d;
  // Serving, or gone (it failed to start: a bad configuration exits before
  // the log is set up).
  const auto started = [&](const nlohmann::json& j) {
    const std::string msg = j.value("msg", "");
    return msg == "chime serving" || msg == "chime serve could not start";
  };
  nlohmann::json serving;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (serving.is_null() && absl::Now() < deadline) {
    serving = d->WaitForLog(started, absl::Milliseconds(100));
    int status = 0;
    if (serving.is_null() && waitpid(pid, &status, WNOHANG) == pid) {
      d->reaped_ = true;
      return absl::FailedPreconditionError(absl::StrCat(
          "the daemon exited as it started; its log:\n", d->LogText()));
    }
  }
  if (serving.is_null() || serving["msg"] != "chime serving") {
    return absl::DeadlineExceededError(
        absl::StrCat("the daemon did not start; its log:\n", d->LogText()));
  }
  const std::string listen = serving["listen"];
  if (!absl::SimpleAtoi(listen.substr(listen.rfind(':') + 1), &d->port_)) {
    return absl::InternalError(absl::StrCat("listen field: ", listen));
  }
  return d;
}

DaemonProcess::~DaemonProcess() { Kill(); }

nlohmann::json DaemonProcess::GetJson(const std::string& path,
                                      long want_status) const {
  absl::StatusOr<HttpResult> r = Get(path);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return nullptr;
  EXPECT_EQ(r->status, want_status) << path << ": " << r->body;
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r->body;
  return j;
}

std::vector<nlohmann::json> DaemonProcess::Logs() const {
  std::vector<nlohmann::json> out;
  for (absl::string_view line :
       absl::StrSplit(ReadAll(log_file_), '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json DaemonProcess::WaitForLog(
    const std::function<bool(const nlohmann::json&)>& match,
    absl::Duration limit) const {
  const absl::Time deadline = absl::Now() + limit;
  for (;;) {
    for (const nlohmann::json& j : Logs()) {
      if (match(j)) return j;
    }
    if (absl::Now() > deadline) return nullptr;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

nlohmann::json DaemonProcess::WaitForMsg(const std::string& msg,
                                         const std::string& fire_prefix,
                                         absl::Duration limit) const {
  return WaitForLog(
      [&](const nlohmann::json& j) {
        if (j.value("msg", "") != msg) return false;
        return fire_prefix.empty() ||
               absl::StartsWith(j.value("fire_id", ""), fire_prefix);
      },
      limit);
}

std::string DaemonProcess::LogText() const {
  std::string text = ReadAll(log_file_);
  if (text.size() > 8000) text = "..." + text.substr(text.size() - 8000);
  return text;
}

int DaemonProcess::Terminate(absl::Duration limit) {
  if (reaped_) return -1;
  kill(pid_, SIGTERM);
  const int status = WaitExit(pid_, limit);
  if (status < 0) {
    Kill();
    return -1;
  }
  reaped_ = true;
  return status;
}

int DaemonProcess::WaitForExit(absl::Duration limit) {
  if (reaped_) return -1;
  const int status = WaitExit(pid_, limit);
  if (status >= 0) reaped_ = true;
  return status;
}

void DaemonProcess::Hangup() const { kill(pid_, SIGHUP); }

void DaemonProcess::Kill() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  WaitExit(pid_, absl::Seconds(10));
  reaped_ = true;
}

double MetricValue(const std::string& exposition, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::StartsWith(line, series)) continue;
    line.remove_prefix(series.size());
    if (line.empty() || line[0] != ' ') continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(1), &v)) return v;
  }
  return std::nan("");
}

}  // namespace chime::daemon_test
