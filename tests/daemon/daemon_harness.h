// Test support for integration tests of the real daemon: runs `chime serve`
// as a child process on 127.0.0.1 (port 0), reads its JSON log, and talks to
// it over HTTP.
//
// Every wait is bounded; a test that waits in vain fails, it never hangs.
//
// Thread-safety: one test thread per DaemonProcess.
#ifndef CHIME_TESTS_DAEMON_DAEMON_HARNESS_H_
#define CHIME_TESTS_DAEMON_DAEMON_HARNESS_H_

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace chime::daemon_test {

// A temporary directory, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  // Writes `text` to path()/name (atomically: a temporary file renamed over).
  void Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

struct HttpResult {
  long status = 0;
  std::string body;
  // Response headers as received, "Name: value" without the line end.
  std::vector<std::string> headers;
  // The value of the first header `name` (case-insensitive), or "".
  std::string Header(absl::string_view name) const;
};

// GET http://127.0.0.1:<port><path>, with a 10 s limit.
absl::StatusOr<HttpResult> HttpGet(int port, const std::string& path);
// `method` with `headers` ("Name: value") and `body`, likewise.
absl::StatusOr<HttpResult> HttpDo(int port, const std::string& method,
                                  const std::string& path,
                                  const std::vector<std::string>& headers,
                                  const std::string& body = "");

struct StreamedResult {
  HttpResult http;     // status, headers and the body as far as it came
  bool ended = false;  // the server ended the answer (else `until` did)
};
// GET http://127.0.0.1:<port><path> read as it comes (an event stream, a
// followed output): `until` is called with what has arrived whenever more
// does, and about every second meanwhile; true stops the transfer. Fails
// (with the body so far) when neither happens within `limit`.
absl::StatusOr<StreamedResult> HttpStream(
    int port, const std::string& path, const std::vector<std::string>& headers,
    const std::function<bool(const HttpResult&)>& until,
    absl::Duration limit = absl::Seconds(10));

class DaemonProcess {
 public:
  struct Options {
    std::string data_dir;
    std::string jobs_dir;
    // More flags for `chime serve`; a --listen replaces 127.0.0.1:0.
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  // added to the test's
    std::string log_file;  // "" = <data_dir>/../daemon-<n>.log
    // false: Start returns once the process is spawned, without waiting for
    // "chime serving" (port() is then 0), e.g. to kill it while it starts.
    bool wait_until_serving = true;
  };

  // Starts the daemon and waits (at most 30 s) until it logs "chime
  // serving", or fails with its log's tail (unless !wait_until_serving).
  static absl::StatusOr<std::unique_ptr<DaemonProcess>> Start(Options options);
  // Start with data in dir/data and jobs from dir/jobs, and `args`.
  static absl::StatusOr<std::unique_ptr<DaemonProcess>> StartIn(
      const TempDir& dir, std::vector<std::string> args = {}) {
    return Start({.data_dir = dir.path() + "/data",
                  .jobs_dir = dir.path() + "/jobs",
                  .args = std::move(args)});
  }
  // Kills (SIGKILL) the daemon if it still runs.
  ~DaemonProcess();

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  absl::StatusOr<HttpResult> Get(const std::string& path) const {
    return HttpGet(port_, path);
  }
  // GET `path`, expecting `want_status` and a JSON body (a test failure
  // otherwise, naming the path and the body); the body, or null.
  nlohmann::json GetJson(const std::string& path, long want_status = 200) const;

  // The log records so far (the daemon's stderr, one JSON object a line).
  std::vector<nlohmann::json> Logs() const;
  // Waits (at most `limit`) for a record for which `match` is true; returns
  // it, or null JSON.
  nlohmann::json WaitForLog(
      const std::function<bool(const nlohmann::json&)>& match,
      absl::Duration limit = absl::Seconds(20)) const;
  // A record with "msg" == msg and, when given, "fire_id" starting with
  // `fire_prefix`.
  nlohmann::json WaitForMsg(const std::string& msg,
                            const std::string& fire_prefix = "",
                            absl::Duration limit = absl::Seconds(20)) const;
  // The log's text, for failure messages.
  std::string LogText() const;

  // SIGTERM, then waits (at most `limit`) for the exit; returns the exit
  // status (-1 if it did not exit in time: it is then killed; 128+n for a
  // signal n).
  int Terminate(absl::Duration limit = absl::Seconds(30));
  // Waits (at most `limit`) for the daemon to exit by itself; its exit
  // status as Terminate's (-1 if it is still running).
  int WaitForExit(absl::Duration limit);
  // SIGHUP.
  void Hangup() const;
  // SIGKILL and reap.
  void Kill();

 private:
  DaemonProcess(pid_t pid, std::string log_file)
      : pid_(pid), log_file_(std::move(log_file)) {}

  pid_t pid_;
  int port_ = 0;
  std::string log_file_;
  bool reaped_ = false;
};

// The value of a sample in Prometheus text exposition, e.g.
// MetricValue(text, "chime_fires_total{outcome=\"run\",reason=\"\"}");
// NaN when absent.
double MetricValue(const std::string& exposition, const std::string& series);

}  // namespace chime::daemon_test

#endif  // CHIME_TESTS_DAEMON_DAEMON_HARNESS_H_
