#include "src/store/pg_job_watch.h"

#include <chrono>
#include <memory>
#include <utility>

#include "src/base/thread_name.h"
#include "src/store/pg_conn.h"

namespace chime::store {
namespace {

// How long a wait for notifications lasts before the thread looks at
// whether it should stop; and the pause before connecting again.
constexpr absl::Duration kSlice = absl::Milliseconds(500);
constexpr absl::Duration kReconnect = absl::Seconds(1);

}  // namespace

PgJobWatch::PgJobWatch(std::string conninfo, Clock& clock,
                       std::function<void()> changed)
    : conninfo_(std::move(conninfo)),
      clock_(clock),
      changed_(std::move(changed)) {
  thread_ = base::NamedThread("chime-pgwatch", [this] { Run(); });
}

PgJobWatch::~PgJobWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool PgJobWatch::Pause(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, absl::ToChronoNanoseconds(d), [this] { return stop_; });
  return !stop_;
}

void PgJobWatch::Run() {
  while (Pause(absl::ZeroDuration())) {
    absl::StatusOr<std::unique_ptr<PgConn>> conn =
        PgConn::Connect(conninfo_, clock_);
    if (!conn.ok() ||
        !(*conn)
             ->Exec("LISTEN chime_jobs", clock_.MonoNow() + absl::Seconds(10))
             .ok()) {
      if (!Pause(kReconnect)) return;
      continue;
    }
    changed_();  // whatever happened while no connection listened
    while (Pause(absl::ZeroDuration())) {
      absl::StatusOr<bool> any = (*conn)->AwaitNotifications(kSlice);
      if (!any.ok()) break;
      if (*any) changed_();
    }
    if (!Pause(kReconnect)) return;
  }
}

}  // namespace chime::store
