// FireSource: the scheduled times of one job -- its trigger clipped to its
// start and end dates.
//
// A job's fires come from a cron or `@every` schedule (chime/cron.h) or a
// one-shot time. The core only ever asks two questions, "the first fire
// strictly after t" and "the last fire strictly before t", so every trigger
// type goes through the same misfire and overlap logic.
//
// Thread-safety: immutable after Create; const methods may be called
// concurrently.
#ifndef CHIME_SRC_CORE_FIRE_SOURCE_H_
#define CHIME_SRC_CORE_FIRE_SOURCE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "chime/job.h"

namespace chime::core {

class FireSource {
 public:
  // Parses the spec's trigger. `H` fields are seeded with the job's key, so
  // they are stable across restarts and differ between jobs. InvalidArgument
  // names the field, as ValidateJobSpec does.
  static absl::StatusOr<FireSource> Create(const JobSpec& spec);
  // ValidateJobSpec(spec), then Create(spec), parsing the trigger once.
  static absl::StatusOr<FireSource> Validate(const JobSpec& spec);

  // First fire time strictly after `after`, or absl::InfiniteFuture().
  absl::Time Next(absl::Time after) const;
  // Last fire time strictly before `before`, or absl::InfinitePast().
  absl::Time Prev(absl::Time before) const;
  // The first time the trigger would fire after the end date, had the job no
  // end: when the job is seen to have ended (MissReason::kEnded).
  // absl::InfiniteFuture() if the job has no end date or its trigger has no
  // fire after it.
  absl::Time FirstAfterEnd() const;

  // The parsed schedule, or nullptr for a one-shot trigger.
  const cron::Schedule* schedule() const { return schedule_.get(); }

 private:
  // A one-shot trigger's time and the start and end dates: apart, and only
  // when set, as most jobs have none (a daemon keeps one source per job).
  struct Bounds {
    absl::Time at = absl::InfinitePast();
    absl::Time start = absl::InfinitePast();
    absl::Time end = absl::InfiniteFuture();
  };
  const Bounds& bounds() const;

  std::shared_ptr<const cron::Schedule> schedule_;
  std::shared_ptr<const Bounds> bounds_;  // null: the defaults
};

// The watermark of a job (or a new generation of one) added at `added`: its
// fires after that are decided -- and a one-shot time that has already
// passed is due at once (the misfire policy decides whether it still runs),
// never silently dropped.
absl::Time FirstWatermark(const JobSpec& spec, absl::Time added);

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_FIRE_SOURCE_H_
