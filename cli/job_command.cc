#include "cli/job_command.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/client.h"
#include "cli/stream_command.h"
#include "src/config/job_file.h"
#include "src/config/job_writer.h"
#include "src/config/yaml_writer.h"

namespace chime::cli {
namespace {

using Json = nlohmann::ordered_json;

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
  bool dead = false;    // run list: the dead letters
  bool follow = false;  // run logs: the running attempt's output as it comes
  int limit = 20;
  int64_t run = 0;
  int count = 5;
  std::string from;
  std::string file;  // apply -f
};

// One API call for a command: the answer, or nullopt when the command is
// done with it -- the error reported (*exit is its status) or, with --json,
// the answer printed as it is (*exit is 0).
std::optional<Json> Fetch(const JobFlags& f, const std::string& method,
                          const std::string& path, const Io& io, int* exit,
                          const std::string& body = "") {
  absl::StatusOr<Json> answer = CallApi(f.client, method, path, body);
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

// Pause, resume and delete: one call, one line.
int JobChange(const JobFlags& f, const Io& io, const std::string& what) {
  int exit = kExitOk;
  const bool del = what == "delete";
  std::optional<Json> job =
      Fetch(f, del ? "DELETE" : "POST",
            del ? JobPath(f.name) : absl::StrCat(JobPath(f.name), "/", what),
            io, &exit);
  if (!job.has_value()) return exit;
  io.out << f.name << ": " << (del ? "deleted" : what + "d") << "\n";
  return kExitOk;
}

// The jobs of a job file, each created or replaced (PUT). The file is read
// here first, so its errors point into it and nothing is sent; then every
// job is sent, and the exit status is the first failure's.
int JobApply(const JobFlags& f, const Io& io) {
  absl::StatusOr<std::string> text = config::ReadFile(f.file);
  if (!text.ok())
    return ReportError(absl::InvalidArgumentError(text.status().message()), io);
  absl::StatusOr<std::vector<JobSpec>> jobs =
      config::ParseJobFile(f.file, *text);
  if (!jobs.ok()) return ReportError(jobs.status(), io);
  int status = kExitOk;
  Json answers = Json::array();
  for (const JobSpec& spec : *jobs) {
    const std::string name = spec.key.ToString();
    const std::string path =
        absl::StrCat("/v1/jobs/", EncodeQueryValue(spec.key.name_space), "/",
                     EncodeQueryValue(spec.key.id));
    absl::StatusOr<Json> job =
        CallApi(f.client, "PUT", path, config::JobToJson(spec).dump());
    if (!job.ok()) {
      const int exit = ReportError(
          absl::Status(job.status().code(),
                       absl::StrCat(name, ": ", job.status().message())),
          io);
      if (status == kExitOk) status = exit;
      continue;
    }
    if (f.client.json) {
      answers.push_back(*std::move(job));
      continue;
    }
    io.out << name << ": applied (revision "
           << Text((*job)["status"]["revision"]) << ", generation "
           << Text((*job)["status"]["generation"]) << ")\n";
  }
  if (f.client.json) io.out << Json{{"jobs", answers}}.dump(2) << "\n";
  return status;
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

// A job's runs, or without a job every job's (GET /v1/runs) or the dead
// letters (GET /v1/dead-letters), newest first: up to --limit of them,
// following next_cursor past short pages (a namespace filter gives some).
int RunList(const JobFlags& f, const Io& io) {
  const bool every_job = f.name.empty();
  std::string path = every_job ? (f.dead ? "/v1/dead-letters" : "/v1/runs")
                               : JobPath(f.name) + "/runs";
  std::string query;
  if (!f.state.empty())
    absl::StrAppend(&query, "&state=", EncodeQueryValue(f.state));
  if (!f.name_space.empty())
    absl::StrAppend(&query, "&namespace=", EncodeQueryValue(f.name_space));
  Json runs = Json::array();
  Json cursor = nullptr;
  for (int pages = 0; pages < 1000; ++pages) {
    std::string call = absl::StrCat(
        path, "?limit=", f.limit - static_cast<int>(runs.size()), query);
    if (cursor.is_string())
      absl::StrAppend(&call, "&cursor=", cursor.get<std::string>());
    absl::StatusOr<Json> page = CallApi(f.client, "GET", call);
    if (!page.ok()) return ReportError(page.status(), io);
    for (auto& run : (*page)["runs"]) runs.push_back(std::move(run));
    cursor = (*page)["next_cursor"];
    if (cursor.is_null() || static_cast<int>(runs.size()) >= f.limit) break;
  }
  if (f.client.json) {
    io.out << Json{{"runs", runs}, {"next_cursor", cursor}}.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {{"RUN"}};
  if (every_job) rows[0].push_back("JOB");
  for (const char* h : {"SCHEDULED", "STATE", "ATTEMPT", "DETAIL"})
    rows[0].push_back(h);
  for (const Json& run : runs) {
    rows.push_back({Text(run["id"])});
    if (every_job) rows.back().push_back(Text(run["job"]));
    for (const char* key : {"scheduled_time", "state", "attempt", "detail"})
      rows.back().push_back(Text(run[key]));
  }
  PrintTable(rows, io.out);
  return kExitOk;
}

// cancel: the run is asked to stop; retry: a new run of a run that failed.
int RunAct(const JobFlags& f, const Io& io, const std::string& what) {
  int exit = kExitOk;
  std::optional<Json> answer = Fetch(
      f, "POST", absl::StrCat(JobPath(f.name), "/runs/", f.run, "/", what), io,
      &exit);
  if (!answer.has_value()) return exit;
  if (what == "cancel") {
    io.out << "run " << f.run << " of " << f.name << ": cancel requested ("
           << Text((*answer)["state"]) << ")\n";
  } else {
    io.out << "run " << f.run << " of " << f.name << ": retried as run "
           << Text((*answer)["run_id"]) << "\n";
  }
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
  CLI::App* apply = Command(job, "apply",
                            "create or replace the jobs of a job file "
                            "(the YAML of docs/jobs.md)",
                            f.get(), nullptr);
  apply->add_option("-f,--file", f->file, "the job file")->required();
  apply->callback([f, &io, status] { *status = JobApply(*f, io); });
  for (const char* what : {"pause", "resume", "delete"}) {
    const std::string w = what;
    Command(job, w,
            w == "delete" ? "delete a job (its history stays)"
                          : w + " a job (jobs of job files: edit the file)",
            f.get(), &f->name)
        ->callback([f, &io, status, w] { *status = JobChange(*f, io, w); });
  }
  CLI::App* next =
      Command(job, "next", "a job's next fire times", f.get(), &f->name);
  next->add_option("-n,--count", f->count, "how many (1-1000)")
      ->check(CLI::Range(1, 1000));
  next->add_option("--from", f->from,
                   "after this time (RFC 3339; default now)");
  next->callback([f, &io, status] { *status = JobNext(*f, io); });
}

void AddRunCommand(CLI::App& app, const Io& io, int* status) {
  CLI::App* run = Family(app, "run", "runs of jobs (REST API)");
  auto f = std::make_shared<JobFlags>();

  CLI::App* list = Command(
      run, "list", "a job's runs, or without NAME every job's; newest first",
      f.get(), nullptr);
  CLI::Option* name =
      list->add_option("name", f->name, "namespace/id, or id; none: every job");
  CLI::Option* state = list->add_option(
      "--state", f->state,
      "pending, running, retrying, succeeded, failed, cancelled or lost");
  list->add_option("--namespace", f->name_space, "every job's: only this one")
      ->excludes(name);
  list->add_flag("--dead", f->dead,
                 "every job's failed runs, their retries exhausted (the dead "
                 "letters)")
      ->excludes(name)
      ->excludes(state);
  list->add_option("--limit", f->limit, "at most this many (1-1000)")
      ->check(CLI::Range(1, 1000));
  list->callback([f, &io, status] { *status = RunList(*f, io); });

  for (const bool logs : {false, true}) {
    CLI::App* cmd = Command(
        run, logs ? "logs" : "get",
        logs ? "the output of a run's attempts" : "a run and its attempts",
        f.get(), &f->name);
    cmd->add_option("run", f->run, "the run id")->required();
    if (logs) {
      cmd->add_flag("-f,--follow", f->follow,
                    "print the output of the run's attempt as it comes (the "
                    "running one, else the next); exit when it ends");
    }
    cmd->callback([f, &io, status, logs] {
      *status = logs && f->follow
                    ? FollowRunOutput(f->client, f->name, f->run, io)
                    : RunGet(*f, io, logs);
    });
  }
  for (const char* what : {"cancel", "retry"}) {
    const std::string w = what;
    CLI::App* cmd =
        Command(run, w,
                w == "cancel" ? "cancel a run that is going (a running "
                                "attempt is asked to stop)"
                              : "run a job again for a run that failed, "
                                "was cancelled or lost",
                f.get(), &f->name);
    cmd->add_option("run", f->run, "the run id")->required();
    cmd->callback([f, &io, status, w] { *status = RunAct(*f, io, w); });
  }
}

}  // namespace chime::cli
