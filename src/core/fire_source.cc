#include "src/core/fire_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace chime::core {

absl::StatusOr<FireSource> FireSource::Create(const JobSpec& spec) {
  FireSource source;
  source.start_ = spec.start;
  source.end_ = spec.end;
  const Trigger& t = spec.trigger;
  if (t.kind == Trigger::Kind::kAt) {
    source.at_ = t.at;
    return source;
  }
  const std::string hash_key = spec.key.ToString();
  auto schedule = cron::Schedule::Parse(t.expression, {.dialect = t.dialect,
                                                       .day_match = t.day_match,
                                                       .zone = t.zone,
                                                       .hash_key = hash_key,
                                                       .dst = t.dst});
  if (!schedule.ok()) {
    return absl::Status(
        schedule.status().code(),
        absl::StrCat("trigger.schedule: ", schedule.status().message()));
  }
  source.schedule_ =
      std::make_shared<const cron::Schedule>(*std::move(schedule));
  return source;
}

absl::Time FireSource::Next(absl::Time after) const {
  absl::Time t;
  if (schedule_ == nullptr) {
    t = at_ > after ? at_ : absl::InfiniteFuture();
    if (t < start_) t = absl::InfiniteFuture();
  } else {
    // The first fire at or after start_ is the first strictly after the instant
    // just before it.
    t = schedule_->Next(after >= start_ ? after
                                        : start_ - absl::Nanoseconds(1));
  }
  return t > end_ ? absl::InfiniteFuture() : t;
}

absl::Time FireSource::Prev(absl::Time before) const {
  absl::Time t;
  if (schedule_ == nullptr) {
    t = at_ < before ? at_ : absl::InfinitePast();
    if (t > end_) t = absl::InfinitePast();
  } else {
    t = schedule_->Prev(before <= end_ ? before : end_ + absl::Nanoseconds(1));
  }
  return t < start_ ? absl::InfinitePast() : t;
}

}  // namespace chime::core
