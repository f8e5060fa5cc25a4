#include "src/exec/job_policy.h"

#include <curl/curl.h>
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace chime::exec {
namespace {

// Variables that change which code an allowed program runs: the loader's,
// the shells' start-up files and options, and the module paths of common
// interpreters. Best effort: an allowed program should not trust its
// environment.
constexpr absl::string_view kRefusedEnv[] = {"PATH",
                                             "BASH_ENV",
                                             "ENV",
                                             "IFS",
                                             "SHELLOPTS",
                                             "BASHOPTS",
                                             "PS4",
                                             "GCONV_PATH",
                                             "PYTHONPATH",
                                             "PYTHONHOME",
                                             "PYTHONSTARTUP",
                                             "PERL5LIB",
                                             "PERL5OPT",
                                             "PERLLIB",
                                             "RUBYLIB",
                                             "RUBYOPT",
                                             "NODE_PATH",
                                             "NODE_OPTIONS",
                                             "JAVA_TOOL_OPTIONS"};
constexpr absl::string_view kRefusedEnvPrefixes[] = {"LD_", "BASH_FUNC_"};

bool RefusedEnv(absl::string_view name) {
  for (absl::string_view n : kRefusedEnv)
    if (n == name) return true;
  for (absl::string_view p : kRefusedEnvPrefixes)
    if (absl::StartsWith(name, p)) return true;
  return false;
}

absl::Status Denied(absl::string_view field, absl::string_view why) {
  return absl::PermissionDeniedError(absl::StrCat(field, ": ", why));
}

// A host entry split: the host (lower case, an IPv6 address in brackets as
// libcurl gives it) and the port, 0 for any.
struct HostEntry {
  std::string host;
  int port = 0;
};

std::optional<HostEntry> ParseHostEntry(absl::string_view entry) {
  HostEntry e;
  absl::string_view port;
  if (absl::StartsWith(entry, "[")) {
    const size_t close = entry.find(']');
    if (close == entry.npos) return std::nullopt;
    e.host = std::string(entry.substr(0, close + 1));
    absl::string_view rest = entry.substr(close + 1);
    if (!rest.empty() && !absl::ConsumePrefix(&rest, ":")) return std::nullopt;
    port = rest;
  } else if (std::count(entry.begin(), entry.end(), ':') > 1) {
    e.host = absl::StrCat("[", entry, "]");  // a bare IPv6 address
  } else {
    const size_t colon = entry.find(':');
    e.host = std::string(entry.substr(0, colon));
    if (colon != entry.npos) port = entry.substr(colon + 1);
  }
  if (e.host.empty() || e.host == "[]" ||
      e.host.find_first_of("/@ ") != std::string::npos)
    return std::nullopt;
  if (e.host.find('*') != std::string::npos &&
      (!absl::StartsWith(e.host, "*.") ||
       e.host.find('*', 1) != std::string::npos || e.host.size() < 3))
    return std::nullopt;
  if (!port.empty() &&
      (!absl::SimpleAtoi(port, &e.port) || e.port < 1 || e.port > 65535))
    return std::nullopt;
  absl::AsciiStrToLower(&e.host);
  return e;
}

bool HostMatches(const HostEntry& e, absl::string_view host, int port) {
  if (e.port != 0 && e.port != port) return false;
  if (absl::StartsWith(e.host, "*.")) {
    // "*.example.com" takes a.example.com and a.b.example.com.
    return host.size() > e.host.size() - 1 &&
           absl::EndsWith(host, absl::string_view(e.host).substr(1));
  }
  return host == e.host;
}

// The host (lower case) and port libcurl would connect to for `url`.
absl::Status UrlHost(const std::string& url, std::string* host, int* port) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(),
                                                        &curl_url_cleanup);
  if (u == nullptr) return absl::ResourceExhaustedError("curl_url");
  if (curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    return absl::InvalidArgumentError("not a URL libcurl can read");
  char* h = nullptr;
  char* p = nullptr;
  if (curl_url_get(u.get(), CURLUPART_HOST, &h, 0) != CURLUE_OK)
    return absl::InvalidArgumentError("the URL has no host");
  *host = absl::AsciiStrToLower(h);
  curl_free(h);
  if (curl_url_get(u.get(), CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) !=
          CURLUE_OK ||
      !absl::SimpleAtoi(p, port)) {
    curl_free(p);
    return absl::InvalidArgumentError("the URL has no port");
  }
  curl_free(p);
  return absl::OkStatus();
}

// run_as split into user and group ("" when not given).
std::pair<std::string, std::string> RunAsParts(const std::string& run_as) {
  const size_t colon = run_as.find(':');
  if (colon == std::string::npos) return {run_as, ""};
  return {run_as.substr(0, colon), run_as.substr(colon + 1)};
}

bool UserExists(const std::string& name) {
  uid_t uid = 0;
  if (absl::SimpleAtoi(name, &uid)) return true;
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  return getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) == 0 &&
         found != nullptr;
}

bool GroupExists(const std::string& name) {
  gid_t gid = 0;
  if (absl::SimpleAtoi(name, &gid)) return true;
  std::vector<char> buf(16384);
  group gr;
  group* found = nullptr;
  return getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) == 0 &&
         found != nullptr;
}

absl::Status CheckCommand(const JobPolicy& policy,
                          const ShellExecutorSpec& shell) {
  const std::string allowed = absl::StrJoin(policy.allowed_commands, ", ");
  if (!shell.command.empty()) {
    return Denied("shell.command",
                  "refused: with api_jobs.allowed_commands set, a job "
                  "created through the API gives shell.argv (a shell "
                  "command line can run anything)");
  }
  if (shell.argv.empty()) return Denied("shell.argv", "is empty");
  const std::string& program = shell.argv[0];
  const bool dot_segment =
      absl::StrContains(program, "/./") || absl::StrContains(program, "/../") ||
      absl::EndsWith(program, "/.") || absl::EndsWith(program, "/..");
  if (!absl::StartsWith(program, "/") || dot_segment) {
    return Denied("shell.argv[0]",
                  absl::StrCat("\"", program,
                               "\" is not an absolute path without . or .. "
                               "(api_jobs.allowed_commands: ",
                               allowed, ")"));
  }
  bool match = false;
  for (const std::string& pattern : policy.allowed_commands)
    match =
        match || fnmatch(pattern.c_str(), program.c_str(), FNM_PATHNAME) == 0;
  if (!match) {
    return Denied("shell.argv[0]",
                  absl::StrCat("\"", program,
                               "\" is not among api_jobs.allowed_commands (",
                               allowed, ")"));
  }
  for (const auto& [name, value] : shell.env) {
    if (RefusedEnv(name)) {
      return Denied(absl::StrCat("shell.env.", name),
                    "refused: it changes what an allowed program runs "
                    "(api_jobs.allowed_commands is set)");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHost(const JobPolicy& policy, const HttpExecutorSpec& http) {
  std::string host;
  int port = 0;
  if (absl::Status s = UrlHost(http.url, &host, &port); !s.ok())
    return Denied("http.url", s.message());
  for (const std::string& entry : policy.allowed_http_hosts) {
    std::optional<HostEntry> e = ParseHostEntry(entry);
    if (e.has_value() && HostMatches(*e, host, port)) return absl::OkStatus();
  }
  return Denied(
      "http.url",
      absl::StrCat("host ", host, ":", port,
                   " is not among api_jobs.allowed_http_hosts (",
                   absl::StrJoin(policy.allowed_http_hosts, ", "), ")"));
}

}  // namespace

absl::Status ValidateJobPolicy(const JobPolicy& policy) {
  const auto bad = [](absl::string_view list, size_t i, absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("api_jobs.", list, "[", i, "]: ", why));
  };
  for (size_t i = 0; i < policy.allowed_commands.size(); ++i) {
    if (!absl::StartsWith(policy.allowed_commands[i], "/"))
      return bad("allowed_commands", i,
                 absl::StrCat("\"", policy.allowed_commands[i],
                              "\" is not an absolute path pattern"));
  }
  for (size_t i = 0; i < policy.allowed_http_hosts.size(); ++i) {
    if (!ParseHostEntry(policy.allowed_http_hosts[i]).has_value())
      return bad("allowed_http_hosts", i,
                 absl::StrCat("\"", policy.allowed_http_hosts[i],
                              "\" is not host, host:port or *.domain"));
  }
  if (!policy.run_as.empty()) {
    const auto [user, group] = RunAsParts(policy.run_as);
    if (user.empty() || !UserExists(user))
      return absl::InvalidArgumentError(
          absl::StrCat("api_jobs.run_as: no such user \"", user, "\""));
    if (!group.empty() && !GroupExists(group))
      return absl::InvalidArgumentError(
          absl::StrCat("api_jobs.run_as: no such group \"", group, "\""));
  }
  return absl::OkStatus();
}

absl::Status CheckJobPolicy(const JobPolicy& policy, const JobSpec& spec) {
  if (spec.executor.kind == ExecutorSpec::Kind::kShell) {
    const ShellExecutorSpec& shell = spec.executor.shell;
    if (!policy.allowed_commands.empty()) {
      if (absl::Status s = CheckCommand(policy, shell); !s.ok()) return s;
    }
    if (!policy.run_as.empty()) {
      const auto [user, group] = RunAsParts(policy.run_as);
      if (!shell.user.empty() && shell.user != user)
        return Denied("shell.user",
                      absl::StrCat("refused: jobs created through the API run "
                                   "as api_jobs.run_as (",
                                   policy.run_as, ")"));
      if (!shell.group.empty() && shell.group != group)
        return Denied("shell.group",
                      absl::StrCat("refused: jobs created through the API run "
                                   "as api_jobs.run_as (",
                                   policy.run_as, ")"));
    }
  }
  if (spec.executor.kind == ExecutorSpec::Kind::kHttp &&
      !policy.allowed_http_hosts.empty()) {
    return CheckHost(policy, spec.executor.http);
  }
  return absl::OkStatus();
}

void ApplyRunAs(const JobPolicy& policy, ShellExecutorSpec* shell) {
  if (policy.run_as.empty()) return;
  std::tie(shell->user, shell->group) = RunAsParts(policy.run_as);
}

}  // namespace chime::exec
