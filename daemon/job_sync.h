// JobSync: keeps the scheduler's jobs equal to what the job files say,
// applying each reload as a diff.
//
//   - a job whose spec is unchanged is not touched: its state, run history
//     and running attempts go on;
//   - a changed job is added again (Scheduler::AddJob replaces it): a changed
//     trigger starts a new generation, any other change keeps it;
//   - a job no longer in any file is removed (it stops; running attempts
//     finish);
//   - each job's source_file is set to the path of its file;
//   - a file that does not load (bad YAML, a bad field, a job id another file
//     already defines) is reported, and the version of that file loaded last
//     stays in force; a file deleted from the directory takes its jobs with
//     it.
//
// Job keys are unique across files: a file that defines a key an earlier file
// (by name) already defines is rejected as a whole, naming both places; the
// last version of it that loaded stays in force if it does not clash too.
//
// Memory: per job in force, its packed spec (one buffer with the scheduler's:
// core::PackedSpec shares equal specs) and where its file defines it -- the
// parsed files are not kept.
//
// Thread-safety: Apply and the accessors may be called from any thread; Apply
// calls are serialized.
#ifndef CHIME_DAEMON_JOB_SYNC_H_
#define CHIME_DAEMON_JOB_SYNC_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "daemon/logger.h"
#include "src/config/job_file.h"
#include "src/core/packed_spec.h"

namespace chime::daemon {

class JobSync {
 public:
  // The function that carries out the attempts of `spec` (from its executor;
  // it may be one function for many jobs, AttemptContext::Spec telling them
  // apart).
  using MakeFunction =
      std::function<std::shared_ptr<const JobFunction>(const JobSpec& spec)>;

  struct Report {
    int added = 0;
    int changed = 0;
    int removed = 0;
    int unchanged = 0;
    int files = 0;  // files whose jobs are in force (new or kept)
    // One message per file that did not load ("path:line:col: ...").
    std::vector<std::string> errors;
  };

  JobSync(Scheduler& scheduler, MakeFunction make, Logger& log);

  // Applies a load of the jobs directory (config::LoadJobDir's result). Each
  // change and each error is logged.
  Report Apply(std::vector<config::FileResult> files);

  // The errors of the last Apply (empty when every file loaded).
  std::vector<std::string> Errors() const;
  // Jobs in force.
  int NumJobs() const;
  // The keys of the jobs in force (a copy).
  absl::flat_hash_set<JobKey> Keys() const;

 private:
  // A job in force: its spec, packed (equal bytes = an unchanged job), and
  // where its file defines it.
  struct Entry {
    core::PackedSpec packed;
    int line = 0;
    int column = 0;
  };
  using Files = std::map<std::string, std::vector<Entry>>;
  // A job of a file version about to be put in force; `spec` points into a
  // newly loaded file (null for a version kept from before).
  struct Candidate {
    JobKey key;
    Entry entry;
    const JobSpec* spec = nullptr;
  };
  using Chosen = std::map<std::string, std::vector<Candidate>>;

  // The file versions to put in force: the new ones that loaded, the last
  // good ones of those that did not; clashing keys rejected.
  Chosen Choose(const std::vector<config::FileResult>& files, Report& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Diff(const Chosen& chosen, Report& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Scheduler& scheduler_;
  const MakeFunction make_;
  Logger& log_;
  mutable absl::Mutex mu_;
  Files in_force_ ABSL_GUARDED_BY(mu_);  // path -> its jobs
  // Jobs in force that the scheduler refused to add, and jobs in no file
  // that it refused to remove: the next Apply tries again.
  absl::flat_hash_set<JobKey> not_added_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<JobKey> not_removed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> errors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_JOB_SYNC_H_
