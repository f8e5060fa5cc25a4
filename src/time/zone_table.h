// ZoneTable: a time zone's UTC offsets as a flat, immutable table of
// constant-offset segments.
//
// The cron engine asks "what is the UTC offset at instant t, and where does
// that offset start and end?" for every `Next()`. absl::TimeZone answers the
// first question in general; this table answers both with one binary search
// over a sorted array, which is what makes `Next()` cost tens of nanoseconds.
// It is built once per zone (on first use, from absl's tzdata reading) and
// shared by every schedule in that zone, so memory stays O(zones), not O(jobs).
//
// Example, Europe/Berlin around the 2026 spring-forward (2026-03-29 01:00:00Z):
//   Find(2026-03-29T00:59:59Z) -> {start: 2025-10-26T01:00Z, end:
//   2026-03-29T01:00Z,
//                                  offset: +3600, prev_offset: +7200}
//   Find(2026-03-29T01:00:00Z) -> {start: 2026-03-29T01:00Z, end:
//   2026-10-25T01:00Z,
//                                  offset: +7200, prev_offset: +3600}
// The wall times [02:00, 03:00) of that day belong to no segment (the gap); in
// autumn, the wall times [02:00, 03:00) belong to two consecutive segments (the
// repeated hour).
//
// Covers transitions from 1900 to 2400; outside that range the nearest
// segment's offset extends. Thread-safety: ForName/For are thread-safe; a
// ZoneTable is immutable and lives until exit.
#ifndef CHIME_SRC_TIME_ZONE_TABLE_H_
#define CHIME_SRC_TIME_ZONE_TABLE_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace chime::time {

class ZoneTable {
 public:
  static constexpr int64_t kMinSeconds = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max();

  // A half-open interval of instants [start, end) (Unix seconds) with one UTC
  // offset (seconds east of UTC). `prev_offset` is the offset of the segment
  // before it (equal to `offset` for the first segment), so a caller can tell a
  // spring-forward start (prev_offset < offset) from a fall-back start
  // (prev_offset > offset) and know the gap or repeated wall-time range.
  struct Segment {
    int64_t start;
    int64_t end;
    int32_t offset;
    int32_t prev_offset;
    int32_t next_offset;  // offset of the segment after it (== offset for the
                          // last one)
  };

  // The table for an IANA zone name ("Europe/Berlin", "UTC",
  // "America/New_York"). Returns NotFound with a message naming the zone when
  // tzdata does not know it. The pointer stays valid for the life of the
  // process.
  static absl::StatusOr<const ZoneTable*> ForName(absl::string_view name);

  // The table for UTC. Never fails.
  static const ZoneTable* Utc();

  // The segment containing instant `unix_seconds`. Inline: it is on the cron
  // hot path.
  Segment Find(int64_t unix_seconds) const {
    const size_t n = starts_.size();
    size_t i = 0;
    if (n > 1) {
      const int64_t b = unix_seconds >= index_base_
                            ? (unix_seconds - index_base_) >> kBucketShift
                            : -1;
      if (b >= 0 && b < static_cast<int64_t>(buckets_.size())) {
        i = buckets_[static_cast<size_t>(b)];
        while (i + 1 < n && starts_[i + 1] <= unix_seconds) ++i;
      } else {
        i = FindSlow(unix_seconds);
      }
    }
    Segment s;
    s.start = starts_[i];
    s.end = i + 1 < n ? starts_[i + 1] : kMaxSeconds;
    s.offset = offsets_[i];
    s.prev_offset = i > 0 ? offsets_[i - 1] : offsets_[i];
    s.next_offset = i + 1 < n ? offsets_[i + 1] : offsets_[i];
    return s;
  }

  const std::string& name() const { return name_; }
  const absl::TimeZone& zone() const { return zone_; }
  bool fixed_offset() const { return starts_.size() == 1; }
  size_t num_segments() const { return starts_.size(); }

 private:
  ZoneTable(std::string name, absl::TimeZone zone);
  // Binary search: the index of the last segment starting at or before
  // `unix_seconds`.
  size_t FindSlow(int64_t unix_seconds) const;

  std::string name_;
  absl::TimeZone zone_;
  // starts_[i] is the first instant of segment i; starts_[0] is kMinSeconds.
  // offsets_[i] is its offset. Parallel arrays keep the binary search on a
  // dense array of int64.
  std::vector<int64_t> starts_;
  std::vector<int32_t> offsets_;
  // buckets_[b] is the segment containing instant index_base_ + (b <<
  // kBucketShift); a lookup starts there and scans forward over the (rarely
  // more than one) transitions in the bucket.
  static constexpr int kBucketShift = 22;  // about 48.5 days
  int64_t index_base_ = 0;
  std::vector<uint32_t> buckets_;
};

}  // namespace chime::time

#endif  // CHIME_SRC_TIME_ZONE_TABLE_H_
