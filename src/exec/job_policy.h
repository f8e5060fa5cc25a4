// JobPolicy: what the daemon lets a job created through the REST API do on
// its host -- which programs it may run, which hosts it may call, and as
// whom its commands run (chime.yaml `api_jobs`, docs/daemon.md). Jobs that
// job files define are the operator's own and are not limited by it.
//
//   api_jobs:
//     allowed_commands: [/usr/local/bin/*, /opt/etl/run]
//     allowed_http_hosts: [api.internal, "*.svc.example.com", "127.0.0.1:9000"]
//     run_as: chime-jobs            # or "user:group"
//
// allowed_commands (when not empty): a job's command must be `shell.argv`
// whose argv[0] is an absolute path, without "." or ".." segments, that
// matches one of the patterns (fnmatch with FNM_PATHNAME: `*` and `?` do
// not match '/'). `shell.command` is refused: a shell command line can run
// anything. So are environment variables that change what an allowed
// program runs (PATH, LD_*, BASH_ENV, ...).
//
// allowed_http_hosts (when not empty): the URL's host, as libcurl reads it
// (so "http://ok@evil/" is evil), must equal an entry, or end with what
// follows the `*` of a "*.domain" entry (a subdomain, not the domain
// itself); an entry with ":port" also requires that port (the scheme's
// default when the URL gives none). Names are compared as written, not
// resolved: whoever controls DNS for an allowed name decides where it goes.
// Redirects are never followed (src/exec/http_executor.cc).
//
// run_as (when set): an API job's commands run as this user (and group),
// and a job that names another `shell.user` or `shell.group` is refused.
//
// The API checks a job when it is created or changed (403 naming the field),
// and the daemon again before each attempt, so a policy made stricter also
// holds for jobs created before it.
//
// Thread-safety: pure functions; ValidateJobPolicy reads the user database.
#ifndef CHIME_SRC_EXEC_JOB_POLICY_H_
#define CHIME_SRC_EXEC_JOB_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "chime/job.h"

namespace chime::exec {

struct JobPolicy {
  std::vector<std::string> allowed_commands;
  std::vector<std::string> allowed_http_hosts;
  std::string run_as;  // "user" or "user:group"; "" = the job's own setting

  bool empty() const {
    return allowed_commands.empty() && allowed_http_hosts.empty() &&
           run_as.empty();
  }
  friend bool operator==(const JobPolicy&, const JobPolicy&) = default;
};

// InvalidArgument naming the entry ("api_jobs.allowed_commands[1]: ...") for
// a relative command pattern, an empty or malformed host entry, or a run_as
// user or group that does not exist.
absl::Status ValidateJobPolicy(const JobPolicy& policy);

// OK if `spec` may run under `policy`; otherwise PermissionDenied naming the
// job's field and the rule ("shell.argv[0]: \"/bin/sh\" is not among
// api_jobs.allowed_commands (/usr/local/bin/*)").
absl::Status CheckJobPolicy(const JobPolicy& policy, const JobSpec& spec);

// The shell spec to run an API job with: run_as's user and group in place
// of the job's (which CheckJobPolicy has found empty or the same).
void ApplyRunAs(const JobPolicy& policy, ShellExecutorSpec* shell);

}  // namespace chime::exec

#endif  // CHIME_SRC_EXEC_JOB_POLICY_H_
