#include "daemon/job_sync.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace chime::daemon {
namespace {

// Above this many changes in one Apply, each is logged at debug only.
constexpr size_t kJobsLoggedOneByOne = 100;

std::string Where(const std::string& path, int line, int column) {
  return absl::StrCat(path, ":", line, ":", column);
}

}  // namespace

JobSync::JobSync(Scheduler& scheduler, MakeFunction make, Logger& log)
    : scheduler_(scheduler), make_(std::move(make)), log_(log) {}

JobSync::Chosen JobSync::Choose(const std::vector<config::FileResult>& files,
                                Report& report) {
  Chosen chosen;
  absl::flat_hash_map<JobKey, std::string> owner;  // key -> "path:line:col"
  // Takes `jobs` for `path` unless a key clashes with a file taken before;
  // returns the clash.
  const auto take = [&](const std::string& path,
                        std::vector<Candidate> jobs) -> std::string {
    for (const Candidate& job : jobs) {
      auto it = owner.find(job.key);
      if (it != owner.end()) {
        return absl::StrCat(Where(path, job.entry.line, job.entry.column),
                            ": job \"", job.key.ToString(),
                            "\" is already defined at ", it->second);
      }
    }
    for (const Candidate& job : jobs)
      owner[job.key] = Where(path, job.entry.line, job.entry.column);
    chosen[path] = std::move(jobs);
    return "";
  };
  for (const config::FileResult& file : files) {
    std::string error;
    if (file.jobs.ok()) {
      std::vector<Candidate> jobs;
      jobs.reserve(file.jobs->size());
      for (const config::FileJob& job : *file.jobs) {
        jobs.push_back(
            {job.spec.key,
             {core::PackedSpec::Pack(job.spec), job.line, job.column},
             &job.spec});
      }
      error = take(file.path, std::move(jobs));
      if (error.empty()) continue;
    } else {
      error = std::string(file.jobs.status().message());
    }
    bool kept = false;
    if (auto old = in_force_.find(file.path); old != in_force_.end()) {
      std::vector<Candidate> jobs;
      jobs.reserve(old->second.size());
      for (const Entry& entry : old->second)
        jobs.push_back({entry.packed.Key(), entry, nullptr});
      kept = take(file.path, std::move(jobs)).empty();
    }
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

void JobSync::Diff(const Chosen& chosen, Report& report) {
  // What the scheduler has now: the jobs in force (but those it refused),
  // and those it would not remove (no spec: they differ from anything).
  absl::flat_hash_map<JobKey, const core::PackedSpec*> applied;
  for (const auto& [path, entries] : in_force_) {
    for (const Entry& entry : entries) {
      JobKey key = entry.packed.Key();
      if (!not_added_.contains(key)) applied[std::move(key)] = &entry.packed;
    }
  }
  for (const JobKey& key : not_removed_) applied[key] = nullptr;
  absl::flat_hash_set<JobKey> wanted;
  std::vector<const Candidate*> to_add;
  for (const auto& [path, jobs] : chosen) {
    for (const Candidate& job : jobs) {
      wanted.insert(job.key);
      auto it = applied.find(job.key);
      if (it != applied.end() && it->second != nullptr &&
          *it->second == job.entry.packed) {
        ++report.unchanged;
      } else {
        to_add.push_back(&job);
      }
    }
  }
  std::vector<JobKey> gone;
  for (const auto& [key, packed] : applied) {
    if (!wanted.contains(key)) gone.push_back(key);
  }
  std::sort(gone.begin(), gone.end());
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
      not_removed_.erase(key);
    } else {
      log_.Error("job not removed",
                 {{"job", key.ToString()}, {"error", s.ToString()}});
      not_removed_.insert(key);
    }
  }
  for (const Candidate* job : to_add) {
    const bool is_new = !applied.contains(job->key);
    std::optional<JobSpec> unpacked;
    if (job->spec == nullptr) unpacked = job->entry.packed.Unpack();
    const JobSpec& spec = job->spec != nullptr ? *job->spec : *unpacked;
    const absl::Status s = scheduler_.AddJob(spec, make_(spec));
    if (!s.ok()) {
      // Validated when the file was read; the scheduler may still refuse
      // (it is shutting down). The next Apply adds it again.
      log_.Error("job not applied",
                 {{"job", job->key.ToString()}, {"error", s.ToString()}});
      not_added_.insert(job->key);
      continue;
    }
    not_added_.erase(job->key);
    not_removed_.erase(job->key);
    log_.Log(each, is_new ? "job added" : "job changed",
             {{"job", job->key.ToString()}});
    ++(is_new ? report.added : report.changed);
  }
  // Refused adds of jobs no file has any more are forgotten.
  absl::erase_if(not_added_,
                 [&](const JobKey& key) { return !wanted.contains(key); });
}

JobSync::Report JobSync::Apply(std::vector<config::FileResult> files) {
  for (config::FileResult& file : files) {
    if (!file.jobs.ok()) continue;
    for (config::FileJob& job : *file.jobs) job.spec.source_file = file.path;
  }
  absl::MutexLock lock(&mu_);
  Report report;
  Chosen chosen = Choose(files, report);
  Diff(chosen, report);
  in_force_.clear();
  for (auto& [path, jobs] : chosen) {
    std::vector<Entry>& entries = in_force_[path];
    entries.reserve(jobs.size());
    for (Candidate& job : jobs) entries.push_back(std::move(job.entry));
  }
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

absl::flat_hash_set<JobKey> JobSync::Keys() const {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<JobKey> keys;
  for (const auto& [path, entries] : in_force_) {
    for (const Entry& entry : entries) keys.insert(entry.packed.Key());
  }
  for (const JobKey& key : not_added_) keys.erase(key);
  return keys;
}

int JobSync::NumJobs() const {
  absl::MutexLock lock(&mu_);
  int64_t n = static_cast<int64_t>(not_removed_.size()) -
              static_cast<int64_t>(not_added_.size());
  for (const auto& [path, entries] : in_force_)
    n += static_cast<int64_t>(entries.size());
  return static_cast<int>(n);
}

}  // namespace chime::daemon
