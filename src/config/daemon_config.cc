#include "src/config/daemon_config.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/base/status_macros.h"
#include "src/config/api_config.h"
#include "src/config/job_file.h"
#include "src/config/yaml_fields.h"
#include "src/config/yaml_tree.h"

namespace chime::config {
namespace {

using internal::Value;

constexpr absl::string_view kFormats[] = {"auto", "json", "text"};
constexpr absl::string_view kLevels[] = {"debug", "info", "warn", "error"};

// A file's path: a non-empty string.
absl::StatusOr<std::string> ReadPath(const Value& v) {
  ASSIGN_OR_RETURN(std::string path, internal::ReadString(v));
  if (path.empty()) return internal::ErrorAt(v, "must not be empty");
  return path;
}

// tls: {cert, key}.
absl::Status ReadTls(const Value& v, DaemonConfig* c) {
  constexpr absl::string_view kFields[] = {"cert", "key"};
  ASSIGN_OR_RETURN(internal::Mapping m,
                   internal::Mapping::Read(
                       v, "a mapping of cert and key (PEM files)", kFields));
  if (std::optional<Value> cert = m.Get("cert")) {
    ASSIGN_OR_RETURN(c->tls_cert, ReadPath(*cert));
  }
  if (std::optional<Value> key = m.Get("key")) {
    ASSIGN_OR_RETURN(c->tls_key, ReadPath(*key));
  }
  return absl::OkStatus();
}

// One configuration key: its name in chime.yaml (and as a flag), its
// environment variable, and how a value is read into a DaemonConfig.
struct Key {
  absl::string_view name;
  const char* env;
  absl::Status (*read)(const Value&, DaemonConfig*);
  // false: a variable and flag only, which the file writes inside another
  // key (tls_cert is the file's tls.cert).
  bool in_file = true;
};

const Key kKeys[] = {
    {"data_dir", "CHIME_DATA_DIR",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->data_dir, internal::ReadString(v));
       return absl::OkStatus();
     }},
    {"store", "CHIME_STORE",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->store, internal::ReadString(v));
       return absl::OkStatus();
     }},
    {"lease_ttl", "CHIME_LEASE_TTL",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->lease_ttl, internal::ReadDuration(v));
       return absl::OkStatus();
     }},
    {"node_name", "CHIME_NODE_NAME",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->node_name, internal::ReadString(v));
       return absl::OkStatus();
     }},
    {"advertise_url", "CHIME_ADVERTISE_URL",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->advertise_url, internal::ReadString(v));
       return absl::OkStatus();
     }},
    {"max_clock_skew", "CHIME_MAX_CLOCK_SKEW",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->max_clock_skew, internal::ReadDuration(v));
       return absl::OkStatus();
     }},
    {"jobs_dir", "CHIME_JOBS_DIR",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->jobs_dir, internal::ReadString(v));
       return absl::OkStatus();
     }},
    {"listen", "CHIME_LISTEN",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->listen, internal::ReadString(v));
       std::string host;
       int port = 0;
       if (absl::Status s = SplitHostPort(c->listen, &host, &port); !s.ok())
         return internal::ErrorAt(v, s.message());
       return absl::OkStatus();
     }},
    {"shards", "CHIME_SHARDS",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(int64_t n, internal::ReadInt(v, 0, kMaxShards));
       c->shards = static_cast<uint32_t>(n);
       c->shards_given = true;
       return absl::OkStatus();
     }},
    {"max_concurrent_runs", "CHIME_MAX_CONCURRENT_RUNS",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(int64_t n, internal::ReadInt(v, 1, 4096));
       c->max_concurrent_runs = static_cast<int>(n);
       return absl::OkStatus();
     }},
    {"max_losses", "CHIME_MAX_LOSSES",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(int64_t n, internal::ReadInt(v, 0, 1000000));
       c->max_losses = static_cast<int>(n);
       return absl::OkStatus();
     }},
    {"shutdown_grace", "CHIME_SHUTDOWN_GRACE",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->shutdown_grace, internal::ReadDuration(v));
       return absl::OkStatus();
     }},
    {"history_keep_per_job", "CHIME_HISTORY_KEEP_PER_JOB",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->history_keep_per_job,
                        internal::ReadInt(v, 0, int64_t{1} << 40));
       return absl::OkStatus();
     }},
    {"history_max_age", "CHIME_HISTORY_MAX_AGE",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->history_max_age,
                        internal::ReadDuration(v, /*allow_unlimited=*/true));
       return absl::OkStatus();
     }},
    {"history_check_interval", "CHIME_HISTORY_CHECK_INTERVAL",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->history_check_interval, internal::ReadDuration(v));
       return absl::OkStatus();
     }},
    {"log_format", "CHIME_LOG_FORMAT",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(size_t i, internal::ReadChoice(v, kFormats));
       c->log_format = std::string(kFormats[i]);
       return absl::OkStatus();
     }},
    {"log_level", "CHIME_LOG_LEVEL",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(size_t i, internal::ReadChoice(v, kLevels));
       c->log_level = std::string(kLevels[i]);
       return absl::OkStatus();
     }},
    // Secrets stay out of the environment and the command line.
    {"api_tokens", nullptr,
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->api_tokens, internal::ReadApiTokens(v));
       return absl::OkStatus();
     }},
    {"api_jobs", nullptr,
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->api_jobs, internal::ReadApiJobs(v));
       return absl::OkStatus();
     }},
    {"tls", nullptr, &ReadTls},
    {"tls_cert", "CHIME_TLS_CERT",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->tls_cert, ReadPath(v));
       return absl::OkStatus();
     },
     /*in_file=*/false},
    {"tls_key", "CHIME_TLS_KEY",
     [](const Value& v, DaemonConfig* c) -> absl::Status {
       ASSIGN_OR_RETURN(c->tls_key, ReadPath(v));
       return absl::OkStatus();
     },
     /*in_file=*/false},
};

std::vector<absl::string_view> KeyNames() {
  std::vector<absl::string_view> names;
  for (const Key& k : kKeys) {
    if (k.in_file) names.push_back(k.name);
  }
  return names;
}

}  // namespace

absl::Status ApplyConfigFile(absl::string_view path, absl::string_view text,
                             DaemonConfig* config) {
  const auto in_file = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", s.message()));
  };
  absl::StatusOr<internal::YamlStream> yaml = internal::ParseYaml(text);
  if (!yaml.ok()) return in_file(yaml.status());
  // Only the first document counts; an empty file has none.
  if (yaml->documents().empty() || yaml->documents()[0]->IsNull()) {
    return absl::OkStatus();
  }
  const std::vector<absl::string_view> names = KeyNames();
  absl::StatusOr<internal::Mapping> top =
      internal::Mapping::Read(internal::RootValue(*yaml->documents()[0]),
                              "a mapping of settings", names);
  if (!top.ok()) return in_file(top.status());
  DaemonConfig next = *config;
  for (const Key& key : kKeys) {
    if (!key.in_file) continue;
    std::optional<Value> v = top->Get(key.name);
    if (!v.has_value()) continue;
    if (absl::Status s = key.read(*v, &next); !s.ok()) return in_file(s);
  }
  *config = std::move(next);
  return absl::OkStatus();
}

namespace {

// Applies the settings `lookup` has a text for, each read as a YAML scalar
// (so it means what it would in the file); a message names the setting as
// `name` spells it instead of a position.
absl::Status ApplyTexts(const std::function<const char*(const Key&)>& lookup,
                        const std::function<std::string(const Key&)>& name,
                        DaemonConfig* config) {
  DaemonConfig next = *config;
  for (const Key& key : kKeys) {
    const char* text = lookup(key);
    if (text == nullptr) continue;
    const internal::Node scalar = internal::Node::Scalar(text);
    const Value v{.node = &scalar, .path = ""};
    if (absl::Status s = key.read(v, &next); !s.ok()) {
      absl::string_view msg = s.message();
      // ErrorAt's "<line>:<column>: " says nothing about a variable or flag.
      if (const size_t colon = msg.find(": "); colon != msg.npos)
        msg.remove_prefix(colon + 2);
      return absl::InvalidArgumentError(absl::StrCat(name(key), ": ", msg));
    }
  }
  *config = std::move(next);
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyEnvironment(
    const std::function<const char*(const char*)>& getenv,
    DaemonConfig* config) {
  return ApplyTexts(
      [&](const Key& key) -> const char* {
        return key.env == nullptr ? nullptr : getenv(key.env);
      },
      [](const Key& key) { return std::string(key.env); }, config);
}

absl::Status ApplyFlags(const std::map<std::string, std::string>& flags,
                        DaemonConfig* config) {
  for (const auto& [key, text] : flags) {
    if (std::none_of(std::begin(kKeys), std::end(kKeys),
                     [&key = key](const Key& k) {
                       return k.name == key && k.env != nullptr;
                     })) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", key, ": not a setting"));
    }
  }
  return ApplyTexts(
      [&](const Key& key) -> const char* {
        auto it = flags.find(std::string(key.name));
        return it == flags.end() ? nullptr : it->second.c_str();
      },
      [](const Key& key) {
        std::string flag = absl::StrCat("--", key.name);
        std::replace(flag.begin(), flag.end(), '_', '-');
        return flag;
      },
      config);
}

absl::Status ValidateDaemonConfig(const DaemonConfig& c) {
  const auto bad = [](absl::string_view key, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": ", what));
  };
  if (c.data_dir.empty()) return bad("data_dir", "must not be empty");
  if (c.jobs_dir.empty()) return bad("jobs_dir", "must not be empty");
  if (!c.store.empty() && !IsPostgresUrl(c.store)) {
    return bad("store",
               "must be empty (SQLite in data_dir) or a PostgreSQL "
               "URL, postgresql://... or postgres://...");
  }
  if (c.lease_ttl < absl::Seconds(1) || c.lease_ttl > absl::Minutes(10))
    return bad("lease_ttl", absl::StrCat(absl::FormatDuration(c.lease_ttl),
                                         " is outside 1s..10m"));
  if (c.node_name.size() > 64 ||
      !std::all_of(c.node_name.begin(), c.node_name.end(), [](char ch) {
        return absl::ascii_isalnum(static_cast<unsigned char>(ch)) ||
               ch == '.' || ch == '_' || ch == '-';
      })) {
    return bad("node_name",
               absl::StrCat("\"", c.node_name,
                            "\" is not a name of at most 64 letters, digits, "
                            "'.', '_' and '-'"));
  }
  if (!c.advertise_url.empty() &&
      ((!absl::StartsWith(c.advertise_url, "http://") &&
        !absl::StartsWith(c.advertise_url, "https://")) ||
       absl::StrContains(c.advertise_url, ' '))) {
    return bad("advertise_url",
               absl::StrCat("\"", c.advertise_url,
                            "\" is not an http:// or https:// URL"));
  }
  if (c.max_clock_skew < absl::Milliseconds(10) ||
      c.max_clock_skew > absl::Hours(1)) {
    return bad("max_clock_skew",
               absl::StrCat(absl::FormatDuration(c.max_clock_skew),
                            " is outside 10ms..1h"));
  }
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(c.listen, &host, &port); !s.ok())
    return bad("listen", s.message());
  // With or without TLS: TLS hides the traffic, not who may send it.
  if (c.api_tokens.empty() && !IsLoopback(host)) {
    return bad("listen",
               absl::StrCat(c.listen,
                            " is not a loopback address, and no api_tokens "
                            "are configured: the API would let anyone on the "
                            "network run commands (configure api_tokens, or "
                            "listen on 127.0.0.1)"));
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return bad("tls",
               absl::StrCat(c.tls_cert.empty() ? "key" : "cert", " is set but ",
                            c.tls_cert.empty() ? "cert" : "key",
                            " is not (give both for HTTPS, neither for "
                            "HTTP)"));
  }
  if (absl::Status s = exec::ValidateJobPolicy(c.api_jobs); !s.ok()) return s;
  if (c.shards > kMaxShards)
    return bad("shards", absl::StrCat(c.shards, " is outside 0..", kMaxShards));
  if (c.shards_given && c.shards > 0 && c.store.empty()) {
    return bad("shards",
               "needs a shared store (a PostgreSQL URL in `store`): one daemon "
               "on its own store schedules every job");
  }
  if (c.max_concurrent_runs < 1 || c.max_concurrent_runs > 4096)
    return bad("max_concurrent_runs",
               absl::StrCat(c.max_concurrent_runs, " is outside 1..4096"));
  if (c.max_losses < 0 || c.max_losses > 1000000)
    return bad("max_losses",
               absl::StrCat(c.max_losses, " is outside 0..1000000"));
  if (c.shutdown_grace < absl::ZeroDuration())
    return bad("shutdown_grace", "must not be negative");
  if (c.history_keep_per_job < 0)
    return bad("history_keep_per_job", "must not be negative");
  if (c.history_max_age <= absl::ZeroDuration())
    return bad("history_max_age", "must be positive (or unlimited)");
  if (c.history_check_interval < absl::Seconds(1))
    return bad("history_check_interval", "must be at least 1s");
  const auto one_of = [](absl::string_view v, auto& names) {
    for (absl::string_view n : names)
      if (n == v) return true;
    return false;
  };
  if (!one_of(c.log_format, kFormats))
    return bad("log_format", absl::StrCat("\"", c.log_format,
                                          "\" is not one of auto, json, text"));
  if (!one_of(c.log_level, kLevels))
    return bad("log_level",
               absl::StrCat("\"", c.log_level,
                            "\" is not one of debug, info, warn, error"));
  return absl::OkStatus();
}

bool IsPostgresUrl(absl::string_view store) {
  return absl::StartsWith(store, "postgresql://") ||
         absl::StartsWith(store, "postgres://");
}

bool IsLoopback(absl::string_view host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::Status SplitHostPort(absl::string_view listen, std::string* host,
                           int* port) {
  size_t colon;
  if (!listen.empty() && listen[0] == '[') {
    const size_t close = listen.find(']');
    if (close == listen.npos || close + 1 >= listen.size() ||
        listen[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", listen, "\" is not host:port (IPv6 as [::1]:8712)"));
    }
    *host = std::string(listen.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = listen.rfind(':');
    if (colon == listen.npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", listen, "\" is not host:port (such as 127.0.0.1:8712)"));
    }
    *host = std::string(listen.substr(0, colon));
  }
  int p = 0;
  if (!absl::SimpleAtoi(listen.substr(colon + 1), &p) || p < 0 || p > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", listen.substr(colon + 1), "\" is not a port (0-65535)"));
  }
  *port = p;
  return absl::OkStatus();
}

}  // namespace chime::config
