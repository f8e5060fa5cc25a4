// A real Prometheus server scrapes the real daemon: the exposition that
// `chime serve` writes at /metrics must be what Prometheus accepts (no scrape
// error) and the series docs/daemon.md lists must arrive with the values the
// daemon's jobs make (runs, failures, retries, a paused job, lag, store
// writes).
//
// Needs the `prometheus` binary on PATH (Debian package `prometheus`,
// installed by scripts/install-deps.sh); without it the test fails and says
// so. Everything listens on 127.0.0.1; every wait is bounded.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/daemon/daemon_harness.h"

extern char** environ;

namespace chime::daemon_test {
namespace {

// Prometheus can take a while to open its TSDB and start serving on a loaded
// two-core machine (the daemon beside it runs under ASan).
constexpr absl::Duration kReadyLimit = absl::Seconds(60);
// Scrapes every second; the failing job needs a first attempt, a retry and a
// scrape after it.
constexpr absl::Duration kValuesLimit = absl::Seconds(60);
constexpr absl::Duration kStopLimit = absl::Seconds(10);
constexpr int kPortTries = 3;
constexpr char kJobName[] = "chime";

// `name` looked up in $PATH; "" if absent.
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// A port that was free a moment ago on 127.0.0.1 (another process may take
// it before Prometheus binds it: the caller retries).
absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) return absl::InternalError("binding 127.0.0.1:0");
  return ntohs(addr.sin_port);
}

// Percent-encoding for a query parameter (RFC 3986 unreserved kept).
std::string UrlEncode(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

std::string Tail(const std::string& path, size_t n = 4000) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  return text.size() > n ? "..." + text.substr(text.size() - n) : text;
}

// A Prometheus server in a directory of its own, stopped (SIGTERM, then
// SIGKILL) on destruction.
class PrometheusServer {
 public:
  // Starts `binary` with `config` (a prometheus.yml in `dir`) on a free port
  // and waits until /-/ready answers 200. Retries on another port when the
  // first is taken meanwhile.
  static absl::StatusOr<std::unique_ptr<PrometheusServer>> Start(
      const std::string& binary, const std::string& dir,
      const std::string& config) {
    std::string last_error;
    for (int attempt = 1; attempt <= kPortTries; ++attempt) {
      absl::StatusOr<int> port = FreePort();
      if (!port.ok()) return port.status();
      std::unique_ptr<PrometheusServer> server(new PrometheusServer(
          dir, *port, absl::StrCat(dir, "/prometheus-", attempt, ".log")));
      std::vector<std::string> args = {
          binary, absl::StrCat("--config.file=", config),
          absl::StrCat("--storage.tsdb.path=", dir, "/tsdb-", attempt),
          absl::StrCat("--web.listen-address=127.0.0.1:", *port),
          "--web.enable-lifecycle"};
      if (absl::Status s = server->Spawn(args); !s.ok()) return s;
      const absl::Time deadline = absl::Now() + kReadyLimit;
      while (absl::Now() < deadline) {
        absl::StatusOr<HttpResult> ready = HttpGet(*port, "/-/ready");
        if (ready.ok() && ready->status == 200) return server;
        if (server->Exited()) break;
        absl::SleepFor(absl::Milliseconds(200));
      }
      last_error = server->LogTail();
      if (!server->Exited()) {
        return absl::DeadlineExceededError(absl::StrCat(
            "prometheus not ready within ", absl::FormatDuration(kReadyLimit),
            "; its log:\n", last_error));
      }
      // It exited: most likely the port was taken meanwhile. Try another.
    }
    return absl::UnavailableError(
        absl::StrCat("prometheus exited at start ", kPortTries,
                     " times; last log:\n", last_error));
  }

  ~PrometheusServer() {
    if (pid_ <= 0 || reaped_) return;
    kill(pid_, SIGTERM);
    const absl::Time deadline = absl::Now() + kStopLimit;
    while (!Exited() && absl::Now() < deadline)
      absl::SleepFor(absl::Milliseconds(20));
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  int port() const { return port_; }
  std::string LogTail() const { return Tail(log_); }

  // GET on the server's HTTP API; the parsed JSON of a 200 answer with
  // "status": "success".
  absl::StatusOr<nlohmann::json> Api(const std::string& path) const {
    absl::StatusOr<HttpResult> r = HttpGet(port_, path);
    if (!r.ok()) return r.status();
    nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    if (r->status != 200 || j.is_discarded() ||
        j.value("status", "") != "success") {
      return absl::UnavailableError(
          absl::StrCat("GET ", path, ": ", r->status, " ", r->body));
    }
    return j;
  }

  // The value of an instant query that yields at most one sample (wrap it in
  // sum() for that); nullopt while it yields none.
  absl::StatusOr<std::optional<double>> Scalar(
      const std::string& promql) const {
    absl::StatusOr<nlohmann::json> j =
        Api(absl::StrCat("/api/v1/query?query=", UrlEncode(promql)));
    if (!j.ok()) return j.status();
    const nlohmann::json& result = (*j)["data"]["result"];
    if (!result.is_array() || result.empty()) return std::nullopt;
    if (result.size() > 1) {
      return absl::FailedPreconditionError(
          absl::StrCat(promql, ": ", result.size(), " series"));
    }
    double v = 0;
    if (!absl::SimpleAtod(result[0]["value"][1].get<std::string>(), &v))
      return absl::InternalError(absl::StrCat(promql, ": ", result.dump()));
    return v;
  }

 private:
  PrometheusServer(std::string dir, int port, std::string log)
      : dir_(std::move(dir)), port_(port), log_(std::move(log)) {}

  absl::Status Spawn(std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, log_.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    posix_spawn_file_actions_addchdir_np(&files, dir_.c_str());
    const int err =
        posix_spawn(&pid_, argv[0], &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    if (err != 0) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat("posix_spawn ", args[0]));
    }
    return absl::OkStatus();
  }

  bool Exited() {
    if (reaped_) return true;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) reaped_ = true;
    return reaped_;
  }

  const std::string dir_;
  const int port_;
  const std::string log_;
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// One series the test waits for: the query (one sample) and what its value
// must satisfy.
struct Expectation {
  std::string promql;
  std::string want;  // for the failure message
  std::function<bool(double)> holds;
  std::optional<double> last;  // the value last seen
  bool Met() const { return last.has_value() && holds(*last); }
};

TEST(PrometheusTest, ScrapesTheDaemonWithoutErrorsAndSeesItsSeries) {
  const std::string prometheus = FindOnPath("prometheus");
  ASSERT_FALSE(prometheus.empty())
      << "the prometheus binary is not on PATH; install the Debian package "
         "`prometheus` (scripts/install-deps.sh lists it)";

  TempDir dir;
  dir.Write("jobs/ok.yaml",
            "id: ok\nschedule: \"@every 1s\"\nshell: \"true\"\n");
  dir.Write("jobs/fails.yaml",
            "id: fails\n"
            "schedule: \"@every 1s\"\n"
            "shell: \"exit 1\"\n"
            "retry: {max_attempts: 2, initial_backoff: 100ms, "
            "max_backoff: 200ms}\n");
  dir.Write("jobs/paused.yaml",
            "id: resting\nschedule: \"@every 1s\"\npaused: true\n"
            "shell: \"true\"\n");
  absl::StatusOr<std::unique_ptr<DaemonProcess>> daemon = DaemonProcess::Start(
      {.data_dir = dir.path() + "/data", .jobs_dir = dir.path() + "/jobs"});
  ASSERT_TRUE(daemon.ok()) << daemon.status();

  dir.Write("prometheus/prometheus.yml",
            absl::StrCat("global:\n"
                         "  scrape_interval: 1s\n"
                         "  scrape_timeout: 1s\n"
                         "  evaluation_interval: 1s\n"
                         "scrape_configs:\n"
                         "  - job_name: ",
                         kJobName,
                         "\n"
                         "    metrics_path: /metrics\n"
                         "    static_configs:\n"
                         "      - targets: [\"127.0.0.1:",
                         (*daemon)->port(), "\"]\n"));
  absl::StatusOr<std::unique_ptr<PrometheusServer>> server =
      PrometheusServer::Start(prometheus, dir.path() + "/prometheus",
                              dir.path() + "/prometheus/prometheus.yml");
  ASSERT_TRUE(server.ok()) << server.status();

  const auto at_least = [](double n) {
    return [n](double v) { return v >= n; };
  };
  const auto equals = [](double n) { return [n](double v) { return v == n; }; };
  const std::string job = absl::StrCat("job=\"", kJobName, "\"");
  std::vector<Expectation> want = {
      {absl::StrCat("sum(up{", job, "})"), "== 1", equals(1)},
      {absl::StrCat("sum(chime_fires_total{", job, ",outcome=\"run\"})"), "> 0",
       at_least(1)},
      {absl::StrCat("sum(chime_runs_finished_total{", job,
                    ",state=\"succeeded\"})"),
       "> 0", at_least(1)},
      {absl::StrCat("sum(chime_runs_finished_total{", job,
                    ",state=\"failed\"})"),
       ">= 1", at_least(1)},
      {absl::StrCat("sum(chime_retries_total{", job, "})"), ">= 1",
       at_least(1)},
      {absl::StrCat("sum(chime_jobs{", job, ",state=\"paused\"})"), "== 1",
       equals(1)},
      {absl::StrCat("sum(chime_jobs{", job, ",state=\"active\"})"), "== 2",
       equals(2)},
      {absl::StrCat("sum(chime_schedule_lag_seconds_count{", job, "})"), "> 0",
       at_least(1)},
      {absl::StrCat("sum(chime_store_write_seconds_count{", job,
                    ",op=\"claim_fires\"})"),
       "> 0", at_least(1)},
      // A histogram Prometheus can compute with: its buckets have `le`.
      {absl::StrCat("count(chime_schedule_lag_seconds_bucket{", job,
                    ",le=\"+Inf\"})"),
       "== 1", equals(1)},
  };

  const absl::Time deadline = absl::Now() + kValuesLimit;
  std::string last_error;
  for (bool all = false; !all && absl::Now() < deadline;) {
    all = true;
    for (Expectation& e : want) {
      if (e.Met()) continue;
      absl::StatusOr<std::optional<double>> v = (*server)->Scalar(e.promql);
      if (v.ok()) {
        e.last = *v;
      } else {
        last_error = v.status().ToString();
      }
      all = all && e.Met();
    }
    if (!all) absl::SleepFor(absl::Milliseconds(500));
  }
  for (const Expectation& e : want) {
    EXPECT_TRUE(e.Met()) << e.promql << " should be " << e.want << ", is "
                         << (e.last.has_value() ? absl::StrCat(*e.last)
                                                : "absent");
  }

  // Prometheus parsed every scrape: the target is up with no error.
  absl::StatusOr<nlohmann::json> targets =
      (*server)->Api("/api/v1/targets?state=active");
  ASSERT_TRUE(targets.ok()) << targets.status();
  const nlohmann::json& active = (*targets)["data"]["activeTargets"];
  ASSERT_TRUE(active.is_array() && active.size() == 1) << targets->dump();
  EXPECT_EQ(active[0]["labels"].value("job", ""), kJobName);
  EXPECT_EQ(active[0].value("scrapeUrl", ""),
            absl::StrCat("http://127.0.0.1:", (*daemon)->port(), "/metrics"));
  EXPECT_EQ(active[0].value("health", ""), "up") << active[0].dump();
  EXPECT_EQ(active[0].value("lastError", "?"), "") << active[0].dump();

  if (HasFailure()) {
    ADD_FAILURE() << "last query error: " << last_error << "\nprometheus log:\n"
                  << (*server)->LogTail() << "\ndaemon log:\n"
                  << (*daemon)->LogText();
  }
  EXPECT_EQ((*daemon)->Terminate(), 0) << (*daemon)->LogText();
}

}  // namespace
}  // namespace chime::daemon_test
