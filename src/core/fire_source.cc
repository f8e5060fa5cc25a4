#include "src/core/fire_source.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/core/job_validation.h"

namespace chime::core {
namespace {

// Jobs with the same trigger share one parsed Schedule (thousands of jobs on
// "0 * * * *" hold one copy, and parse it once). Keyed by everything the parse
// depends on; `H` fields depend on the job's identity, so such expressions are
// keyed by it too. Entries whose schedule no job uses any more are swept out
// as the cache grows.
class ScheduleCache {
 public:
  static ScheduleCache& Get() {
    static ScheduleCache* const cache = new ScheduleCache();
    return *cache;
  }

  std::shared_ptr<const cron::Schedule> Find(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second.lock();
  }

  void Put(std::string key, const std::shared_ptr<const cron::Schedule>& s) {
    absl::MutexLock lock(&mu_);
    entries_[std::move(key)] = s;
    if (entries_.size() >= sweep_at_) {
      absl::erase_if(entries_,
                     [](const auto& e) { return e.second.expired(); });
      sweep_at_ = std::max<size_t>(1024, 2 * entries_.size());
    }
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::weak_ptr<const cron::Schedule>> entries_
      ABSL_GUARDED_BY(mu_);
  size_t sweep_at_ ABSL_GUARDED_BY(mu_) = 1024;
};

std::string CacheKey(const Trigger& t, absl::string_view hash_key) {
  const bool hashed = t.expression.find('H') != std::string::npos;
  return absl::StrCat(t.expression, "\x1f", static_cast<int>(t.dialect), ",",
                      static_cast<int>(t.day_match), ",",
                      static_cast<int>(t.dst.gap), ",",
                      static_cast<int>(t.dst.repeat), "\x1f", t.zone, "\x1f",
                      hashed ? hash_key : "");
}

}  // namespace

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
  std::string cache_key = CacheKey(t, hash_key);
  source.schedule_ = ScheduleCache::Get().Find(cache_key);
  if (source.schedule_ != nullptr) return source;
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
  ScheduleCache::Get().Put(std::move(cache_key), source.schedule_);
  return source;
}

absl::StatusOr<FireSource> FireSource::Validate(const JobSpec& spec) {
  std::optional<absl::StatusOr<FireSource>> source;
  if (absl::Status s = ValidateJobSpec(spec,
                                       [&] {
                                         source = Create(spec);
                                         return source->status();
                                       });
      !s.ok()) {
    return s;
  }
  if (!source.has_value()) source = Create(spec);  // a one-shot trigger
  return *std::move(source);
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
