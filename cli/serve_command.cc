#include "cli/serve_command.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "daemon/daemon.h"
#include "daemon/logger.h"
#include "src/config/daemon_config.h"

namespace chime::cli {
namespace {

struct ServeFlags {
  std::optional<std::string> config_file;
  // Settings given as flags, by name ("shutdown_grace" -> "30s"); read by
  // config::ApplyFlags like the file's values.
  std::map<std::string, std::string> settings;
};

// The configuration from every layer; InvalidArgument names the bad setting.
absl::StatusOr<config::DaemonConfig> Resolve(const ServeFlags& flags) {
  config::DaemonConfig c;
  std::string path;
  bool required = true;
  if (flags.config_file.has_value()) {
    path = *flags.config_file;
  } else if (const char* env = std::getenv("CHIME_CONFIG")) {
    path = env;
  } else {
    path = "chime.yaml";
    required = false;
  }
  std::ifstream in(path);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    if (absl::Status s = config::ApplyConfigFile(path, text.str(), &c); !s.ok())
      return s;
  } else if (required) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file \"", path, "\" cannot be read"));
  }
  if (absl::Status s = config::ApplyEnvironment(
          [](const char* name) { return std::getenv(name); }, &c);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = config::ApplyFlags(flags.settings, &c); !s.ok())
    return s;
  if (absl::Status s = config::ValidateDaemonConfig(c); !s.ok()) return s;
  return c;
}

daemon::LogLevel LevelOf(const std::string& name) {
  if (name == "debug") return daemon::LogLevel::kDebug;
  if (name == "warn") return daemon::LogLevel::kWarn;
  if (name == "error") return daemon::LogLevel::kError;
  return daemon::LogLevel::kInfo;
}

// SIGHUP: the configuration is read again. The log level applies at once;
// the other settings are what the daemon was built with (the store, the
// listener, the workers), so a change to them is logged as waiting for a
// restart. A configuration that no longer loads is logged and ignored.
void Reconfigure(const ServeFlags& flags, const config::DaemonConfig& running,
                 daemon::Logger& log) {
  absl::StatusOr<config::DaemonConfig> next = Resolve(flags);
  if (!next.ok()) {
    log.Error("configuration not reloaded",
              {{"error", std::string(next.status().message())}});
    return;
  }
  log.SetLevel(LevelOf(next->log_level));
  config::DaemonConfig rest = *next;
  rest.log_level = running.log_level;
  if (!(rest == running)) {
    log.Warn(
        "configuration changed; settings other than log_level apply at "
        "the next start");
  }
}

// glibc raises its mmap threshold each time a large block is freed, so that
// later large blocks (a bulk load's batches and vectors) come from the heap,
// where the small long-lived records allocated among them (a job's record,
// its schedule, its packed spec) keep the pages after they are freed: ~30%
// of a daemon's memory after loading 100,000 jobs was such holes
// (bench/RESULTS.md, "Memory per idle job"). A fixed threshold (which turns
// the raising off) gives blocks of 128 KiB and more their own mapping,
// returned whole when freed.
//
// Fixing it also fixes the trim threshold at its 128 KiB default: glibc then
// gave back the top of a thread's heap after nearly every API request --
// madvise, a TLB shootdown on every core, and a page fault per page when the
// next request took the memory again (~7 us each on a VM). Keeping up to
// 64 MiB free per heap: 25-35% more run listings per second, the same bytes
// per idle job (bench/RESULTS.md, 2026-12-01).
void SetAllocatorForALongRunningProcess() {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

int Serve(const ServeFlags& flags, const Io& io) {
  SetAllocatorForALongRunningProcess();
  absl::StatusOr<config::DaemonConfig> c = Resolve(flags);
  if (!c.ok()) {
    io.err << "chime serve: " << c.status().message() << "\n";
    return kExitUsage;
  }
  const bool text = c->log_format == "text" ||
                    (c->log_format == "auto" && isatty(STDERR_FILENO));
  daemon::Logger log(stderr,
                     text ? daemon::LogFormat::kText : daemon::LogFormat::kJson,
                     LevelOf(c->log_level), RealClock::Get());
  // Every thread the daemon starts inherits this mask, so the signals reach
  // only the sigwait below (children get a clean mask from the executor).
  // SIGPIPE stays blocked: a peer that went away is an EPIPE, not a death.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A standby (daemon/store_open.h) waits here for the shared store's lease;
  // SIGTERM or SIGINT meanwhile stops it.
  bool stopped_waiting = false;
  const auto pause = [&stopped_waiting](absl::Duration d) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    const timespec wait = absl::ToTimespec(d);
    if (sigtimedwait(&stop, nullptr, &wait) > 0) stopped_waiting = true;
    return !stopped_waiting;
  };
  daemon::DaemonHooks hooks;
  hooks.pause = pause;
  // The daemon gives up a shared store's lease (its clock is off): stop as
  // on SIGTERM, then exit with its status.
  hooks.request_stop = [] { kill(getpid(), SIGTERM); };
  absl::StatusOr<std::unique_ptr<daemon::Daemon>> d =
      daemon::Daemon::Start(*c, log, std::move(hooks));
  if (!d.ok() && stopped_waiting) {
    log.Info("signal received while waiting as a standby; exiting");
    return kExitOk;
  }
  if (!d.ok()) {
    log.Error("chime serve could not start",
              {{"error", d.status().ToString()}});
    return kExitFailure;
  }
  sigset_t wait_for;
  sigemptyset(&wait_for);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&wait_for, sig);
  for (;;) {
    int sig = 0;
    if (sigwait(&wait_for, &sig) != 0) continue;
    if (sig == SIGHUP) {
      log.Info("SIGHUP: reloading the configuration and the job files");
      Reconfigure(flags, *c, log);
      (*d)->Reload();
      continue;
    }
    if (const int status = (*d)->exit_status(); status != kExitOk) {
      log.Info("giving up the store's lease; shutting down",
               {{"exit_status", int64_t{status}}});
      (*d)->Stop();
      return status;
    }
    log.Info("signal received; shutting down",
             {{"signal", std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT")}});
    (*d)->Stop();
    return kExitOk;
  }
}

}  // namespace

void AddServeCommand(CLI::App& app, const Io& io, int* status) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Run the scheduler daemon: jobs from YAML files (hot-reloaded), an "
      "embedded SQLite store (or a PostgreSQL one shared with other daemons: "
      "--store), the REST API and web UI, /metrics, /healthz and /readyz "
      "over HTTP. "
      "SIGTERM/SIGINT stop it gracefully; SIGHUP reloads the configuration and "
      "the job files.");
  serve->add_option("--config", flags->config_file,
                    "config file (default: $CHIME_CONFIG, else ./chime.yaml "
                    "when present)");
  // --data-dir sets data_dir, and so on.
  const auto setting = [&](const std::string& key, const std::string& help) {
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    serve->add_option_function<std::string>(
        flag, [flags, key](const std::string& v) { flags->settings[key] = v; },
        help);
  };
  setting("data_dir", "where the store lives (default ./chime-data)");
  setting("store",
          "a PostgreSQL URL (postgresql://...) to share with other daemons; "
          "default: SQLite in the data directory");
  setting("node_name",
          "on a shared store, this node's name among the others (default: "
          "the host's name)");
  setting("advertise_url",
          "on a shared store, the URL other nodes reach this one's API at "
          "(default: from --listen)");
  setting("max_clock_skew",
          "on a shared store, how far this node's clock may be from the "
          "database's before it stops scheduling (default 1s)");
  setting("shards",
          "on a shared store, divide the jobs into this many shards so that "
          "every node schedules some (default 64; 0: one node schedules, "
          "the others stand by)");
  setting("lease_ttl",
          "on a shared store, how long the scheduler's lease outlives its "
          "last renewal (default 5s)");
  setting("jobs_dir", "directory of job files, *.yaml (default ./jobs)");
  setting("listen",
          "HTTP address, host:port (default 127.0.0.1:8712; port 0 picks a "
          "free one, logged at start)");
  setting("max_concurrent_runs", "attempts running at once (default 32)");
  setting("max_losses",
          "an at-least-once run lost this many times (the daemon stopped while "
          "it ran) ends failed instead of starting again (default 3; 0: no "
          "limit)");
  setting("shutdown_grace",
          "on SIGTERM, how long running attempts may finish before they are "
          "cancelled (default 30s)");
  setting("history_keep_per_job",
          "finished runs kept per job (default 1000; 0 keeps all)");
  setting("history_max_age",
          "finished runs older than this are deleted (default 7d)");
  setting("log_format",
          "auto (text on a terminal, else JSON lines), json, text");
  setting("log_level", "debug, info, warn, error (default info)");
  setting("tls_cert", "PEM certificate (chain) for HTTPS (with --tls-key)");
  setting("tls_key", "PEM private key for HTTPS (with --tls-cert)");
  serve->callback([flags, &io, status] { *status = Serve(*flags, io); });
}

}  // namespace chime::cli
