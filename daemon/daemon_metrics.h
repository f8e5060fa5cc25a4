// DaemonMetrics: the daemon's Prometheus series, fed by the scheduler's hooks
// (on_run_event, on_store_write), its Stats() at scrape time, and the
// executors.
//
//   chime_fires_total{outcome="run"|"skipped"|"missed",reason}  counter
//   chime_runs_finished_total{state="succeeded"|"failed"|"cancelled"} counter
//   chime_runs_lost_total                                    counter
//   chime_retries_total, chime_attempt_timeouts_total        counter
//   chime_clock_steps_total                                  counter
//   chime_runs{namespace,state="pending"|"running"}          gauge
//   chime_jobs{state="active"|"paused"}                      gauge
//   chime_run_duration_seconds                               histogram
//   chime_schedule_lag_seconds (first start - scheduled time) histogram
//   chime_store_write_seconds{op}, chime_store_write_items{op} histogram
//   chime_store_write_errors_total{op}                       counter
//   chime_executor_errors_total{executor,kind}               counter
//   chime_job_file_errors                                    gauge
//   chime_history_deleted_total{kind="runs"|"missed"}        counter
//
// Labels are bounded: reasons, states, ops and error kinds are fixed sets;
// namespaces are few by design (teams, tenants); no job names (a million jobs
// would be a million series).
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_DAEMON_DAEMON_METRICS_H_
#define CHIME_DAEMON_DAEMON_METRICS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "chime/scheduler.h"
#include "src/metrics/registry.h"

namespace chime::daemon {

// chime_clock_offset_seconds, from `offset` at every scrape (no sample while
// it gives nothing): the scheduler's and a standby's /metrics.
absl::Status AddClockOffsetGauge(
    metrics::Registry& r,
    std::function<std::optional<absl::Duration>()> offset);

class DaemonMetrics {
 public:
  // `stats` is called at each scrape (Scheduler::Stats); `file_errors` too.
  static absl::StatusOr<std::unique_ptr<DaemonMetrics>> Create(
      std::function<absl::StatusOr<SchedulerStats>()> stats,
      std::function<int()> file_errors);

  void OnRunEvent(const RunEvent& event);
  void OnStoreWrite(const StoreWrite& write);
  // An attempt that failed before its target could do anything (spawn
  // failure, connection refused, TLS, ...): `executor` "shell"|"http", `kind`
  // a short fixed word ("not_found", "connect", ...).
  void OnExecutorError(absl::string_view executor, absl::string_view kind);

  // Retention deleted this many finished runs and missed records.
  void OnHistoryPruned(int64_t runs, int64_t missed);

  std::string Render() const { return registry_.Render(); }

 private:
  DaemonMetrics() = default;
  absl::Status Register(std::function<absl::StatusOr<SchedulerStats>()> stats,
                        std::function<int()> file_errors);

  metrics::Registry registry_;
  metrics::CounterFamily* lost_ = nullptr;
  metrics::CounterFamily* executor_errors_ = nullptr;
  metrics::CounterFamily* store_errors_ = nullptr;
  metrics::CounterFamily* pruned_ = nullptr;
  metrics::HistogramFamily* duration_ = nullptr;
  metrics::HistogramFamily* lag_ = nullptr;
  metrics::HistogramFamily* store_latency_ = nullptr;
  metrics::HistogramFamily* store_items_ = nullptr;

  absl::Mutex mu_;
  // Runs running now: when their current attempt began (for the duration).
  absl::flat_hash_map<uint64_t, absl::Time> started_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_DAEMON_METRICS_H_
