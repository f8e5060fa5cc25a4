#include "src/core/fire_source.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

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
// Bounded and direct-mapped: kSlots slots, each holding the last key seen
// there. Where most expressions are distinct (spread-out schedules: one per
// job), an entry per expression would cost ~40 bytes a job and share
// nothing; where a few expressions serve many jobs, each of them sits in its
// slot and is shared. A key is entered with its schedule only when it is
// seen the second time in a row in its slot: the first time only a 32-bit
// tag of it is written, so that jobs of distinct expressions touch nothing
// but a small hot array of tags (16 KiB; the full table, 128 KiB, missed the
// caches on every add of a distinct expression: ~12% of an AddJob) and do
// not each replace a schedule in their slot (dropping a reference on a cold
// schedule was ~10% of an AddJob). A common expression is thus parsed twice,
// and shared from the second job on; a collision (or a false tag match, one
// in 2^32) only costs another copy of a schedule. An entry does not keep its
// schedule alive (weak), though a dead schedule's memory stays until its
// entry is replaced (make_shared: one allocation), at most kSlots of them.
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
    // A multiply-xorshift over 8-byte words, beside absl's seeded hash.
    uint64_t h = 0x9E3779B97F4A7C15u ^ key.size();
    auto mix = [&h](uint64_t word) {
      h = (h ^ word) * 0xFF51AFD7ED558CCDu;
      h ^= h >> 32;
    };
    size_t i = 0;
    for (; i + 8 <= key.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, key.data() + i, 8);
      mix(word);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, key.data() + i, key.size() - i);
    mix(tail);
    h = (h ^ (h >> 29)) * 0xC4CEB9FE1A85EC53u;
    return {absl::HashOf(key), h ^ (h >> 32)};
  }

  // The live schedule of `key`, or null; *seen says whether `key` was the
  // one seen last in its slot (its schedule entered or not). If it was not,
  // it is now, without a schedule (Put enters one once it is seen again):
  // one lock, and one hot tag, for the common case of a distinct expression.
  std::shared_ptr<const cron::Schedule> FindOrMark(const Fingerprint& key,
                                                   bool* seen) {
    const size_t slot = SlotOf(key);
    const uint32_t tag = TagOf(key);
    absl::MutexLock lock(&mu_);
    *seen = tags_[slot] == tag;
    if (!*seen) {
      tags_[slot] = tag;
      return nullptr;
    }
    const Entry& e = entries_[slot];
    return e.key == key ? e.schedule.lock() : nullptr;
  }

  // Enters `s` as the schedule of `key`, which FindOrMark found seen.
  void Put(const Fingerprint& key,
           const std::shared_ptr<const cron::Schedule>& s) {
    const size_t slot = SlotOf(key);
    absl::MutexLock lock(&mu_);
    tags_[slot] = TagOf(key);
    entries_[slot] = Entry{key, s};
  }

 private:
  static constexpr size_t kSlots = 4096;
  struct Entry {
    Fingerprint key{0, 0};
    std::weak_ptr<const cron::Schedule> schedule;
  };
  static size_t SlotOf(const Fingerprint& key) {
    return static_cast<size_t>(key.first) & (kSlots - 1);
  }
  static uint32_t TagOf(const Fingerprint& key) {
    return static_cast<uint32_t>(key.second);
  }

  absl::Mutex mu_;
  std::array<uint32_t, kSlots> tags_ ABSL_GUARDED_BY(mu_) = {};
  std::array<Entry, kSlots> entries_ ABSL_GUARDED_BY(mu_);
};

// `hash_key` is "" unless the expression has `H` fields. Written into a
// per-thread buffer, which the next call reuses.
absl::string_view CacheKey(const Trigger& t, absl::string_view hash_key) {
  thread_local std::string key;
  key.clear();
  key.append(t.expression);
  // The enums as one byte each: fixed width, so the key stays unambiguous.
  const char enums[] = {'\x1f',
                        static_cast<char>(t.dialect),
                        static_cast<char>(t.day_match),
                        static_cast<char>(t.dst.gap),
                        static_cast<char>(t.dst.repeat),
                        '\x1f'};
  key.append(enums, sizeof(enums));
  key.append(t.zone);
  key.push_back('\x1f');
  key.append(hash_key.data(), hash_key.size());
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
  source.schedule_ = ScheduleCache::Get().FindOrMark(cache_key, &seen);
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
  if (seen) ScheduleCache::Get().Put(cache_key, source.schedule_);
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
