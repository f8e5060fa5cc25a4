// The daemon's configuration: `chime.yaml`, overridden by CHIME_*
// environment variables, overridden by command-line flags (the CLI applies
// those last). With none of them the defaults below make a working daemon:
// data in ./chime-data, HTTP on 127.0.0.1:8712, jobs from ./jobs.
//
//   # chime.yaml (every key optional)
//   data_dir: /var/lib/chime          # CHIME_DATA_DIR
//   store: postgresql://chime@db/chime  # CHIME_STORE (default: SQLite in
//                                     # data_dir)
//   lease_ttl: 5s                     # CHIME_LEASE_TTL (shared store only)
//   max_clock_skew: 1s                # CHIME_MAX_CLOCK_SKEW (shared store
//                                     # only)
//   shards: 64                        # CHIME_SHARDS (shared store only;
//                                     # default 64; 0: one node schedules,
//                                     # the others stand by)
//   node_name: node-1                 # CHIME_NODE_NAME (shared store only;
//                                     # default: the host's name)
//   advertise_url: http://10.0.0.5:8712  # CHIME_ADVERTISE_URL (shared store
//                                     # only; default from `listen`)
//   jobs_dir: /etc/chime/jobs         # CHIME_JOBS_DIR
//   listen: 127.0.0.1:8712            # CHIME_LISTEN (port 0: any free port)
//   max_concurrent_runs: 32           # CHIME_MAX_CONCURRENT_RUNS
//   max_losses: 3                     # CHIME_MAX_LOSSES (0: no limit)
//   shutdown_grace: 30s               # CHIME_SHUTDOWN_GRACE
//   history_keep_per_job: 1000        # CHIME_HISTORY_KEEP_PER_JOB (0: all)
//   history_max_age: 7d               # CHIME_HISTORY_MAX_AGE
//   history_check_interval: 10m       # CHIME_HISTORY_CHECK_INTERVAL
//   log_format: auto                  # CHIME_LOG_FORMAT: auto|json|text
//   log_level: info                   # CHIME_LOG_LEVEL: debug|info|warn|error
//   tls:                              # HTTPS instead of HTTP: both or neither
//     cert: /etc/chime/tls.crt        # CHIME_TLS_CERT: PEM certificate chain
//     key: /etc/chime/tls.key         # CHIME_TLS_KEY: its PEM private key
//   api_tokens:                       # (file only) bearer tokens of the API
//     - name: ci                      # who; logged with every change
//       role: write                   # read | write | admin
//       token_file: /etc/chime/ci.token   # or token: "<at least 16 chars>"
//   api_jobs:                         # (file only) what jobs created through
//     allowed_commands: [/usr/local/bin/*]  # the API may do: programs,
//     allowed_http_hosts: [api.internal]    # hosts, and the user their
//     run_as: chime-jobs                    # commands run as
//     (exec/job_policy.h)
//
// Without api_tokens the API needs no token, and `listen` must be a loopback
// address (127.0.0.0/8, ::1, localhost): an open API on the network would let
// anyone run commands. TLS does not change that: it hides the traffic, not
// who may send it.
//
// The TLS files are read when the daemon starts (http::HttpServer), not
// here. Relative paths (directories, token_file, the TLS files) are relative
// to the daemon's working directory.
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_CONFIG_DAEMON_CONFIG_H_
#define CHIME_SRC_CONFIG_DAEMON_CONFIG_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/exec/job_policy.h"

namespace chime::config {

// A bearer token of the REST API (docs/api.md).
struct ApiToken {
  enum class Role { kRead, kWrite, kAdmin };
  std::string name;
  Role role = Role::kRead;
  std::string token;  // the secret itself (read from token_file if given)

  friend bool operator==(const ApiToken&, const ApiToken&) = default;
};

// Whether `store` names a PostgreSQL database (postgresql:// or postgres://).
bool IsPostgresUrl(absl::string_view store);

inline constexpr uint32_t kMaxShards = 4096;
inline constexpr uint32_t kDefaultShards = 64;

struct DaemonConfig {
  std::string data_dir = "chime-data";
  // Empty: the embedded SQLite store in data_dir. A PostgreSQL URL: that
  // database, which several daemons may share (one schedules at a time, the
  // others wait for its lease; docs/cluster.md).
  std::string store;
  // On a shared store: the scheduler's lease lasts this long after its last
  // renewal (every third of it); a node that dies is replaced after about
  // this long.
  absl::Duration lease_ttl = absl::Seconds(5);
  // On a shared store: a node whose wall clock is off from the database's by
  // more than this does not schedule (SchedulerOptions::max_clock_skew).
  absl::Duration max_clock_skew = absl::Seconds(1);
  // On a shared store: > 0 divides the jobs into this many shards, each
  // scheduled by one node at a time, so that every node schedules at once
  // (docs/cluster.md, "Shards"); every node of a store must say the same.
  // 0: one node schedules every job, the others stand by. Without a shared
  // store the default does not apply (one daemon schedules everything); a
  // value given there (shards_given) is an error.
  uint32_t shards = kDefaultShards;
  bool shards_given = false;
  // On a shared store: this daemon's name among the nodes (its member lease
  // "member/<node_name>", the scheduler lease's holder). Unique per live
  // daemon; empty: the host's name.
  std::string node_name;
  // On a shared store: the URL other nodes reach this one's API at
  // ("http://10.0.0.5:8712"); a standby forwards triggers, cancels and
  // retries to the scheduling node's. Empty: from `listen` (its host, or
  // node_name when it listens on every address; not advertised with port
  // 0).
  std::string advertise_url;
  std::string jobs_dir = "jobs";
  std::string listen = "127.0.0.1:8712";
  int max_concurrent_runs = 32;
  // An at-least-once run lost this many times (the daemon stopped while it
  // ran) ends failed instead of starting again (SchedulerOptions::max_losses).
  int max_losses = 3;
  absl::Duration shutdown_grace = absl::Seconds(30);
  // Run history retention, applied at start and every check interval:
  // finished runs beyond the newest `keep_per_job` of a job, and finished
  // runs and missed records older than `max_age`, are deleted.
  int64_t history_keep_per_job = 1000;
  absl::Duration history_max_age = absl::Hours(7 * 24);
  absl::Duration history_check_interval = absl::Minutes(10);
  std::string log_format = "auto";  // auto: text on a terminal, else json
  std::string log_level = "info";
  std::vector<ApiToken> api_tokens;
  // Limits on jobs created through the API (file jobs are the operator's).
  exec::JobPolicy api_jobs;
  // HTTPS: the PEM files of http::HttpServer::Options. Both empty: HTTP.
  std::string tls_cert;
  std::string tls_key;

  friend bool operator==(const DaemonConfig&, const DaemonConfig&) = default;
};

// Applies the keys of a chime.yaml's `text` to `config`. InvalidArgument
// "<path>:<line>:<column>: <key>: <message>" (unknown keys included) leaves
// `config` unchanged.
absl::Status ApplyConfigFile(absl::string_view path, absl::string_view text,
                             DaemonConfig* config);

// Applies the CHIME_* variables that `getenv` returns non-null for.
// InvalidArgument "CHIME_LISTEN: <message>" leaves `config` unchanged.
absl::Status ApplyEnvironment(
    const std::function<const char*(const char*)>& getenv,
    DaemonConfig* config);

// Applies command-line flags, by setting name ("shutdown_grace" -> text),
// read as the file's values are ("1m30s", "7d"). InvalidArgument
// "--shutdown-grace: <message>" leaves `config` unchanged.
absl::Status ApplyFlags(const std::map<std::string, std::string>& flags,
                        DaemonConfig* config);

// Checks the values (also after flags): InvalidArgument naming the key.
// Reads the user database for api_jobs.run_as.
absl::Status ValidateDaemonConfig(const DaemonConfig& config);

// 127.0.0.0/8, ::1 or "localhost" (SplitHostPort's host, brackets removed).
bool IsLoopback(absl::string_view host);

// "host:port" -> host and port. IPv6 hosts in brackets ("[::1]:8712").
absl::Status SplitHostPort(absl::string_view listen, std::string* host,
                           int* port);

}  // namespace chime::config

#endif  // CHIME_SRC_CONFIG_DAEMON_CONFIG_H_
