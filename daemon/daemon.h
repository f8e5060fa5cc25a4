// Daemon: `chime serve` as an object. It wires the real pieces together -- a
// SqliteStore in the data directory, a Scheduler on it, shell and HTTP
// executors, the job files (loaded, applied as a diff, watched with
// inotify), the metrics, and an HTTP listener serving /metrics, /healthz and
// /readyz -- and takes them down in order.
//
// Start, in order:
//   1. the data directory is created; the process ledger's orphans (children
//      of an earlier incarnation killed with kill -9) are killed, so that no
//      at-least-once retry runs beside its orphaned first attempt;
//   2. the store opens -- SQLite in the data directory (one daemon per data
//      directory: a second one fails with the holder named), or a shared
//      PostgreSQL database (a second daemon waits as a standby until the
//      first one's lease expires, serving health checks, metrics and
//      /v1/cluster meanwhile; daemon/store_open.h, daemon/standby_http.h;
//      every node holds a member lease, daemon/membership.h) -- and the
//      scheduler
//      recovers from it (runs left
//      unfinished are recorded lost, at-least-once ones start again, fires
//      missed while down go through each job's misfire policy);
//   3. the HTTP listener starts (/readyz answers 503 until the end);
//   4. the job files load and apply, the scheduler starts, the jobs directory
//      is watched (a change reloads it a moment later); on a shared store the
//      job changes other nodes make are followed (daemon/job_follower.h).
// Reload (SIGHUP, or a change in the jobs directory) re-reads the job files.
// Stop (SIGTERM/SIGINT): stops starting runs, lets running ones finish for
// shutdown_grace, then cancels them (SIGTERM to their process groups, SIGKILL
// a few seconds later), records their outcomes, flushes the store, and stops
// the listener.
//
// /healthz: 200 while the process runs. /readyz: 200 with a JSON body once
// started and until Stop begins ({"ready":true,"store":"open",
// "scheduler":"running","jobs":12,"job_file_errors":["jobs/a.yaml:3:5: ..."]}),
// 503 otherwise; a job file that does not load is listed but does not make
// the daemon unready (the version loaded before is in force).
//
// Thread-safety: Reload and Stop may be called from any thread; Stop once.
#ifndef CHIME_DAEMON_DAEMON_H_
#define CHIME_DAEMON_DAEMON_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/scheduler.h"
#include "daemon/daemon_metrics.h"
#include "daemon/dir_watcher.h"
#include "daemon/job_follower.h"
#include "daemon/job_registry.h"
#include "daemon/job_sync.h"
#include "daemon/logger.h"
#include "daemon/membership.h"
#include "src/api/auth.h"
#include "src/api/event_hub.h"
#include "src/api/live_output.h"
#include "src/api/routes.h"
#include "src/config/daemon_config.h"
#include "src/core/packed_spec.h"
#include "src/exec/shell_executor.h"
#include "src/http/server.h"

namespace chime::daemon {

// How the daemon works with the process that runs it.
struct DaemonHooks {
  // On a shared store held by another daemon, Start waits as a standby for
  // its lease (daemon/store_open.h), calling `pause` between tries: it
  // waits up to the duration given and returns false to give up (a signal
  // to stop); Start then fails with Cancelled.
  std::function<bool(absl::Duration)> pause = [](absl::Duration d) {
    absl::SleepFor(d);
    return true;
  };

  // Asks the process to Stop() the daemon and exit with exit_status():
  // the daemon gives up the shared store's lease because its clock is off
  // by more than max_clock_skew. Called once, on a thread of the daemon's.
  // Unset: nothing happens (the daemon goes on scheduling).
  std::function<void()> request_stop;
};

class Daemon {
 public:
  // The exit status of a daemon that lost its shared store's lease.
  static constexpr int kExitLeaseLost = 3;

  // `log` must outlive the Daemon.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(
      const config::DaemonConfig& config, Logger& log, DaemonHooks hooks = {});
  ~Daemon();  // Stop()

  // Re-reads and applies the job files.
  JobSync::Report Reload();
  // See the file comment. Idempotent.
  void Stop();

  // The port the HTTP listener is on.
  int port() const;
  // What the process should exit with after Stop: 0, or kExitLeaseLost once
  // the daemon asked to stop because its clock is off
  // (DaemonHooks::request_stop).
  int exit_status() const { return exit_status_.load(); }

 private:
  Daemon(const config::DaemonConfig& config, Logger& log);
  absl::Status StartAll();
  // SchedulerOptions::on_lease_lost: logs, kills the attempts' processes and
  // exits with kExitLeaseLost.
  [[noreturn]] void LeaseLost(const absl::Status& why);
  // SchedulerOptions::on_clock_skew: logs and asks the process to stop
  // (DaemonHooks::request_stop), so that the lease goes, after a drain, to a
  // node whose clock agrees with the store's.
  void ClockSkewed(absl::Duration offset);
  // The function every job's attempts call: it reads the job's definition
  // from the attempt (AttemptContext::Spec) and runs its executor, with
  // metrics. One for all jobs, so a job costs no function of its own.
  absl::Status RunAttempt(const AttemptContext& ctx);
  http::Response Ready() const;
  // The jobs directory's files (none, with a warning, when it cannot be
  // listed).
  std::vector<config::FileResult> LoadJobFiles();
  // After the job files were applied: a bulk change gives memory back.
  void AfterApply(const JobSync::Report& report);
  // The housekeeping thread, until Stop: applies the history policy at
  // start and every check interval, and after a bulk reload gives freed
  // memory back to the system once the store has the changes.
  void Housekeeping();

  const config::DaemonConfig config_;
  Logger& log_;
  exec::ShellOptions shell_options_;  // set by StartAll
  DaemonHooks hooks_;
  std::shared_ptr<Store> store_;
  // On a shared store: this node's member lease, from the store's open to
  // Stop (standbys are members too).
  std::unique_ptr<Membership> membership_;
  // GET /v1/events and the output of running attempts: fed by the
  // scheduler's on_run_event and the job functions, read by the HTTP
  // handlers, so destroyed after all of them.
  std::unique_ptr<api::EventHub> events_;
  std::unique_ptr<api::LiveOutput> live_output_;
  // Declared in the order they may be destroyed last to first: the
  // scheduler's callbacks use the metrics, JobSync uses the scheduler, the
  // HTTP handlers use all of them.
  std::unique_ptr<DaemonMetrics> metrics_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<JobSync> jobs_;
  std::unique_ptr<JobRegistry> registry_;  // uses jobs_
  std::unique_ptr<JobFollower> follower_;  // on a shared store; uses registry_
  std::unique_ptr<Store::JobWatch> job_watch_;  // hints follower_
  std::unique_ptr<DirWatcher> watcher_;
  std::unique_ptr<api::Authorizer> auth_;  // the HTTP handlers use it
  api::DaemonInfo daemon_info_;            // set by StartAll
  std::unique_ptr<http::HttpServer> http_;
  std::thread housekeeping_;
  std::mutex housekeeping_mu_;
  std::condition_variable housekeeping_cv_;
  bool housekeeping_stop_ = false;  // guarded by housekeeping_mu_
  bool trim_when_written_ = false;  // guarded by housekeeping_mu_
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<int> exit_status_{0};
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_DAEMON_H_
