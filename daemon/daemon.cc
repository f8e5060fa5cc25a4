#include "daemon/daemon.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/forward.h"
#include "daemon/standby_http.h"
#include "daemon/store_open.h"
#include "nlohmann/json.hpp"
#include "src/api/event_hub.h"
#include "src/api/live_output.h"
#include "src/api/routes.h"
#include "src/base/status_macros.h"
#include "src/base/thread_name.h"
#include "src/exec/http_executor.h"
#include "src/exec/job_policy.h"
#include "src/exec/process_ledger.h"
#include "src/exec/shell_executor.h"
#include "src/web/ui_routes.h"

namespace chime::daemon {
namespace {

// How long the jobs directory must be quiet after a change before it is
// reloaded (an editor's save is several events).
constexpr absl::Duration kReloadQuiet = absl::Milliseconds(200);

// The HTTP listener's pool for handlers that may block: those that change
// something wait for the store (a durable write, a scheduler round trip), so
// enough threads that concurrent clients' changes meet in one batch instead
// of queueing for a thread. Quick handlers run on the I/O threads, one per
// core: more would only take turns on the cores.
constexpr int kHttpBlockingThreads = 32;

int HttpIoThreads() {
  return static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

// The embedded store's read connections: one for every thread that may read
// at once -- the listener's (both kinds), and the scheduler's, the
// registry's two and the job files' -- so that no read waits for one.
size_t StoreReaders() { return kHttpBlockingThreads + HttpIoThreads() + 4; }

// After a reload that changed more jobs than this, free memory goes back to
// the system.
constexpr int kManyChanges = 1000;
// How often the scheduling node of a shared store reads the job changes
// other nodes made (at the latest; a notification from the store sooner).
constexpr absl::Duration kFollowPoll = absl::Seconds(1);

// A short fixed word for an executor error (the metric's `kind` label), or
// "" when the error is the target's own answer (an exit status, an HTTP
// status) or a cancel.
absl::string_view ExecutorErrorKind(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kNotFound:
      return "not_found";
    case absl::StatusCode::kPermissionDenied:
      return "permission_denied";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    case absl::StatusCode::kInvalidArgument:
      return "invalid_request";
    case absl::StatusCode::kFailedPrecondition:
      return "failed_precondition";
    default:
      return "";
  }
}

}  // namespace

Daemon::Daemon(const config::DaemonConfig& config, Logger& log)
    : config_(config), log_(log) {}

Daemon::~Daemon() { Stop(); }

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(
    const config::DaemonConfig& config, Logger& log, DaemonHooks hooks) {
  RETURN_IF_ERROR(config::ValidateDaemonConfig(config));
  std::unique_ptr<Daemon> d(new Daemon(config, log));
  d->hooks_ = std::move(hooks);
  if (absl::Status s = d->StartAll(); !s.ok()) {
    d->Stop();
    return s;
  }
  return d;
}

void Daemon::LeaseLost(const absl::Status& why) {
  // Another node may be running these jobs by now: stop at once, taking the
  // attempts' processes along (they could not record their outcomes), and
  // leave the restart to the service manager -- it comes back as a standby.
  log_.Error("lost the store's lease: exiting", {{"error", why.ToString()}});
  (void)exec::KillOrphans(shell_options_.ledger_dir);
  std::fflush(stderr);
  std::_Exit(kExitLeaseLost);
}

void Daemon::ClockSkewed(absl::Duration offset) {
  log_.Error(
      "this node's clock is off from the store's: giving up the store's "
      "lease (running attempts finish within shutdown_grace; then exit 3)",
      {{"clock_offset", absl::FormatDuration(offset)},
       {"max_clock_skew", absl::FormatDuration(config_.max_clock_skew)}});
  exit_status_ = kExitLeaseLost;
  if (hooks_.request_stop) hooks_.request_stop();
}

absl::Status Daemon::RunAttempt(const AttemptContext& ctx) {
  log_.Log(LogLevel::kDebug, "attempt started",
           {{"fire_id", ctx.fire_id()}, {"attempt", int64_t{ctx.attempt}}});
  JobSpec spec = ctx.Spec();
  if (spec.executor.kind == ExecutorSpec::Kind::kFunction) {
    // Job files and the API always name an executor.
    return absl::FailedPreconditionError("the job has no executor");
  }
  // Jobs created through the API run within the api_jobs policy, checked
  // again here so that a policy made stricter holds for older jobs too.
  if (spec.source_file.empty()) {
    if (absl::Status s = exec::CheckJobPolicy(config_.api_jobs, spec);
        !s.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "refused by the daemon's api_jobs policy: ", s.message()));
    }
    exec::ApplyRunAs(config_.api_jobs, &spec.executor.shell);
  }
  const bool shell = spec.executor.kind == ExecutorSpec::Kind::kShell;
  // The attempt's output as it comes, for GET .../runs/{run}/output?follow=
  // true: a command's as it reads it; an HTTP job's response at its end.
  const std::shared_ptr<api::LiveOutput::Attempt> live = live_output_->Begin(
      ctx.run_id, shell ? spec.executor.shell.output_limit
                        : spec.executor.http.response_limit);
  absl::Status s;
  if (shell) {
    exec::ShellOptions options = shell_options_;
    options.on_output = [this, &live](absl::string_view bytes) {
      live_output_->Append(*live, bytes);
    };
    s = exec::RunShell(spec.executor.shell, ctx, options);
  } else {
    s = exec::RunHttp(spec.executor.http, ctx);
  }
  absl::string_view trailer;
  if (!shell && ctx.output != nullptr) trailer = *ctx.output;
  live_output_->End(*live, trailer);
  if (!s.ok() && !ctx.IsCancelled()) {
    if (absl::string_view kind = ExecutorErrorKind(s); !kind.empty())
      metrics_->OnExecutorError(shell ? "shell" : "http", kind);
  }
  return s;
}

absl::Status Daemon::StartAll() {
  const absl::Time started_at = absl::Now();  // GET /v1/status
  std::error_code ec;
  std::filesystem::create_directories(config_.data_dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "data_dir \"", config_.data_dir, "\": cannot create: ", ec.message()));
  }
  shell_options_.ledger_dir =
      (std::filesystem::path(config_.data_dir) / "processes").string();
  ASSIGN_OR_RETURN(int orphans, exec::KillOrphans(shell_options_.ledger_dir));
  if (orphans > 0) {
    log_.Warn("killed processes left by an earlier daemon",
              {{"process_groups", int64_t{orphans}}});
  }
  ASSIGN_OR_RETURN(store_, OpenStore(config_, log_, StoreReaders()));
  const std::string node = NodeName(config_);
  // With shards the scheduler holds this node's member lease itself.
  const bool sharded = SharedStore(config_) && config_.shards > 0;
  if (SharedStore(config_) && !sharded) {
    membership_ = std::make_unique<Membership>(
        *store_, node, absl::StrCat(node, " pid ", getpid()), config_.lease_ttl,
        log_);
    membership_->Start();
  }
  if (::geteuid() == 0) {
    log_.Warn(
        "running as root: every job command runs as root unless its job sets "
        "shell.user; run the daemon as an unprivileged user "
        "(deploy/chime.service)");
  }

  // The scheduler's hooks need the metrics, and the metrics the scheduler's
  // Stats: the metrics read it through this pointer once it exists.
  ASSIGN_OR_RETURN(metrics_,
                   DaemonMetrics::Create(
                       [this]() -> absl::StatusOr<SchedulerStats> {
                         if (scheduler_ == nullptr)
                           return absl::UnavailableError("not started");
                         return scheduler_->Stats();
                       },
                       [this] {
                         return jobs_ == nullptr
                                    ? 0
                                    : static_cast<int>(jobs_->Errors().size());
                       }));
  SchedulerOptions options;
  options.store = store_;
  options.node_name = node;
  if (SharedStore(config_)) {
    options.advertise_url = AdvertiseUrl(config_, node);
    options.lease_ttl = config_.lease_ttl;
    options.on_lease_lost = [this](const absl::Status& why) { LeaseLost(why); };
    options.max_clock_skew = config_.max_clock_skew;
    options.on_clock_skew = [this](absl::Duration d) { ClockSkewed(d); };
    options.shards = config_.shards;
    // A shard handed to a node that joined lets its attempts finish as a
    // stop would.
    options.handoff_grace = config_.shutdown_grace;
  }
  options.worker_threads = config_.max_concurrent_runs;
  options.max_losses = config_.max_losses;
  // GET /v1/events and the followers of output hear of every run event too;
  // neither waits for a client.
  events_ = std::make_unique<api::EventHub>(api::EventHub::Options{});
  live_output_ = std::make_unique<api::LiveOutput>();
  options.on_run_event = [this](const RunEvent& e) {
    log_.LogRunEvent(e);
    metrics_->OnRunEvent(e);
    events_->Publish(e);
    live_output_->OnRunEvent(e);
  };
  options.on_store_write = [this](const StoreWrite& w) {
    metrics_->OnStoreWrite(w);
    if (!w.status.ok()) {
      log_.Warn("store write failed",
                {{"op", std::string(w.op)}, {"error", w.status.ToString()}});
    }
  };
  // What GET /v1/status and /v1/cluster tell of this daemon; the standby's
  // listener serves it too.
  daemon_info_ = {.version = CHIME_VERSION,
                  .started_at = started_at,
                  .node_name = node,
                  .shared_store = SharedStore(config_),
                  .max_clock_skew = config_.max_clock_skew,
                  .clock_offset = [this]() -> std::optional<absl::Duration> {
                    if (membership_ != nullptr)
                      return membership_->clock_offset();
                    // With shards: measured on the scheduler's member
                    // lease.
                    if (scheduler_ == nullptr || !ready_.load())
                      return std::nullopt;
                    absl::StatusOr<SchedulerStats> stats = scheduler_->Stats();
                    if (!stats.ok()) return std::nullopt;
                    return stats->clock_offset;
                  },
                  .job_file_errors =
                      [this] {
                        return jobs_ != nullptr ? jobs_->Errors()
                                                : std::vector<std::string>{};
                      }};
  auth_ = std::make_unique<api::Authorizer>(config_.api_tokens);
  // A standby's job changes go to the store (the scheduling node follows).
  // Declared first: the standby's listener, which uses it, stops before it
  // goes.
  JobRegistry standby_jobs(*store_, config_.api_jobs, log_);
  std::unique_ptr<http::HttpServer> standby_http;
  ASSIGN_OR_RETURN(
      scheduler_,
      CreateScheduler(
          options, config_, log_, hooks_.pause, [&]() -> absl::Status {
            ASSIGN_OR_RETURN(
                standby_http,
                StartStandbyHttp(config_, *store_, *auth_, daemon_info_,
                                 standby_jobs, log_));
            log_.Info("standby serving health, metrics, the API and the UI",
                      {{"port", int64_t{standby_http->port()}}});
            return absl::OkStatus();
          }));
  // The full listener takes the standby's port (the same, unless `listen`
  // said port 0).
  int standby_port = 0;
  if (standby_http != nullptr) {
    standby_port = standby_http->port();
    standby_http->Stop();
  }

  const auto run = std::make_shared<const JobFunction>(
      [this](const AttemptContext& ctx) { return RunAttempt(ctx); });
  const JobSync::MakeFunction make = [run](const JobSpec&) { return run; };
  jobs_ = std::make_unique<JobSync>(*scheduler_, make, log_);
  registry_ = std::make_unique<JobRegistry>(*store_, *scheduler_, *jobs_, make,
                                            config_.api_jobs, log_);
  // The listener before any job runs: a port in use fails the start
  // cleanly. /readyz says "not ready" until the end.
  http::HttpServer::Options http;
  std::string host;
  int port = 0;
  RETURN_IF_ERROR(config::SplitHostPort(config_.listen, &host, &port));
  http.address = host;
  http.port = static_cast<uint16_t>(standby_port != 0 ? standby_port : port);
  http.threads = HttpIoThreads();
  http.blocking_threads = kHttpBlockingThreads;
  http.tls_cert_file = config_.tls_cert;
  http.tls_key_file = config_.tls_key;
  // Health probes are answered on the I/O threads: never behind handlers
  // that wait.
  http.router.Handle("GET", "/healthz",
                     [](const http::Request&) {
                       return http::Response{.status = 200, .body = "ok\n"};
                     },
                     {.run_inline = http::AlwaysInline});
  http.router.Handle("GET", "/readyz",
                     [this](const http::Request&) { return Ready(); },
                     {.run_inline = http::AlwaysInline});
  http.router.Handle("GET", "/metrics", [this](const http::Request&) {
    return http::Response{.status = 200,
                          .content_type = std::string(metrics::kContentType),
                          .body = metrics_->Render()};
  });
  // The web UI at / (static; it calls the API with the user's token).
  web::RegisterUi(http.router);
  api::AddRoutes(http.router,
                 {.store = store_.get(),
                  .scheduler = scheduler_.get(),
                  .auth = auth_.get(),
                  .jobs = registry_.get(),
                  .on_change = LogApiChanges(log_),
                  .daemon = daemon_info_,
                  .events = events_.get(),
                  .live_output = live_output_.get(),
                  .forward_to_shard =
                      sharded ? ForwardToShardHolder(*store_, node) : nullptr});
  ASSIGN_OR_RETURN(http_, http::HttpServer::Start(std::move(http)));
  ASSIGN_OR_RETURN(JobSync::Report report, registry_->Start(LoadJobFiles()));
  AfterApply(report);
  RETURN_IF_ERROR(scheduler_->Start());
  registry_->AcceptChanges();
  // Other nodes' API changes jobs in the shared store (docs/cluster.md).
  if (SharedStore(config_)) {
    follower_ = std::make_unique<JobFollower>(*registry_, log_, kFollowPoll);
    job_watch_ = store_->WatchJobs([f = follower_.get()] { f->Hint(); });
  }
  housekeeping_ =
      base::NamedThread("chime-housekeep", [this] { Housekeeping(); });
  absl::StatusOr<std::unique_ptr<DirWatcher>> watcher = DirWatcher::Start(
      config_.jobs_dir, kReloadQuiet, [this](bool still_watching) {
        if (still_watching) {
          Reload();
        } else {
          log_.Warn("jobs directory gone; not watching it (SIGHUP reloads)",
                    {{"jobs_dir", config_.jobs_dir}});
        }
      });
  if (watcher.ok()) {
    watcher_ = *std::move(watcher);
  } else {
    log_.Warn("not watching the jobs directory (SIGHUP reloads)",
              {{"jobs_dir", config_.jobs_dir},
               {"error", watcher.status().ToString()}});
  }

  ready_ = true;
  // An IPv6 address is bracketed, as in a URL and in `listen` ("[::1]:8712").
  const std::string host_port = absl::StrCat(
      host.find(':') != std::string::npos ? "[" : "", host,
      host.find(':') != std::string::npos ? "]" : "", ":", http_->port());
  log_.Info(
      "chime serving",
      {{"listen", host_port},
       {"ui", absl::StrCat(config_.tls_cert.empty() ? "http" : "https", "://",
                           host_port, "/")},
       {"metrics", absl::StrCat(config_.tls_cert.empty() ? "http" : "https",
                                "://", host_port, "/metrics")},
       {"jobs_dir", config_.jobs_dir},
       {"data_dir", config_.data_dir}});
  return absl::OkStatus();
}

std::vector<config::FileResult> Daemon::LoadJobFiles() {
  absl::StatusOr<std::vector<config::FileResult>> files =
      config::LoadJobDir(config_.jobs_dir);
  if (files.ok()) return *std::move(files);
  // No directory: no job files (every job loaded from it before goes).
  log_.Warn("jobs directory not read", {{"jobs_dir", config_.jobs_dir},
                                        {"error", files.status().ToString()}});
  return {};
}

JobSync::Report Daemon::Reload() {
  JobSync::Report report = registry_->ApplyFiles(LoadJobFiles());
  AfterApply(report);
  return report;
}

void Daemon::AfterApply(const JobSync::Report& report) {
  if (report.added + report.changed + report.removed > kManyChanges) {
    // A bulk load leaves the parse trees' memory free but held by malloc;
    // give it back -- now, and again once the store has the changes (the
    // writes unpack every spec on the writer thread).
    malloc_trim(0);
    {
      std::lock_guard<std::mutex> lock(housekeeping_mu_);
      trim_when_written_ = true;
    }
    housekeeping_cv_.notify_all();
  }
}

http::Response Daemon::Ready() const {
  nlohmann::ordered_json j;
  const bool ready = ready_.load() && !stopped_.load();
  j["ready"] = ready;
  j["store"] = scheduler_ != nullptr ? "open" : "closed";
  j["scheduler"] = ready ? "running" : "stopped";
  j["jobs"] = jobs_ != nullptr ? jobs_->NumJobs() : 0;
  j["job_file_errors"] =
      jobs_ != nullptr ? jobs_->Errors() : std::vector<std::string>{};
  return http::Response{.status = ready ? 200 : 503,
                        .content_type = "application/json",
                        .body = j.dump() + "\n"};
}

void Daemon::Housekeeping() {
  const RetentionPolicy policy{.keep_per_job = config_.history_keep_per_job,
                               .max_age = config_.history_max_age};
  const auto interval =
      absl::ToChronoNanoseconds(config_.history_check_interval);
  auto next_prune = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(housekeeping_mu_);
  while (!housekeeping_stop_) {
    if (trim_when_written_) {
      trim_when_written_ = false;
      lock.unlock();
      // Stats returns once every write queued before it is durable.
      (void)scheduler_->Stats();
      malloc_trim(0);
      lock.lock();
      continue;
    }
    if (std::chrono::steady_clock::now() >= next_prune) {
      lock.unlock();
      absl::StatusOr<RetentionResult> r =
          store_->ApplyRetention(policy, absl::Now(), MonoTime::Infinite());
      if (!r.ok()) {
        log_.Warn("history not pruned", {{"error", r.status().ToString()}});
      } else if (r->runs_deleted + r->missed_deleted > 0) {
        log_.Info("history pruned", {{"runs", r->runs_deleted},
                                     {"missed_records", r->missed_deleted}});
        metrics_->OnHistoryPruned(r->runs_deleted, r->missed_deleted);
      }
      next_prune = std::chrono::steady_clock::now() + interval;
      lock.lock();
    }
    housekeeping_cv_.wait_until(lock, next_prune, [this] {
      return housekeeping_stop_ || trim_when_written_;
    });
  }
}

void Daemon::Stop() {
  if (stopped_.exchange(true)) return;
  if (housekeeping_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(housekeeping_mu_);
      housekeeping_stop_ = true;
    }
    housekeeping_cv_.notify_all();
    housekeeping_.join();
  }
  log_.Info("stopping",
            {{"grace", absl::FormatDuration(config_.shutdown_grace)}});
  if (watcher_ != nullptr) watcher_->Stop();
  job_watch_.reset();  // before the follower it hints
  if (follower_ != nullptr) follower_->Stop();
  if (scheduler_ != nullptr) scheduler_->Shutdown(config_.shutdown_grace);
  if (http_ != nullptr) http_->Stop();
  if (membership_ != nullptr) membership_->Stop();  // leaves the cluster
  log_.Info("stopped");
}

int Daemon::port() const { return http_ != nullptr ? http_->port() : 0; }

}  // namespace chime::daemon
