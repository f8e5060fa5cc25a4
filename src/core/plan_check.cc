// Plan::CheckInvariants: the Plan's bookkeeping checked from the outside of
// its operations (tests, and the driver in debug builds).
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "src/core/plan.h"
#include "src/core/plan_records.h"

namespace chime::core {

absl::Status Plan::CheckInvariants() const {
  size_t runs_in_jobs = 0;
  for (uint32_t slot = 0; slot < job_slots_.size(); ++slot) {
    const Job* job = job_slots_[slot].get();
    if (job == nullptr) continue;
    const std::string name = job->key.ToString();
    int not_held = 0;
    size_t held = 0;
    for (RunId id : job->runs) {
      auto it = runs_.find(id);
      if (it == runs_.end() || it->second->job_slot != slot) {
        return absl::InternalError(
            absl::StrCat("job ", name, " lists run ", id, ", which is ",
                         it == runs_.end() ? "unknown" : "another job's"));
      }
      it->second->held ? ++held : ++not_held;
    }
    runs_in_jobs += job->runs.size();
    if (not_held != job->active) {
      return absl::InternalError(absl::StrCat(
          "job ", name, " counts ", job->active, " active runs but has ",
          not_held, " unfinished runs that are not buffered"));
    }
    if (held != job->buffered().size()) {
      return absl::InternalError(
          absl::StrCat("job ", name, " buffers ", job->buffered().size(),
                       " runs but has ", held, " held runs"));
    }
    for (RunId id : job->buffered()) {
      auto it = runs_.find(id);
      if (it == runs_.end() || !it->second->held) {
        return absl::InternalError(absl::StrCat("job ", name, " buffers run ",
                                                id, ", which is not held"));
      }
    }
  }
  if (runs_in_jobs != runs_.size()) {
    return absl::InternalError(absl::StrCat(
        runs_.size(), " unfinished runs, but the jobs list ", runs_in_jobs));
  }
  for (const auto& [id, owned] : runs_) {
    const Run& run = *owned;
    const bool startable = (run.state == RunState::kPending && run.persisted) ||
                           run.state == RunState::kLost;
    const bool moving = run.held || run.in_queue || run.staged ||
                        run.timer_armed || run.unstage != UnstageWhy::kNone;
    if (startable && !moving) {
      return absl::InternalError(absl::StrCat(
          "run ", id, " (", FireOf(run).ToString(), ") is ",
          RunStateName(run.state),
          " with nothing to start it: not queued, staged, buffered or timed"));
    }
    if (run.state == RunState::kRetrying && !run.timer_armed) {
      return absl::InternalError(absl::StrCat("run ", id, " (",
                                              FireOf(run).ToString(),
                                              ") is retrying with no timer"));
    }
  }
  return absl::OkStatus();
}

}  // namespace chime::core
