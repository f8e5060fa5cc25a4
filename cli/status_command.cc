#include "cli/status_command.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "chime/store_types.h"
#include "cli/client.h"
#include "nlohmann/json.hpp"

namespace chime::cli {

using Json = nlohmann::ordered_json;

std::string internal::HumanDuration(absl::Duration d) {
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  const int64_t s = absl::ToInt64Seconds(d);
  const int64_t days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60,
                seconds = s % 60;
  if (days > 0) return absl::StrCat(days, "d ", hours, "h");
  if (hours > 0) return absl::StrCat(hours, "h ", minutes, "m");
  if (minutes > 0) return absl::StrCat(minutes, "m ", seconds, "s");
  return absl::StrCat(seconds, "s");
}

std::string internal::HumanBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

namespace {

// An integer member of `j`, 0 when missing or not an integer (an older or
// newer daemon may answer with fewer or more members).
int64_t Int(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "-";
}

// An integer member of `j` as text, "-" when missing or null (a standby does
// not know the load).
std::string IntOrDash(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer()
             ? absl::StrCat(it->get<int64_t>())
             : "-";
}

// An RFC 3339 time without its fraction of a second.
std::string WholeSeconds(std::string time) {
  const size_t dot = time.find('.');
  const size_t zone = time.find_first_of("Z+-", dot);
  if (dot != std::string::npos && zone != std::string::npos)
    time.erase(dot, zone - dot);
  return time;
}

// The answer of GET `path`, or nullopt when the command is done: the error
// reported or, with --json, the answer printed as it is (*exit says which).
std::optional<Json> Get(const ClientOptions& client, const std::string& path,
                        const Io& io, int* exit) {
  absl::StatusOr<Json> answer = CallApi(client, "GET", path);
  if (!answer.ok()) {
    *exit = ReportError(answer.status(), io);
    return std::nullopt;
  }
  if (client.json) {
    io.out << answer->dump(2) << "\n";
    *exit = kExitOk;
    return std::nullopt;
  }
  return *std::move(answer);
}

// The scheduler's counts (GET /v1/status "scheduler").
void PrintSchedulerCounts(const Json& s, const Io& io) {
  io.out << "jobs:         " << Int(s, "jobs") << " scheduled, "
         << Int(s, "jobs_paused") << " paused\n";
  io.out << "runs now:     " << Int(s, "runs_pending") << " pending, "
         << Int(s, "runs_running") << " running\n";
  std::vector<std::string> not_run;
  const Json by_reason = s.value("fires_not_run", Json::object());
  for (const auto& [reason, count] : by_reason.items()) {
    not_run.push_back(absl::StrCat(reason, " ", count.dump()));
  }
  io.out << "fires:        " << Int(s, "fires_run") << " run; not run: "
         << (not_run.empty() ? "none" : absl::StrJoin(not_run, ", ")) << "\n";
  io.out << "runs ended:   " << Int(s, "runs_succeeded") << " succeeded, "
         << Int(s, "runs_failed") << " failed, " << Int(s, "runs_cancelled")
         << " cancelled (" << Int(s, "retries") << " retries, "
         << Int(s, "timeouts") << " timed out)\n";
  io.out << "clock steps:  " << Int(s, "clock_steps");
  if (const Json offset = s.value("clock_offset_seconds", Json());
      offset.is_number()) {
    const absl::Duration d = absl::Seconds(offset.get<double>());
    io.out << "; the store's clock is "
           << absl::FormatDuration(
                  absl::Trunc(absl::AbsDuration(d), absl::Milliseconds(1)))
           << (d < absl::ZeroDuration() ? " behind" : " ahead of")
           << " this node's";
  }
  io.out << "\n";
}

int ShowStatus(const ClientOptions& client, const Io& io) {
  int exit = kExitOk;
  std::optional<Json> st = Get(client, "/v1/status", io, &exit);
  if (!st.has_value()) return exit;
  const Json s = st->value("scheduler", Json::object());
  const Json store = st->value("store", Json::object());
  io.out << "chime " << Str(*st, "version") << " at " << client.server;
  if (st->contains("uptime_seconds") && (*st)["uptime_seconds"].is_number()) {
    io.out << ", up "
           << internal::HumanDuration(absl::Seconds(Int(*st, "uptime_seconds")))
           << " (since " << WholeSeconds(Str(*st, "started_at")) << ")";
  }
  io.out << "\n";
  if (Str(*st, "role") == "standby") {
    // No scheduler here: the store's side only (the lease line names the
    // scheduling node).
    io.out << "role:         standby (node " << Str(*st, "node")
           << "): it takes over if the scheduling node goes\n";
  } else {
    PrintSchedulerCounts(s, io);
  }
  io.out << "store:        " << Int(store, "jobs") << " jobs, "
         << Int(store, "runs") << " runs ("
         << internal::HumanBytes(Int(store, "run_bytes"))
         << " of run history)\n";
  // The live members of a shared store on one line; the other leases (the
  // scheduler's) each on its own.
  std::vector<std::string> members;
  for (const Json& l : store.value("leases", Json::array())) {
    const std::string name = Str(l, "name");
    if (!absl::StartsWith(name, kMemberLeasePrefix)) continue;
    if (l.value("holder", Json()).is_string() &&
        l.value("remaining_seconds", 0.0) > 0) {
      members.push_back(name.substr(kMemberLeasePrefix.size()));
    }
  }
  if (!members.empty()) {
    io.out << "members:      " << members.size() << " live ("
           << absl::StrJoin(members, ", ") << ")\n";
  }
  // With shards: how many each node holds, on one line ("8 (a 3, b 3, c
  // 2)"; "nobody" for shards no live node holds).
  std::map<std::string, int> shards_by_node;
  int shards = 0;
  for (const Json& l : store.value("leases", Json::array())) {
    if (!absl::StartsWith(Str(l, "name"), kShardLeasePrefix)) continue;
    ++shards;
    const bool live = l.value("holder", Json()).is_string() &&
                      !Str(l, "holder").empty() &&
                      l.value("remaining_seconds", 0.0) > 0;
    const std::string holder = live ? Str(l, "holder") : "";
    ++shards_by_node[live ? holder.substr(0, holder.find(' ')) : "nobody"];
  }
  if (shards > 0) {
    std::vector<std::string> parts;
    for (const auto& [node, n] : shards_by_node)
      parts.push_back(absl::StrCat(node, " ", n));
    io.out << "shards:       " << shards << " (" << absl::StrJoin(parts, ", ")
           << ")\n";
  }
  for (const Json& l : store.value("leases", Json::array())) {
    if (absl::StartsWith(Str(l, "name"), kMemberLeasePrefix) ||
        absl::StartsWith(Str(l, "name"), kShardLeasePrefix)) {
      continue;
    }
    io.out << "lease:        " << Str(l, "name") << " held by "
           << (l.value("holder", Json()).is_string() ? Str(l, "holder")
                                                     : std::string("nobody"))
           << " (epoch " << Int(l, "epoch") << ", "
           << internal::HumanDuration(
                  absl::Seconds(l.value("remaining_seconds", 0.0)))
           << " left)\n";
  }
  const Json errors = st->value("job_file_errors", Json::array());
  if (errors.empty()) {
    io.out << "job files:    ok\n";
  } else {
    io.out << "job files:    " << errors.size()
           << (errors.size() == 1 ? " error" : " errors")
           << " (the version loaded before stays in force)\n";
    for (const Json& e : errors)
      io.out << "  " << (e.is_string() ? e.get<std::string>() : e.dump())
             << "\n";
  }
  return kExitOk;
}

int NamespaceList(const ClientOptions& client, const Io& io) {
  int exit = kExitOk;
  std::optional<Json> answer = Get(client, "/v1/namespaces", io, &exit);
  if (!answer.has_value()) return exit;
  std::vector<std::vector<std::string>> rows = {
      {"NAMESPACE", "JOBS", "PAUSED", "PENDING", "RUNNING"}};
  const Json namespaces = answer->value("namespaces", Json::array());
  for (const Json& ns : namespaces) {
    rows.push_back({Str(ns, "name"), absl::StrCat(Int(ns, "jobs")),
                    absl::StrCat(Int(ns, "paused")),
                    IntOrDash(ns, "runs_pending"),
                    IntOrDash(ns, "runs_running")});
  }
  PrintTable(rows, io.out, /*right_align_after_first=*/true);
  if (answer->value("jobs_capped", false)) {
    io.out << "(only the first " << Int(*answer, "jobs_counted")
           << " jobs were counted)\n";
  }
  return kExitOk;
}

constexpr char kApiExitStatus[] =
    "Exit status: 0 success; 1 server unreachable or failing; 2 usage or "
    "bad input; 3 not found (a daemon without this route); 4 not allowed "
    "(token).";

}  // namespace

void AddStatusCommand(CLI::App& app, const Io& io, int* status) {
  auto client = std::make_shared<ClientOptions>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "the daemon's state: version, uptime, counts, job file errors (REST "
      "API)");
  cmd->footer(kApiExitStatus);
  AddClientOptions(cmd, client.get());
  cmd->callback([client, &io, status] { *status = ShowStatus(*client, io); });
}

void AddNamespaceCommand(CLI::App& app, const Io& io, int* status) {
  auto client = std::make_shared<ClientOptions>();
  CLI::App* family =
      app.add_subcommand("namespace", "the daemon's namespaces (REST API)");
  family->require_subcommand(1);
  family->footer(kApiExitStatus);
  CLI::App* list = family->add_subcommand(
      "list", "each namespace with its jobs and the runs going");
  AddClientOptions(list, client.get());
  list->callback(
      [client, &io, status] { *status = NamespaceList(*client, io); });
}

}  // namespace chime::cli
