// JobRegistry: which definition of each job is in force -- a job file's
// (through JobSync) or one made through the REST API -- and the one place
// that changes them, so that a reload of the job files and a change through
// the API never interleave.
//
//   - a job a job file defines belongs to the file (JobSpec::source_file is
//     its path): the API may trigger it, but changing, pausing or deleting it
//     is refused (FailedPrecondition naming the file);
//   - a job created through the API (source_file "") must pass the daemon's
//     api_jobs policy (exec/job_policy.h; PermissionDenied naming the field),
//     is written to the store before it is put in force, and is put in force
//     again at every start;
//   - a job file that comes to define a job created through the API takes it
//     over (the file wins, now and at every start);
//   - at start, a job the store has from a job file that no longer defines it
//     (edited or removed while the daemon was down) is deleted from the store;
//     the jobs of a file that exists but does not load stay in the store, not
//     running, until it loads again.
//
// On several nodes sharing a store (docs/cluster.md) every node has one:
//   - the scheduling node's puts changes in force in its scheduler, and
//     follows the store (FollowStore) for the changes other nodes made;
//   - a standby's (the constructor without a scheduler) writes its changes
//     to the store only, for the scheduling node to follow.
// Each put checks the job's revision as it read it (Aborted if another node
// changed it meanwhile).
//
// Changes are durable before they are answered. Puts are written by the
// registry's own threads (started at the first put), and the puts that
// arrive while a batch is being written are written together: one store
// transaction per batch (group commit), so many clients creating jobs at once
// do not queue behind one fsync each, and no caller's thread waits for the
// commit (PutAsync). Two batches may be under way at once -- one prepared
// (checked, read) while the other commits -- so the store's next commit
// follows its last without waiting for the registry; a job is in at most one
// of them (a put of a job whose put is under way waits for the next batch),
// and every other change waits until no batch is between its store write and
// its scheduler update, so that it finds the two agreeing.
//
// Thread-safety: every method may be called from any thread; they are
// serialized (a batch of puts counts as one).
#ifndef CHIME_DAEMON_JOB_REGISTRY_H_
#define CHIME_DAEMON_JOB_REGISTRY_H_

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "daemon/job_sync.h"
#include "daemon/logger.h"
#include "src/api/routes.h"
#include "src/config/job_file.h"
#include "src/exec/job_policy.h"

namespace chime::daemon {

// ApiDeps::on_change for a node's API: logs each change with the token's
// name ("job created", job, token, detail).
std::function<void(absl::string_view, const JobKey&, const std::string&,
                   const std::string&)>
LogApiChanges(Logger& log);

class JobRegistry final : public api::JobDefinitions {
 public:
  // All outlive the registry. `make` builds a job's function (as for
  // JobSync); `policy` limits what jobs put through the API may do.
  JobRegistry(Store& store, Scheduler& scheduler, JobSync& files,
              JobSync::MakeFunction make, exec::JobPolicy policy, Logger& log);
  // A standby's: changes are written to the store only, and accepted at
  // once (no Start).
  JobRegistry(Store& store, exec::JobPolicy policy, Logger& log);
  // Writes the puts already queued, then joins the registry's thread.
  ~JobRegistry() override;

  // Once, before the scheduler starts: puts the API's jobs from the store in
  // force, applies `files` (a load of the jobs directory), then deletes the
  // store's jobs of files that no longer define them.
  absl::StatusOr<JobSync::Report> Start(std::vector<config::FileResult> files);
  // Once the scheduler has started: API changes are refused (Unavailable)
  // until then.
  void AcceptChanges();
  // A reload of the jobs directory (JobSync::Apply).
  JobSync::Report ApplyFiles(std::vector<config::FileResult> files);

  // api::JobDefinitions. Each is done (returns, or calls `done`) once the
  // change is durable in the store and in force in the scheduler. PutAsync's
  // `done` runs on one of the registry's threads.
  void PutAsync(JobSpec spec, int64_t expected_revision, PutDone done) override;
  absl::Status Delete(const JobKey& key, int64_t expected_revision) override;
  absl::StatusOr<JobRecord> SetPaused(const JobKey& key, bool paused) override;

  // The scheduling node's, after Start: puts in force the changes to the
  // API's jobs that other nodes wrote to the store since the last call (the
  // first: since Start read the store), in the order they were made; returns
  // how many. Its own changes are not applied again; a job a job file
  // defines here is the file's (a change made elsewhere meanwhile is
  // ignored); a change the scheduler refuses as invalid (another node's
  // binary accepted it) is logged and passed over. On an error reading the
  // store the next call reads the same changes again.
  absl::StatusOr<int> FollowStore();

 private:
  // A put waiting for its batch.
  struct PendingPut {
    JobSpec spec;
    int64_t expected_revision;
    PutDone done;
    std::optional<absl::StatusOr<PutResult>> result;
  };
  // Each of the registry's kWriters threads: writes the queued puts, a batch
  // at a time, until the destructor and nothing is queued.
  void WriteLoop();
  // Takes the queued puts of jobs not under way (the first of each job),
  // marking their jobs under way; waits for one unless stopping. Empty:
  // stopping, and nothing is queued.
  std::vector<PendingPut> TakeBatch();
  // Writes `batch` (distinct keys), setting each item's result.
  void PutBatch(std::vector<PendingPut>& batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Writes `writes` (of `writers`, each `created` or not) in one store
  // transaction, released from mu_ meanwhile, and puts them in force; sets
  // each writer's result -- unless the store said Aborted (nothing was
  // written), which is returned for the caller to decide. The writes' specs
  // were moved from their writers; Commit moves them back.
  absl::Status Commit(std::vector<JobWrite>& writes,
                      const std::vector<PendingPut*>& writers,
                      const std::vector<bool>& created)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // mu_, once no batch of puts is between its store write and its scheduler
  // update; batches not yet begun wait meanwhile.
  class ABSL_SCOPED_LOCKABLE Exclusive {
   public:
    explicit Exclusive(JobRegistry& r) ABSL_EXCLUSIVE_LOCK_FUNCTION(r.mu_);
    ~Exclusive() ABSL_UNLOCK_FUNCTION();

   private:
    JobRegistry& r_;
  };
  // The store's record of `key` (nullopt if none), once the store has every
  // job file's jobs; FailedPrecondition, naming the file, for a job a job
  // file defines.
  absl::StatusOr<std::optional<JobRecord>> ReadApiJob(const JobKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckStarted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Notes a change this registry wrote, for FollowStore to pass over.
  void Wrote(int64_t revision) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store& store_;
  Scheduler* const scheduler_;  // null on a standby
  JobSync* const files_;        // null on a standby
  const JobSync::MakeFunction make_;
  const exec::JobPolicy policy_;
  Logger& log_;
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // The scheduler writes the job files' jobs to the store behind
  // ApplyFiles; false until a barrier saw them durable.
  bool files_in_store_ ABSL_GUARDED_BY(mu_) = false;
  // The store revision FollowStore has read up to, and the revisions of the
  // changes this registry wrote after it (a few: each is dropped once read).
  int64_t followed_revision_ ABSL_GUARDED_BY(mu_) = 0;
  absl::btree_set<int64_t> own_revisions_ ABSL_GUARDED_BY(mu_);
  // Batches between their checks and their scheduler update, and changes
  // waiting for none to be (Exclusive).
  int puts_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int exclusive_waiting_ ABSL_GUARDED_BY(mu_) = 0;

  // Puts waiting for a batch, the jobs of the batches under way, and the
  // threads that write them.
  static constexpr int kWriters = 2;
  absl::Mutex queue_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::vector<PendingPut> queue_ ABSL_GUARDED_BY(queue_mu_);
  absl::flat_hash_set<JobKey> under_way_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::vector<std::thread> writers_ ABSL_GUARDED_BY(queue_mu_);
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_JOB_REGISTRY_H_
