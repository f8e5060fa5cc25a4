#include "daemon/job_follower.h"

#include <chrono>

#include "src/base/thread_name.h"

namespace chime::daemon {

JobFollower::JobFollower(JobRegistry& registry, Logger& log,
                         absl::Duration poll)
    : registry_(registry), log_(log), poll_(poll) {
  thread_ = base::NamedThread("chime-follower", [this] { Loop(); });
}

JobFollower::~JobFollower() { Stop(); }

void JobFollower::Hint() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    hinted_ = true;
  }
  cv_.notify_one();
}

void JobFollower::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void JobFollower::Loop() {
  bool failing = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    // steady_clock: a wall-clock step neither stalls nor hurries the poll.
    cv_.wait_until(
        lock,
        std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(poll_),
        [this] { return stop_ || hinted_; });
    if (stop_) break;
    hinted_ = false;
    lock.unlock();
    absl::StatusOr<int> applied = registry_.FollowStore();
    if (!applied.ok() && !failing) {
      log_.Warn("job changes from other nodes not read; trying again",
                {{"error", applied.status().ToString()}});
    } else if (applied.ok() && failing) {
      log_.Info("job changes from other nodes read again");
    }
    failing = !applied.ok();
    lock.lock();
  }
}

}  // namespace chime::daemon
