#include "cli/job_command.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/client.h"
#include "src/config/yaml_writer.h"

namespace chime::cli {
namespace {

using Json = nlohmann::ordered_json;

// Rows printed with each column as wide as its widest cell, two spaces
// between columns, no spaces at the ends of lines.
void PrintTable(const std::vector<std::vector<std::string>>& rows,
                std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::string Text(const Json& j) {
  if (j.is_null()) return "-";
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

std::string JobPath(const std::string& name) {
  auto [ns, id] = SplitJobName(name);
  return absl::StrCat("/v1/jobs/", EncodeQueryValue(ns), "/",
                      EncodeQueryValue(id));
}

// The state shared by a command's options and its callback.
struct JobFlags {
  ClientOptions client;
  std::string name;
  std::string name_space;
  std::vector<std::string> labels;
  std::string paused;
  std::string state;
  int limit = 20;
  int64_t run = 0;
  int count = 5;
  std::string from;
};

// One API call for a command: the answer, or nullopt when the command is
// done with it -- the error reported (*exit is its status) or, with --json,
// the answer printed as it is (*exit is 0).
std::optional<Json> Fetch(const JobFlags& f, const std::string& method,
                          const std::string& path, const Io& io, int* exit) {
  absl::StatusOr<Json> answer = CallApi(f.client, method, path);
  if (!answer.ok()) {
    *exit = ReportError(answer.status(), io);
    return std::nullopt;
  }
  if (f.client.json) {
    io.out << answer->dump(2) << "\n";
    *exit = kExitOk;
    return std::nullopt;
  }
  return *std::move(answer);
}

int JobList(const JobFlags& f, const Io& io) {
  std::string query;
  if (!f.name_space.empty())
    absl::StrAppend(&query, "&namespace=", EncodeQueryValue(f.name_space));
  for (const std::string& label : f.labels)
    absl::StrAppend(&query, "&label=", EncodeQueryValue(label));
  if (!f.paused.empty())
    absl::StrAppend(&query, "&paused=", EncodeQueryValue(f.paused));
  Json all = Json::array();
  std::string cursor;
  for (int pages = 0; pages < 10'000; ++pages) {
    std::string path = absl::StrCat("/v1/jobs?limit=1000", query);
    if (!cursor.empty()) absl::StrAppend(&path, "&cursor=", cursor);
    absl::StatusOr<Json> page = CallApi(f.client, "GET", path);
    if (!page.ok()) return ReportError(page.status(), io);
    for (auto& job : (*page)["jobs"]) all.push_back(std::move(job));
    if ((*page)["next_cursor"].is_null()) break;
    cursor = (*page)["next_cursor"].get<std::string>();
  }
  if (f.client.json) {
    io.out << Json{{"jobs", all}}.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "SCHEDULE", "ZONE", "PAUSED", "GENERATION"}};
  for (const Json& job : all) {
    const Json& spec = job["spec"];
    const std::string trigger = spec.contains("schedule")
                                    ? Text(spec["schedule"])
                                    : "at " + Text(spec.value("at", Json()));
    rows.push_back({Text(job["name"]), trigger, spec.value("zone", "UTC"),
                    job["status"]["paused"].get<bool>() ? "yes" : "no",
                    Text(job["status"]["generation"])});
  }
  PrintTable(rows, io.out);
  return kExitOk;
}

int JobGet(const JobFlags& f, const Io& io) {
  int exit = kExitOk;
  std::optional<Json> job = Fetch(f, "GET", JobPath(f.name), io, &exit);
  if (!job.has_value()) return exit;
  // The status as comments: what is printed is still a job file.
  const Json& st = (*job)["status"];
  io.out << "# " << Text((*job)["name"]) << ": generation "
         << Text(st["generation"]) << ", revision " << Text(st["revision"])
         << (st["paused"].get<bool>() ? ", paused" : "") << ", next fire "
         << Text(st.value("next_fire_time", Json())) << "\n";
  io.out << config::internal::WriteYaml((*job)["spec"]);
  return kExitOk;
}

int JobTrigger(const JobFlags& f, const Io& io) {
  int exit = kExitOk;
  std::optional<Json> made =
      Fetch(f, "POST", JobPath(f.name) + "/trigger", io, &exit);
  if (!made.has_value()) return exit;
  io.out << "triggered " << f.name << ": run " << Text((*made)["run_id"])
         << "\n";
  return kExitOk;
}

int JobNext(const JobFlags& f, const Io& io) {
  std::string path = absl::StrCat(JobPath(f.name), "/next?count=", f.count);
  if (!f.from.empty())
    absl::StrAppend(&path, "&from=", EncodeQueryValue(f.from));
  int exit = kExitOk;
  std::optional<Json> next = Fetch(f, "GET", path, io, &exit);
  if (!next.has_value()) return exit;
  std::vector<std::vector<std::string>> rows = {{"TIME (UTC)", "LOCAL", ""}};
  for (const Json& fire : (*next)["next"]) {
    std::string note;
    if (fire.contains("offset_changed")) {
      const Json& c = fire["offset_changed"];
      note = absl::StrCat("offset ", Text(c["before"]), " -> ",
                          Text(c["after"]), " at ", Text(c["at"]));
    }
    rows.push_back({Text(fire["time"]), Text(fire["local"]), note});
  }
  PrintTable(rows, io.out);
  if ((*next)["paused"].get<bool>())
    io.out << "(paused: these fire times are skipped until it is resumed)\n";
  return kExitOk;
}

int RunList(const JobFlags& f, const Io& io) {
  std::string path = absl::StrCat(JobPath(f.name), "/runs?limit=", f.limit);
  if (!f.state.empty())
    absl::StrAppend(&path, "&state=", EncodeQueryValue(f.state));
  int exit = kExitOk;
  std::optional<Json> page = Fetch(f, "GET", path, io, &exit);
  if (!page.has_value()) return exit;
  std::vector<std::vector<std::string>> rows = {
      {"RUN", "SCHEDULED", "STATE", "ATTEMPT", "DETAIL"}};
  for (const Json& run : (*page)["runs"]) {
    rows.push_back({Text(run["id"]), Text(run["scheduled_time"]),
                    Text(run["state"]), Text(run["attempt"]),
                    Text(run["detail"])});
  }
  PrintTable(rows, io.out);
  return kExitOk;
}

int RunGet(const JobFlags& f, const Io& io, bool logs_only) {
  int exit = kExitOk;
  std::optional<Json> run = Fetch(
      f, "GET", absl::StrCat(JobPath(f.name), "/runs/", f.run), io, &exit);
  if (!run.has_value()) return exit;
  const Json& attempts = (*run)["attempts"];
  if (logs_only) {
    for (const Json& a : attempts) {
      if (attempts.size() > 1) {
        io.out << "--- attempt " << Text(a["number"]) << " ("
               << Text(a["outcome"]) << ", exit " << Text(a["exit_code"])
               << ") ---\n";
      }
      if (a["output_truncated"].get<bool>())
        io.out << "[earlier output dropped]\n";
      io.out << a["output"].get<std::string>();
    }
    return kExitOk;
  }
  io.out << "run " << Text((*run)["id"]) << " of " << f.name << "\n"
         << "fire id:    " << Text((*run)["fire_id"]) << "\n"
         << "state:      " << Text((*run)["state"]) << "\n"
         << "scheduled:  " << Text((*run)["scheduled_time"]) << "\n";
  if (!(*run)["detail"].get<std::string>().empty())
    io.out << "detail:     " << Text((*run)["detail"]) << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"ATTEMPT", "STARTED", "FINISHED", "OUTCOME", "EXIT", "DETAIL"}};
  for (const Json& a : attempts) {
    rows.push_back({Text(a["number"]), Text(a["started_at"]),
                    Text(a["finished_at"]), Text(a["outcome"]),
                    Text(a["exit_code"]), Text(a["detail"])});
  }
  io.out << "\n";
  PrintTable(rows, io.out);
  return kExitOk;
}

// A family of API commands ("job", "run"), with the exit statuses in its
// help.
CLI::App* Family(CLI::App& app, const std::string& name,
                 const std::string& description) {
  CLI::App* family = app.add_subcommand(name, description);
  family->require_subcommand(1);
  family->footer(
      "Exit status: 0 success; 1 server unreachable or failing; 2 usage or "
      "bad input; 3 not found; 4 not allowed (token); 5 conflict.");
  return family;
}

// One command of `family` with the client options and, unless `name` is
// null, the job's name as its first argument.
CLI::App* Command(CLI::App* family, const std::string& command,
                  const std::string& description, JobFlags* f,
                  std::string* name) {
  CLI::App* cmd = family->add_subcommand(command, description);
  AddClientOptions(cmd, &f->client);
  if (name != nullptr)
    cmd->add_option("name", *name, "namespace/id, or id")->required();
  return cmd;
}

}  // namespace

void AddJobCommand(CLI::App& app, const Io& io, int* status) {
  CLI::App* job = Family(app, "job", "the daemon's jobs (REST API)");
  auto f = std::make_shared<JobFlags>();

  CLI::App* list = Command(job, "list", "list jobs", f.get(), nullptr);
  list->add_option("--namespace", f->name_space, "only this namespace");
  list->add_option("--label", f->labels, "key=value (repeatable; all match)");
  list->add_option("--paused", f->paused, "true or false");
  list->callback([f, &io, status] { *status = JobList(*f, io); });

  Command(job, "get", "show a job as a job file", f.get(), &f->name)
      ->callback([f, &io, status] { *status = JobGet(*f, io); });
  Command(job, "trigger", "run a job now", f.get(), &f->name)
      ->callback([f, &io, status] { *status = JobTrigger(*f, io); });
  CLI::App* next =
      Command(job, "next", "a job's next fire times", f.get(), &f->name);
  next->add_option("-n,--count", f->count, "how many (1-1000)")
      ->check(CLI::Range(1, 1000));
  next->add_option("--from", f->from,
                   "after this time (RFC 3339; default now)");
  next->callback([f, &io, status] { *status = JobNext(*f, io); });
}

void AddRunCommand(CLI::App& app, const Io& io, int* status) {
  CLI::App* run = Family(app, "run", "a job's runs (REST API)");
  auto f = std::make_shared<JobFlags>();

  CLI::App* list =
      Command(run, "list", "a job's runs, newest first", f.get(), &f->name);
  list->add_option("--state", f->state,
                   "pending, running, retrying, succeeded, failed, "
                   "cancelled or lost");
  list->add_option("--limit", f->limit, "at most this many (1-1000)")
      ->check(CLI::Range(1, 1000));
  list->callback([f, &io, status] { *status = RunList(*f, io); });

  for (const bool logs : {false, true}) {
    CLI::App* cmd = Command(
        run, logs ? "logs" : "get",
        logs ? "the output of a run's attempts" : "a run and its attempts",
        f.get(), &f->name);
    cmd->add_option("run", f->run, "the run id")->required();
    cmd->callback([f, &io, status, logs] { *status = RunGet(*f, io, logs); });
  }
}

}  // namespace chime::cli
