// libFuzzer target for the cron engine: Schedule::Parse on arbitrary bytes
// and, on success, the invariants of Next and Prev that hold for every
// schedule, checked against absl's own time-zone answers rather than against
// the engine's ZoneTable.
//
// The invariants, for the instant t an input decodes to (cron_fuzz_input.h),
// with n = Next(t) and p = Prev(t):
//  1. n > t and p < t; fire times are whole seconds (@every has its own
//     checks, see 6) in the engine's years; Next(n) > n and Prev(p) < p.
//  2. Next and Prev describe one set of fire times: Prev(n) is t or p, and
//     Next(p) is t or n (t may itself be a fire time).
//  3. A fire time's wall time matches the fields, except a fire at a
//     spring-forward transition, which is legitimate for a fixed-hour
//     schedule with GapPolicy::kRunAtTransition when a wall time inside that
//     gap matches. (A gap-fired instant need not match.)
//  4. A fixed-hour schedule with RepeatPolicy::kOnce never fires in the
//     second pass of a repeated wall time. With kTwice, or with a wildcard
//     hour, a fire in the first pass is followed by one in the second.
//  5. When n - t is short, no instant strictly between t and n has a wall
//     time the schedule should have fired at: nothing is skipped.
//  6. @every: n and p lie on the grid anchor + k * period inside the
//     engine's years, one period apart (two if t is on the grid), and agree
//     as in 2.
// A violated invariant prints the input and aborts, which libFuzzer reports
// as a crash and saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "tests/fuzz/cron_fuzz_input.h"

namespace chime::fuzz {
namespace {

using cron::Schedule;

[[noreturn]] void Fail(const char* what, const FuzzInput& in, absl::Time a,
                       absl::Time b) {
  std::fprintf(stderr,
               "cron_fuzzer: invariant violated: %s\n"
               "  expr=\"%s\" zone=%s hash_key=\"%s\"\n"
               "  dialect=%d day_match=%d gap=%d repeat=%d\n"
               "  t=%s\n  a=%s\n  b=%s\n",
               what, in.expr.c_str(), in.zone.c_str(), in.hash_key.c_str(),
               static_cast<int>(in.options.dialect),
               static_cast<int>(in.options.day_match),
               static_cast<int>(in.options.dst.gap),
               static_cast<int>(in.options.dst.repeat),
               absl::FormatTime(in.instant).c_str(),
               absl::FormatTime(a).c_str(), absl::FormatTime(b).c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, what, a, b)   \
  do {                                 \
    if (!(cond)) Fail(what, in, a, b); \
  } while (0)

bool WholeSecond(absl::Time t) {
  return absl::FromUnixSeconds(absl::ToUnixSeconds(t)) == t;
}

// Whether the schedule should fire at instant `at` by invariants 3 and 4: its
// wall time matches and it is not a skipped second pass. Gap fires are not
// considered (callers handle them).
bool ShouldFireAt(const Schedule& s, const absl::TimeZone& zone,
                  absl::Time at) {
  const absl::TimeZone::CivilInfo info = zone.At(at);
  if (!s.Matches(info.cs)) return false;
  if (s.hour_is_wildcard() ||
      s.dst_policy().repeat == cron::RepeatPolicy::kTwice) {
    return true;
  }
  const absl::TimeZone::TimeInfo t = zone.At(info.cs);
  return !(t.kind == absl::TimeZone::TimeInfo::REPEATED && at == t.post &&
           t.pre != t.post);
}

// Whether `n` is a legitimate fire at a spring-forward transition (invariant
// 3's exception).
bool IsGapFire(const Schedule& s, const absl::TimeZone& zone, absl::Time n) {
  if (s.hour_is_wildcard() ||
      s.dst_policy().gap != cron::GapPolicy::kRunAtTransition) {
    return false;
  }
  const int before = zone.At(n - absl::Seconds(1)).offset;
  const int after = zone.At(n).offset;
  if (after <= before) return false;
  // The wall times that never occurred: [n + before, n + after).
  const absl::CivilSecond first = absl::CivilSecond(1970, 1, 1, 0, 0, 0) +
                                  (absl::ToUnixSeconds(n) + before);
  const int gap = after - before;
  if (gap > 2 * 86400) return true;  // too long to scan; accept
  for (int k = 0; k < gap; ++k) {
    if (s.Matches(first + k)) return true;
  }
  return false;
}

// A fire time is a wall time in 1970-2399, at most 26 hours from UTC.
const absl::Time kEarliestFire =
    absl::FromCivil(absl::CivilDay(1969, 12, 30), absl::UTCTimeZone());
const absl::Time kLatestFire =
    absl::FromCivil(absl::CivilDay(2400, 1, 3), absl::UTCTimeZone());

// @every: the fire times are anchor + k * period inside the engine's years
// (taken in UTC here, with a few days of slack at either end).
void CheckEvery(const Schedule& s, const FuzzInput& in) {
  const absl::Time t = in.instant;
  const absl::Duration period = s.interval();
  const absl::Time n = s.Next(t);
  const absl::Time p = s.Prev(t);
  auto on_grid = [&](absl::Time x) {
    absl::Duration rem;
    absl::IDivDuration(x - absl::UnixEpoch(), period, &rem);
    return rem == absl::ZeroDuration();
  };
  if (n == absl::InfiniteFuture()) {
    FUZZ_CHECK(t + period > kLatestFire - absl::Hours(4 * 24),
               "@every: ends too early", n, p);
  } else {
    FUZZ_CHECK(n > t && on_grid(n) && n > kEarliestFire && n < kLatestFire,
               "@every: Next(t) not after t on the grid in range", n, p);
    FUZZ_CHECK(s.Prev(n) == p || s.Prev(n) == t, "@every: Prev(Next(t)) skips",
               n, s.Prev(n));
  }
  if (p == absl::InfinitePast()) {
    FUZZ_CHECK(t - period < kEarliestFire + absl::Hours(4 * 24),
               "@every: starts too late", n, p);
  } else {
    FUZZ_CHECK(p < t && on_grid(p) && p > kEarliestFire && p < kLatestFire,
               "@every: Prev(t) not before t on the grid in range", n, p);
    FUZZ_CHECK(s.Next(p) == n || s.Next(p) == t, "@every: Next(Prev(t)) skips",
               n, s.Next(p));
  }
  if (n != absl::InfiniteFuture() && p != absl::InfinitePast()) {
    FUZZ_CHECK(n - p == (on_grid(t) ? 2 * period : period),
               "@every: fires not one period apart", n, p);
  }
}

void CheckCron(const Schedule& s, const FuzzInput& in) {
  absl::TimeZone zone;
  if (!absl::LoadTimeZone(s.zone_name(), &zone)) {
    Fail("zone does not load", in, {}, {});
  }
  const absl::Time t = in.instant;
  const absl::Time n = s.Next(t);
  const absl::Time p = s.Prev(t);
  const absl::Time inf_future = absl::InfiniteFuture(),
                   inf_past = absl::InfinitePast();

  // 1.
  FUZZ_CHECK(n > t, "Next(t) <= t", n, p);
  FUZZ_CHECK(p < t, "Prev(t) >= t", n, p);
  FUZZ_CHECK(n == inf_future || WholeSecond(n), "Next(t) not a whole second", n,
             p);
  FUZZ_CHECK(p == inf_past || WholeSecond(p), "Prev(t) not a whole second", n,
             p);
  FUZZ_CHECK(n == inf_future || (n > kEarliestFire && n < kLatestFire),
             "Next(t) outside 1970-2399", n, p);
  FUZZ_CHECK(p == inf_past || (p > kEarliestFire && p < kLatestFire),
             "Prev(t) outside 1970-2399", n, p);

  if (n != inf_future) {
    const absl::Time n2 = s.Next(n);
    FUZZ_CHECK(n2 > n, "Next not monotonic", n, n2);
    // 2.
    const absl::Time pn = s.Prev(n);
    FUZZ_CHECK(pn == p || pn == t, "Prev(Next(t)) is neither t nor Prev(t)", n,
               pn);
    // 3.
    FUZZ_CHECK(ShouldFireAt(s, zone, n) || IsGapFire(s, zone, n),
               "Next(t) fires at a wall time the schedule does not match", n,
               p);
    // 4. A matching first pass of a repeated wall time implies the second pass
    // fires iff the policy says so.
    const absl::TimeZone::CivilInfo info = zone.At(n);
    const absl::TimeZone::TimeInfo ti = zone.At(info.cs);
    if (ti.kind == absl::TimeZone::TimeInfo::REPEATED && n == ti.pre &&
        s.Matches(info.cs)) {
      const bool twice = s.hour_is_wildcard() ||
                         s.dst_policy().repeat == cron::RepeatPolicy::kTwice;
      const bool fired_again = s.Next(ti.post - absl::Seconds(1)) == ti.post;
      FUZZ_CHECK(fired_again == twice,
                 "second pass of a repeated wall time mishandled", n, ti.post);
    }
    // 5. Nothing skipped in (t, n) when that is short.
    constexpr int64_t kScan = 90;
    const int64_t from = absl::ToUnixSeconds(t) + 1;
    const int64_t to = absl::ToUnixSeconds(n);
    if (to - from <= kScan) {
      for (int64_t x = from; x < to; ++x) {
        const absl::Time at = absl::FromUnixSeconds(x);
        FUZZ_CHECK(!ShouldFireAt(s, zone, at), "a matching instant was skipped",
                   n, at);
      }
    }
    // Offset changes reported in (t, n] really are changes there.
    absl::Time last = t;
    for (const cron::OffsetChange& c : s.OffsetChangesBetween(t, n)) {
      FUZZ_CHECK(c.at > last && c.at <= n,
                 "OffsetChangesBetween out of range or order", c.at, n);
      FUZZ_CHECK(c.offset_before != c.offset_after,
                 "OffsetChange without a change", c.at, n);
      FUZZ_CHECK(absl::Seconds(zone.At(c.at).offset) == c.offset_after &&
                     absl::Seconds(zone.At(c.at - absl::Seconds(1)).offset) ==
                         c.offset_before,
                 "OffsetChange disagrees with absl", c.at, n);
      last = c.at;
    }
    const std::vector<absl::Time> three = s.NextN(t, 3);
    FUZZ_CHECK(!three.empty() && three[0] == n, "NextN(t, 3)[0] != Next(t)", n,
               p);
    if (three.size() > 1) {
      FUZZ_CHECK(three[1] == n2, "NextN(t, 3)[1] != Next(Next(t))", n, n2);
    }
  }
  if (p != inf_past) {
    FUZZ_CHECK(s.Prev(p) < p, "Prev not monotonic", p, s.Prev(p));
    // 2.
    const absl::Time np = s.Next(p);
    FUZZ_CHECK(np == n || np == t, "Next(Prev(t)) is neither t nor Next(t)", p,
               np);
    // 3.
    FUZZ_CHECK(ShouldFireAt(s, zone, p) || IsGapFire(s, zone, p),
               "Prev(t) fires at a wall time the schedule does not match", n,
               p);
  }
  // Note: n and p may both be infinite. Parse rejects a schedule whose fields
  // match no date, but one whose only matches fall into daylight-saving gaps
  // never fires and is valid.
}

}  // namespace
}  // namespace chime::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chime::fuzz;
  // Long inputs add nothing and slow the search down: keep them out.
  if (size > 4096) return -1;
  FuzzInput in;
  DecodeFuzzInput(data, size, &in);
  auto schedule = chime::cron::Schedule::Parse(in.expr, in.options);
  if (!schedule.ok()) {
    // Rejections carry a message (the CLI prints it as the whole explanation).
    if (schedule.status().message().empty()) {
      Fail("empty error message", in, {}, {});
    }
    return 0;
  }
  if (schedule->Describe().empty()) Fail("empty description", in, {}, {});
  if (schedule->is_interval()) {
    CheckEvery(*schedule, in);
  } else {
    CheckCron(*schedule, in);
  }
  return 0;
}
