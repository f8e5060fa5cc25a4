#include "src/time/zone_table.h"

#include <algorithm>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/civil_time.h"
#include "src/time/civil.h"

namespace chime::time {
namespace {

int64_t CivilToSeconds(const absl::CivilSecond& c) {
  return SecondsFromCivil({static_cast<int32_t>(c.year()), c.month(), c.day(),
                           c.hour(), c.minute(), c.second()});
}

struct Registry {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, const ZoneTable*> tables ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry =
      new Registry;  // never destroyed: tables outlive every user
  return *registry;
}

}  // namespace

ZoneTable::ZoneTable(std::string name, absl::TimeZone zone)
    : name_(std::move(name)), zone_(zone) {
  const absl::Time first =
      absl::FromCivil(absl::CivilSecond(1900, 1, 1), absl::UTCTimeZone());
  const absl::Time last =
      absl::FromCivil(absl::CivilSecond(2400, 1, 2), absl::UTCTimeZone());
  starts_.push_back(kMinSeconds);
  offsets_.push_back(zone_.At(first).offset);
  absl::TimeZone::CivilTransition trans;
  absl::Time t = first;
  while (zone_.NextTransition(t, &trans)) {
    // trans.from is the wall time at the transition under the old offset.
    const int64_t instant = CivilToSeconds(trans.from) - offsets_.back();
    if (instant > absl::ToUnixSeconds(last)) break;
    const int32_t offset =
        static_cast<int32_t>(CivilToSeconds(trans.to) - instant);
    t = absl::FromUnixSeconds(instant);
    if (offset == offsets_.back())
      continue;  // only the abbreviation or isdst changed
    starts_.push_back(instant);
    offsets_.push_back(offset);
  }
  if (starts_.size() > 1) {
    index_base_ = absl::ToUnixSeconds(first);
    const int64_t count =
        ((absl::ToUnixSeconds(last) - index_base_) >> kBucketShift) + 1;
    buckets_.resize(static_cast<size_t>(count));
    size_t i = 0;
    for (int64_t b = 0; b < count; ++b) {
      const int64_t t = index_base_ + (b << kBucketShift);
      while (i + 1 < starts_.size() && starts_[i + 1] <= t) ++i;
      buckets_[static_cast<size_t>(b)] = static_cast<uint32_t>(i);
    }
  }
}

absl::StatusOr<const ZoneTable*> ZoneTable::ForName(absl::string_view name) {
  // Most processes use one or two zones, and schedules are parsed in bursts
  // (loading job files): a per-thread memo of the last answer avoids the
  // registry's lock on that path.
  thread_local const ZoneTable* last = nullptr;
  if (last != nullptr && last->name() == name) return last;
  Registry& registry = GetRegistry();
  {
    absl::ReaderMutexLock lock(&registry.mu);
    auto it = registry.tables.find(name);
    if (it != registry.tables.end()) return last = it->second;
  }
  absl::TimeZone zone;
  if (name.empty() || !absl::LoadTimeZone(std::string(name), &zone)) {
    return absl::NotFoundError(absl::StrCat(
        "unknown time zone \"", name,
        "\" (expected an IANA name such as \"Europe/Berlin\" or \"UTC\")"));
  }
  auto table =
      std::unique_ptr<ZoneTable>(new ZoneTable(std::string(name), zone));
  absl::MutexLock lock(&registry.mu);
  auto [it, inserted] =
      registry.tables.try_emplace(std::string(name), table.get());
  if (inserted)
    table.release();  // owned by the registry for the life of the process
  return last = it->second;
}

const ZoneTable* ZoneTable::Utc() {
  static const ZoneTable* utc = *ForName("UTC");
  return utc;
}

size_t ZoneTable::FindSlow(int64_t unix_seconds) const {
  return static_cast<size_t>(
             std::upper_bound(starts_.begin(), starts_.end(), unix_seconds) -
             starts_.begin()) -
         1;
}

}  // namespace chime::time
