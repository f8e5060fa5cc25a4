// PgJobWatch: PostgresStore::WatchJobs's hint. One connection of its own
// LISTENs to channel chime_jobs, which every committed job change notifies
// (schema migration 2); a thread calls `changed` after each notification, and
// once after every (re)connection -- changes may have been made while no
// connection listened. A lost connection is opened again every second.
//
// Thread-safety: `changed` runs on the watch's thread; the destructor stops
// it (within about a second) and may be called from any other thread.
#ifndef CHIME_SRC_STORE_PG_JOB_WATCH_H_
#define CHIME_SRC_STORE_PG_JOB_WATCH_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "chime/clock.h"
#include "chime/store.h"

namespace chime::store {

class PgJobWatch final : public Store::JobWatch {
 public:
  // `clock` outlives the watch.
  PgJobWatch(std::string conninfo, Clock& clock, std::function<void()> changed);
  ~PgJobWatch() override;

 private:
  void Run();
  // Waits `d` unless stopped; whether to go on.
  bool Pause(absl::Duration d);

  const std::string conninfo_;
  Clock& clock_;
  const std::function<void()> changed_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_PG_JOB_WATCH_H_
