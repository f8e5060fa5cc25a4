#include "src/core/fire_source.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/core/job_validation.h"

namespace chime::core {
namespace {

// Jobs with the same trigger share one parsed Schedule (thousands of jobs on
// "0 * * * *" hold one copy, and parse it once). Keyed by everything the parse
// depends on; `H` fields depend on the job's identity, so such expressions are
// keyed by it too.
//
// Bounded and direct-mapped: kSlots entries (256 KiB), each slot holding the
// last key put there. Where most expressions are distinct (spread-out
// schedules: one per job), an entry per expression would cost ~40 bytes a
// job and share nothing; where a few expressions serve many jobs, each of
// them sits in its slot and is shared. A key is entered with its schedule
// only when it is seen the second time in a row in its slot: the first time
// only the key is written, so that jobs of distinct expressions do not each
// replace a schedule in their slot (dropping a reference on a cold schedule
// was ~10% of an AddJob). A common expression is thus parsed twice, and
// shared from the second job on; a collision only costs another copy of a
// schedule. An entry does not keep its schedule alive (weak), though a dead
// schedule's memory stays until its slot is reused (make_shared: one
// allocation), at most kSlots of them.
//
// The key is kept as a 128-bit fingerprint of that text, not the text. Two
// 64-bit fingerprints, one of them seeded per process (absl::Hash), make a
// false match -- which would give a job another job's schedule --
// negligible (about 2^-128 per pair of distinct keys) and impossible to aim
// for from outside.
class ScheduleCache {
 public:
  using Fingerprint = std::pair<uint64_t, uint64_t>;

  static ScheduleCache& Get() {
    static ScheduleCache* const cache = new ScheduleCache();
    return *cache;
  }

  static Fingerprint FingerprintOf(absl::string_view key) {
    // FNV-1a, 64 bits, beside absl's seeded hash.
    uint64_t fnv = 0xcbf29ce484222325u;
    for (unsigned char c : key) fnv = (fnv ^ c) * 0x100000001b3u;
    return {absl::HashOf(key), fnv};
  }

  // The live schedule of `key`, or null; *seen says whether `key` is the one
  // in its slot (seen before, its schedule entered or not).
  std::shared_ptr<const cron::Schedule> Find(const Fingerprint& key,
                                             bool* seen) {
    absl::MutexLock lock(&mu_);
    const Entry& e = slots_[SlotOf(key)];
    *seen = e.key == key;
    return *seen ? e.schedule.lock() : nullptr;
  }

  // Enters `key` in its slot, with `s` if it was seen before (Find), else
  // the key alone.
  void Put(const Fingerprint& key, bool seen,
           const std::shared_ptr<const cron::Schedule>& s) {
    absl::MutexLock lock(&mu_);
    Entry& e = slots_[SlotOf(key)];
    if (seen) {
      e = Entry{key, s};
    } else {
      e.key = key;
      e.schedule.reset();  // touches no schedule unless one was entered
    }
  }

 private:
  static constexpr size_t kSlots = 8192;
  struct Entry {
    Fingerprint key{0, 0};
    std::weak_ptr<const cron::Schedule> schedule;
  };
  static size_t SlotOf(const Fingerprint& key) {
    return static_cast<size_t>(key.first) & (kSlots - 1);
  }

  absl::Mutex mu_;
  std::vector<Entry> slots_ ABSL_GUARDED_BY(mu_) = std::vector<Entry>(kSlots);
};

// `hash_key` is "" unless the expression has `H` fields. Written into a
// per-thread buffer, which the next call reuses.
absl::string_view CacheKey(const Trigger& t, absl::string_view hash_key) {
  thread_local std::string key;
  key.clear();
  absl::StrAppend(
      &key, t.expression, "\x1f", static_cast<int>(t.dialect), ",",
      static_cast<int>(t.day_match), ",", static_cast<int>(t.dst.gap), ",",
      static_cast<int>(t.dst.repeat), "\x1f", t.zone, "\x1f", hash_key);
  return key;
}

}  // namespace

absl::StatusOr<FireSource> FireSource::Create(const JobSpec& spec) {
  FireSource source;
  const Trigger& t = spec.trigger;
  const bool one_shot = t.kind == Trigger::Kind::kAt;
  if (one_shot || spec.start != absl::InfinitePast() ||
      spec.end != absl::InfiniteFuture()) {
    source.bounds_ = std::make_shared<const Bounds>(
        Bounds{.at = one_shot ? t.at : absl::InfinitePast(),
               .start = spec.start,
               .end = spec.end});
  }
  if (one_shot) return source;
  // Only `H` fields depend on the job's identity.
  const std::string hash_key = t.expression.find('H') != std::string::npos
                                   ? spec.key.ToString()
                                   : std::string();
  const ScheduleCache::Fingerprint cache_key =
      ScheduleCache::FingerprintOf(CacheKey(t, hash_key));
  bool seen = false;
  source.schedule_ = ScheduleCache::Get().Find(cache_key, &seen);
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
  ScheduleCache::Get().Put(cache_key, seen, source.schedule_);
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

const FireSource::Bounds& FireSource::bounds() const {
  static const Bounds* const kNone = new Bounds();
  return bounds_ == nullptr ? *kNone : *bounds_;
}

absl::Time FireSource::Next(absl::Time after) const {
  const Bounds& b = bounds();
  absl::Time t;
  if (schedule_ == nullptr) {
    t = b.at > after ? b.at : absl::InfiniteFuture();
    if (t < b.start) t = absl::InfiniteFuture();
  } else {
    // The first fire at or after the start is the first strictly after the
    // instant just before it.
    t = schedule_->Next(after >= b.start ? after
                                         : b.start - absl::Nanoseconds(1));
  }
  return t > b.end ? absl::InfiniteFuture() : t;
}

absl::Time FireSource::FirstAfterEnd() const {
  const Bounds& b = bounds();
  if (b.end == absl::InfiniteFuture()) return absl::InfiniteFuture();
  if (schedule_ == nullptr) return b.at > b.end ? b.at : absl::InfiniteFuture();
  return schedule_->Next(b.end);
}

absl::Time FireSource::Prev(absl::Time before) const {
  const Bounds& b = bounds();
  absl::Time t;
  if (schedule_ == nullptr) {
    t = b.at < before ? b.at : absl::InfinitePast();
    if (t > b.end) t = absl::InfinitePast();
  } else {
    t = schedule_->Prev(before <= b.end ? before
                                        : b.end + absl::Nanoseconds(1));
  }
  return t < b.start ? absl::InfinitePast() : t;
}

absl::Time FirstWatermark(const JobSpec& spec, absl::Time added) {
  if (spec.trigger.kind == Trigger::Kind::kAt && spec.trigger.at <= added)
    return spec.trigger.at - absl::Nanoseconds(1);
  return added;
}

}  // namespace chime::core
