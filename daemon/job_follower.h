// JobFollower: on the scheduling node of a store that several daemons share
// (docs/cluster.md), puts in force the job changes other nodes make through
// their API (JobRegistry::FollowStore): every `poll` -- the guarantee -- and
// at once after Hint(), which the store's change notification calls
// (Store::WatchJobs; PostgreSQL LISTEN/NOTIFY).
//
// An error (the store unreachable) is logged once until a pass succeeds
// again; the next pass reads the same changes again.
//
// Thread-safety: Hint and Stop may be called from any thread; the passes run
// on the follower's own thread.
#ifndef CHIME_DAEMON_JOB_FOLLOWER_H_
#define CHIME_DAEMON_JOB_FOLLOWER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/time/time.h"
#include "daemon/job_registry.h"
#include "daemon/logger.h"

namespace chime::daemon {

class JobFollower {
 public:
  // `registry` and `log` outlive the follower.
  JobFollower(JobRegistry& registry, Logger& log, absl::Duration poll);
  ~JobFollower();  // Stop()
  JobFollower(const JobFollower&) = delete;
  JobFollower& operator=(const JobFollower&) = delete;

  // A change may be waiting: the next pass starts now.
  void Hint();
  // Returns once the thread has exited (a pass going on ends first).
  void Stop();

 private:
  void Loop();

  JobRegistry& registry_;
  Logger& log_;
  const absl::Duration poll_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool hinted_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_JOB_FOLLOWER_H_
