#include "daemon/job_registry.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/base/thread_name.h"
#include "src/core/fire_source.h"
#include "src/core/packed_spec.h"

namespace chime::daemon {
namespace {

// Store calls made for the API wait this long at most.
MonoTime Deadline() { return RealClock::Get().MonoNow() + absl::Seconds(5); }

constexpr int kStartPage = 1000;

}  // namespace

std::function<void(absl::string_view, const JobKey&, const std::string&,
                   const std::string&)>
LogApiChanges(Logger& log) {
  return [&log](absl::string_view what, const JobKey& job,
                const std::string& who, const std::string& detail) {
    log.Info(what,
             {{"job", job.ToString()}, {"token", who}, {"detail", detail}});
  };
}

JobRegistry::JobRegistry(Store& store, Scheduler& scheduler, JobSync& files,
                         JobSync::MakeFunction make, exec::JobPolicy policy,
                         Logger& log)
    : store_(store),
      scheduler_(&scheduler),
      files_(&files),
      make_(std::move(make)),
      policy_(std::move(policy)),
      log_(log) {}

JobRegistry::JobRegistry(Store& store, exec::JobPolicy policy, Logger& log)
    : store_(store),
      scheduler_(nullptr),
      files_(nullptr),
      policy_(std::move(policy)),
      log_(log),
      started_(true),
      files_in_store_(true) {}

absl::StatusOr<JobSync::Report> JobRegistry::Start(
    std::vector<config::FileResult> files) {
  Exclusive lock(*this);
  // The store's jobs: the API's are put in force; those of job files are
  // checked against the files once they are applied.
  struct FileJob {
    JobKey key;
    std::string file;
  };
  std::vector<FileJob> from_files;
  int api_jobs = 0;
  for (JobId after = 0;;) {
    ASSIGN_OR_RETURN(JobPage page,
                     store_.LoadJobs(after, kStartPage, MonoTime::Infinite()));
    // Changes made after the first page was read are FollowStore's.
    if (after == 0) followed_revision_ = page.revision;
    for (JobRecord& record : page.jobs) {
      if (!record.spec.source_file.empty()) {
        from_files.push_back(
            {std::move(record.spec.key), std::move(record.spec.source_file)});
        continue;
      }
      RETURN_IF_ERROR(scheduler_->AddStoredJob(record, make_(record.spec)));
      ++api_jobs;
    }
    after = page.next_after;
    if (page.done) break;
  }
  if (api_jobs > 0) {
    log_.Info("jobs created through the API loaded",
              {{"jobs", int64_t{api_jobs}}});
  }
  absl::flat_hash_set<std::string> not_loaded;
  for (const config::FileResult& file : files) {
    if (!file.jobs.ok()) not_loaded.insert(file.path);
  }
  JobSync::Report report = files_->Apply(std::move(files));
  if (!from_files.empty()) {
    const absl::flat_hash_set<JobKey> in_force = files_->Keys();
    for (const FileJob& job : from_files) {
      if (in_force.contains(job.key)) continue;
      if (not_loaded.contains(job.file)) {
        log_.Warn("job not running: its file does not load",
                  {{"job", job.key.ToString()}, {"file", job.file}});
        continue;
      }
      absl::Status s = store_.DeleteJob(job.key, kAnyRevision, Deadline());
      if (!s.ok() && !absl::IsNotFound(s)) return s;
      log_.Info("job deleted: its file no longer defines it",
                {{"job", job.key.ToString()}, {"file", job.file}});
    }
  }
  return report;
}

JobSync::Report JobRegistry::ApplyFiles(std::vector<config::FileResult> files) {
  Exclusive lock(*this);
  files_in_store_ = false;
  return files_->Apply(std::move(files));
}

void JobRegistry::AcceptChanges() {
  absl::MutexLock lock(&mu_);
  started_ = true;
}

absl::Status JobRegistry::CheckStarted() const {
  if (started_) return absl::OkStatus();
  return absl::UnavailableError("the daemon is starting; try again");
}

absl::StatusOr<std::optional<JobRecord>> JobRegistry::ReadApiJob(
    const JobKey& key) {
  if (!files_in_store_) {
    // Every call returns once the scheduler's earlier writes are durable:
    // then the store says which jobs the files define.
    (void)scheduler_->NextFireTime(key);
    files_in_store_ = true;
  }
  absl::StatusOr<JobRecord> record = store_.GetJob(key, Deadline());
  if (absl::IsNotFound(record.status())) return std::nullopt;
  if (!record.ok()) return record.status();
  if (!record->spec.source_file.empty()) {
    // In force, or stored from a file that does not load now (a file that
    // no longer defines it had it deleted at start).
    return absl::FailedPreconditionError(
        absl::StrCat("job ", key.ToString(), " is defined by the job file ",
                     record->spec.source_file, "; change it there"));
  }
  return std::optional<JobRecord>(*std::move(record));
}

JobRegistry::Exclusive::Exclusive(JobRegistry& r) : r_(r) {
  r_.mu_.Lock();
  ++r_.exclusive_waiting_;
  r_.mu_.Await(absl::Condition(
      +[](JobRegistry* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu_) {
        return r->puts_in_flight_ == 0;
      },
      &r_));
  --r_.exclusive_waiting_;
}

JobRegistry::Exclusive::~Exclusive() { r_.mu_.Unlock(); }

JobRegistry::~JobRegistry() {
  std::vector<std::thread> writers;
  {
    absl::MutexLock lock(&queue_mu_);
    stopping_ = true;
    writers = std::move(writers_);
  }
  for (std::thread& w : writers) w.join();
}

void JobRegistry::PutAsync(JobSpec spec, int64_t expected_revision,
                           PutDone done) {
  spec.source_file.clear();
  if (absl::Status s = exec::CheckJobPolicy(policy_, spec); !s.ok())
    return done(s);
  {
    absl::MutexLock lock(&queue_mu_);
    if (!stopping_) {
      queue_.push_back(
          {std::move(spec), expected_revision, std::move(done), std::nullopt});
      while (writers_.size() < kWriters)
        writers_.push_back(
            base::NamedThread("chime-registry", [this] { WriteLoop(); }));
      return;
    }
  }
  done(absl::UnavailableError("the daemon is stopping"));  // not under a lock
}

std::vector<JobRegistry::PendingPut> JobRegistry::TakeBatch() {
  absl::MutexLock lock(&queue_mu_);
  // A put of a job under way waits for that batch, also when stopping.
  const auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
    if (stopping_ && queue_.empty()) return true;
    for (const PendingPut& p : queue_) {
      if (!under_way_.contains(p.spec.key)) return true;
    }
    return false;
  };
  queue_mu_.Await(absl::Condition(&ready));
  std::vector<PendingPut> batch, later;
  for (PendingPut& p : queue_) {
    // The first put of each job not under way; the rest keep their order.
    (under_way_.insert(p.spec.key).second ? batch : later)
        .push_back(std::move(p));
  }
  queue_.swap(later);
  return batch;
}

void JobRegistry::WriteLoop() {
  for (;;) {
    std::vector<PendingPut> batch = TakeBatch();
    if (batch.empty()) return;  // stopping, nothing queued
    PutBatch(batch);
    // The callers' callbacks answer their clients, outside the locks; what
    // they log is written at once.
    {
      Logger::Batch lines(log_);
      for (PendingPut& p : batch) p.done(*std::move(p.result));
    }
    absl::MutexLock lock(&queue_mu_);
    for (const PendingPut& p : batch) under_way_.erase(p.spec.key);
  }
}

void JobRegistry::PutBatch(std::vector<PendingPut>& batch) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](JobRegistry* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu_) {
        return r->exclusive_waiting_ == 0;
      },
      this));
  std::vector<JobWrite> writes;
  std::vector<PendingPut*> writers;
  std::vector<bool> created;
  // A batch of creations only, once the store has the job files' jobs, is
  // written without reading each job first: the store refuses a creation of
  // a job that exists (create_only), a file's included, and the batch is
  // then written again as any other, reading each job, which says precisely
  // why a put is refused and writes the others.
  const bool creations =
      started_ && files_in_store_ &&
      std::all_of(batch.begin(), batch.end(), [](const PendingPut& p) {
        return p.expected_revision == kNoRevision;
      });
  if (creations) {
    const absl::Time now = RealClock::Get().Now();
    for (PendingPut& p : batch) {
      const absl::Time watermark = core::FirstWatermark(p.spec, now);
      JobWrite& w = writes.emplace_back(
          JobWrite{std::move(p.spec), kNoRevision, watermark});
      w.create_only = true;
      writers.push_back(&p);
      created.push_back(true);
    }
    if (!absl::IsAborted(Commit(writes, writers, created))) return;
    writes.clear();
    writers.clear();
    created.clear();
  }
  for (PendingPut& put : batch) {
    PendingPut* p = &put;
    if (absl::Status s = CheckStarted(); !s.ok()) {
      p->result = s;
      continue;
    }
    absl::StatusOr<std::optional<JobRecord>> before = ReadApiJob(p->spec.key);
    if (!before.ok()) {
      p->result = before.status();
      continue;
    }
    // The precondition holds also for a put of the spec already stored
    // (which the store accepts whatever the expected revision).
    const int64_t revision =
        before->has_value() ? (*before)->revision : kNoRevision;
    if (p->expected_revision != kAnyRevision &&
        p->expected_revision != revision) {
      p->result = absl::AbortedError(absl::StrCat(
          "job ", p->spec.key.ToString(),
          before->has_value() ? absl::StrCat(" is at revision ", revision)
                              : std::string(" does not exist")));
      continue;
    }
    // As read: a change another node made since is a conflict. A new job
    // (or generation) is decided from now on, its watermark written with it
    // -- so the scheduler (this node's, or the one following the store) has
    // nothing to write before its first fire.
    const absl::Time watermark =
        core::FirstWatermark(p->spec, RealClock::Get().Now());
    writes.push_back(JobWrite{std::move(p->spec), revision, watermark});
    writers.push_back(p);
    created.push_back(!before->has_value());
  }
  if (writes.empty()) return;
  // Aborted: another node changed one of the jobs since it was read.
  if (absl::Status s = Commit(writes, writers, created); absl::IsAborted(s)) {
    for (PendingPut* p : writers) p->result = s;
  }
}

absl::Status JobRegistry::Commit(std::vector<JobWrite>& writes,
                                 const std::vector<PendingPut*>& writers,
                                 const std::vector<bool>& created) {
  // The commit, without mu_: the other writer prepares the next batch
  // meanwhile, and no other change begins (Exclusive) until this batch is in
  // force. Its jobs are in no other batch.
  ++puts_in_flight_;
  mu_.Unlock();
  absl::StatusOr<std::vector<JobRecord>> put =
      store_.PutJobs(writes, Deadline());
  mu_.Lock();
  for (size_t i = 0; i < writers.size() && put.ok(); ++i) {
    JobRecord& record = (*put)[i];
    absl::Status s;
    if (scheduler_ != nullptr) {
      Wrote(record.revision);
      s = scheduler_->AddStoredJob(record, make_(record.spec));
    }
    if (s.ok()) {
      writers[i]->result = PutResult{std::move(record), created[i]};
    } else {
      writers[i]->result = s;
    }
  }
  if (!put.ok() && !absl::IsAborted(put.status())) {
    for (PendingPut* p : writers) p->result = put.status();
  }
  --puts_in_flight_;
  // The specs were moved into `writes` (not copied); they go back to their
  // puts, whose keys are still in use and which a refused batch writes again.
  for (size_t i = 0; i < writers.size(); ++i)
    writers[i]->spec = std::move(writes[i].spec);
  return put.status();
}

absl::Status JobRegistry::Delete(const JobKey& key, int64_t expected_revision) {
  Exclusive lock(*this);
  RETURN_IF_ERROR(CheckStarted());
  ASSIGN_OR_RETURN(std::optional<JobRecord> record, ReadApiJob(key));
  if (!record.has_value())
    return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
  RETURN_IF_ERROR(store_.DeleteJob(
      key,
      expected_revision != kAnyRevision ? expected_revision : record->revision,
      Deadline()));
  // (Its tombstone's revision is not known here: FollowStore removes the job
  // again, which finds nothing.)
  if (scheduler_ == nullptr) return absl::OkStatus();
  absl::Status s = scheduler_->RemoveJob(key);
  if (!s.ok() && !absl::IsNotFound(s)) return s;
  return absl::OkStatus();
}

absl::StatusOr<JobRecord> JobRegistry::SetPaused(const JobKey& key,
                                                 bool paused) {
  Exclusive lock(*this);
  RETURN_IF_ERROR(CheckStarted());
  ASSIGN_OR_RETURN(std::optional<JobRecord> record, ReadApiJob(key));
  if (!record.has_value())
    return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
  if (scheduler_ == nullptr) {
    // A standby: the scheduling node follows the stored job.
    if (record->spec.paused == paused) return *record;
    JobWrite write{record->spec, record->revision};
    write.spec.paused = paused;
    ASSIGN_OR_RETURN(std::vector<JobRecord> put,
                     store_.PutJobs({&write, 1}, Deadline()));
    return std::move(put.front());
  }
  absl::Status s =
      paused ? scheduler_->PauseJob(key) : scheduler_->ResumeJob(key);
  if (absl::IsNotFound(s))
    return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
  RETURN_IF_ERROR(s);
  // Pause and resume return once the job's new state is durable.
  absl::StatusOr<JobRecord> after = store_.GetJob(key, Deadline());
  if (after.ok()) Wrote(after->revision);
  return after;
}

void JobRegistry::Wrote(int64_t revision) {
  if (revision > followed_revision_) own_revisions_.insert(revision);
}

absl::StatusOr<int> JobRegistry::FollowStore() {
  Exclusive lock(*this);
  if (scheduler_ == nullptr)
    return absl::FailedPreconditionError("a standby follows nothing");
  int applied = 0;
  std::optional<absl::flat_hash_set<JobKey>> file_jobs;
  for (;;) {
    ASSIGN_OR_RETURN(
        JobChanges page,
        store_.JobChangesSince(followed_revision_, kStartPage, Deadline()));
    for (const JobRecord& change : page.changes) {
      // Ours, or a job file's (this node's files are in force, whatever
      // another node wrote).
      if (own_revisions_.erase(change.revision) > 0) continue;
      if (!change.spec.source_file.empty()) continue;
      if (!file_jobs.has_value()) file_jobs = files_->Keys();
      if (file_jobs->contains(change.spec.key)) continue;
      const JobKey& key = change.spec.key;
      absl::Status s;
      if (change.deleted) {
        s = scheduler_->RemoveJob(key);
        if (absl::IsNotFound(s)) continue;  // never here, or ours
      } else {
        s = scheduler_->AddStoredJob(change, make_(change.spec));
      }
      if (absl::IsInvalidArgument(s)) {
        // Another node's binary accepted what this one refuses: the job
        // keeps its last version here, and later changes still come.
        log_.Warn("job changed on another node not put in force",
                  {{"job", key.ToString()},
                   {"revision", change.revision},
                   {"error", s.ToString()}});
        continue;
      }
      if (!s.ok()) return s;  // shutting down
      ++applied;
      log_.Info(change.deleted ? "job deleted on another node"
                               : "job changed on another node",
                {{"job", key.ToString()}, {"revision", change.revision}});
    }
    followed_revision_ = std::max(followed_revision_, page.revision);
    // Ours that a later change of the same job hid are passed too.
    own_revisions_.erase(own_revisions_.begin(),
                         own_revisions_.upper_bound(followed_revision_));
    if (page.changes.size() < kStartPage) break;  // else more may follow
  }
  return applied;
}

}  // namespace chime::daemon
