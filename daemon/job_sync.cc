#include "daemon/job_sync.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace chime::daemon {
namespace {

// Above this many changes in one Apply, each is logged at debug only.
constexpr size_t kJobsLoggedOneByOne = 100;

std::string Where(const std::string& path, const config::FileJob& job) {
  return absl::StrCat(path, ":", job.line, ":", job.column);
}

}  // namespace

JobSync::JobSync(Scheduler& scheduler, MakeFunction make, Logger& log)
    : scheduler_(scheduler), make_(std::move(make)), log_(log) {}

JobSync::Files JobSync::Choose(std::vector<config::FileResult>& files,
                               Report& report) {
  Files chosen;
  std::map<JobKey, std::string> owner;  // key -> "path:line:col"
  // Takes `jobs` for `path` (moved: the specs stay where they are, so
  // applied_'s pointers into an old version stay good) unless a key clashes
  // with a file taken before; returns the clash.
  const auto take = [&](const std::string& path,
                        std::vector<config::FileJob>& jobs) -> std::string {
    for (const config::FileJob& job : jobs) {
      auto it = owner.find(job.spec.key);
      if (it != owner.end()) {
        return absl::StrCat(Where(path, job), ": job \"",
                            job.spec.key.ToString(),
                            "\" is already defined at ", it->second);
      }
    }
    for (const config::FileJob& job : jobs)
      owner[job.spec.key] = Where(path, job);
    chosen[path] = std::move(jobs);
    return "";
  };
  for (config::FileResult& file : files) {
    std::string error;
    if (file.jobs.ok()) {
      error = take(file.path, *file.jobs);
      if (error.empty()) continue;
    } else {
      error = std::string(file.jobs.status().message());
    }
    auto old = in_force_.find(file.path);
    const bool kept =
        old != in_force_.end() && take(file.path, old->second).empty();
    log_.Error("job file not loaded",
               {{"file", file.path},
                {"error", error},
                {"kept", kept ? std::string("the version loaded before")
                              : std::string("nothing")}});
    report.errors.push_back(std::move(error));
  }
  report.files = static_cast<int>(chosen.size());
  return chosen;
}

void JobSync::Diff(const Files& chosen, Report& report) {
  std::map<JobKey, const JobSpec*> wanted;
  for (const auto& [path, jobs] : chosen) {
    for (const config::FileJob& job : jobs) wanted[job.spec.key] = &job.spec;
  }
  std::vector<JobKey> gone;
  std::vector<const JobSpec*> to_add;
  for (const auto& [key, spec] : applied_) {
    if (!wanted.contains(key)) gone.push_back(key);
  }
  for (const auto& [key, spec] : wanted) {
    auto it = applied_.find(key);
    if (it != applied_.end() && it->second != nullptr && *it->second == *spec) {
      it->second = spec;  // the same job, now in the new version of its file
      ++report.unchanged;
    } else {
      to_add.push_back(spec);
    }
  }
  // One line per job for an edit; a summary (and debug lines) for a bulk
  // load of many jobs.
  const LogLevel each = gone.size() + to_add.size() <= kJobsLoggedOneByOne
                            ? LogLevel::kInfo
                            : LogLevel::kDebug;
  for (const JobKey& key : gone) {
    const absl::Status s = scheduler_.RemoveJob(key);
    if (s.ok() || absl::IsNotFound(s)) {
      log_.Log(each, "job removed", {{"job", key.ToString()}});
      ++report.removed;
      applied_.erase(key);
    } else {
      log_.Error("job not removed",
                 {{"job", key.ToString()}, {"error", s.ToString()}});
      applied_[key] = nullptr;  // its spec goes with the old file version
    }
  }
  for (const JobSpec* spec : to_add) {
    auto it = applied_.find(spec->key);
    const bool is_new = it == applied_.end();
    const absl::Status s = scheduler_.AddJob(*spec, make_(*spec));
    if (!s.ok()) {
      // Validated when the file was read; the scheduler may still refuse
      // (it is shutting down). Forgotten: the next Apply adds it again.
      log_.Error("job not applied",
                 {{"job", spec->key.ToString()}, {"error", s.ToString()}});
      if (!is_new) applied_.erase(it);
      continue;
    }
    applied_[spec->key] = spec;
    log_.Log(each, is_new ? "job added" : "job changed",
             {{"job", spec->key.ToString()}});
    ++(is_new ? report.added : report.changed);
  }
}

JobSync::Report JobSync::Apply(std::vector<config::FileResult> files) {
  absl::MutexLock lock(&mu_);
  Report report;
  Files chosen = Choose(files, report);
  Diff(chosen, report);
  in_force_ = std::move(chosen);
  errors_ = report.errors;
  log_.Info("job files applied",
            {{"files", int64_t{report.files}},
             {"errors", static_cast<int64_t>(report.errors.size())},
             {"added", int64_t{report.added}},
             {"changed", int64_t{report.changed}},
             {"removed", int64_t{report.removed}},
             {"unchanged", int64_t{report.unchanged}}});
  return report;
}

std::vector<std::string> JobSync::Errors() const {
  absl::MutexLock lock(&mu_);
  return errors_;
}

int JobSync::NumJobs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(applied_.size());
}

}  // namespace chime::daemon
