// How a fuzz input becomes a schedule expression, parse options and an instant.
//
// Layout: the expression, then optionally a NUL byte followed by option bytes.
// An input without a NUL is all expression with default options, so plain-text
// seed files ("30 2 * * *") work and the corpus stays readable. Option bytes,
// each optional (missing ones keep the default):
//   [0]       bits 0-1: dialect (auto, vixie, seconds, quartz)
//             bit 2: DayMatch::kAll; bit 3: GapPolicy::kSkip;
//             bit 4: RepeatPolicy::kTwice
//   [1]       zone: index into kFuzzZones (modulo its size)
//   [2]       hash key: 0 -> "", k -> "job-k"
//   [3..10]   instant: little-endian uint64 mapped onto whole seconds from
//             1969-12-25 to 2400-01-08 UTC, a week past the engine's years
//             1970-2399 on either side
//   [11..14]  nanoseconds of the instant: little-endian uint32 modulo 10^9
// Default instant: 2026-03-29T00:30:00Z, 30 minutes before Europe/Berlin
// springs forward.
//
// Shared by cron_fuzzer.cc and cron_parse_timing.cc so that both read a corpus
// file the same way.
#ifndef CHIME_TESTS_FUZZ_CRON_FUZZ_INPUT_H_
#define CHIME_TESTS_FUZZ_CRON_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/cron.h"

namespace chime::fuzz {

// Zones with something to test: 30-minute and 45-minute DST (Lord Howe,
// Chatham), transitions at midnight (Santiago), negative DST (Dublin), DST
// suspended for Ramadan (Casablanca), a skipped calendar day (Apia,
// 2011-12-30), a 2-hour DST step (Troll), odd offsets (Kathmandu, St John's).
inline constexpr const char* kFuzzZones[] = {
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "America/Santiago",
    "Europe/Dublin",
    "Africa/Casablanca",
    "Pacific/Apia",
    "Antarctica/Troll",
    "Asia/Kathmandu",
    "America/St_Johns",
};

struct FuzzInput {
  std::string expr;
  std::string zone = "UTC";
  std::string hash_key;
  cron::ParseOptions
      options;  // zone and hash_key point into this struct: do not copy it
  absl::Time instant;
};

inline constexpr int64_t kFuzzFirstSecond = -7 * 86400;  // 1969-12-25T00:00:00Z
inline constexpr int64_t kFuzzLastSecond =
    13'569'465'600 + 7 * 86400;  // 2400-01-08T00:00:00Z

// Fills *in from the fuzzer's bytes. Never fails.
inline void DecodeFuzzInput(const uint8_t* data, size_t size, FuzzInput* in) {
  const void* nul = std::memchr(data, 0, size);
  const size_t expr_size =
      nul == nullptr ? size : static_cast<const uint8_t*>(nul) - data;
  in->expr.assign(reinterpret_cast<const char*>(data), expr_size);
  const uint8_t* opt = nul == nullptr ? data + size : data + expr_size + 1;
  const size_t opt_size = static_cast<size_t>(data + size - opt);
  auto byte = [&](size_t i) -> uint64_t { return i < opt_size ? opt[i] : 0; };

  const uint64_t flags = byte(0);
  constexpr cron::Dialect kDialects[] = {
      cron::Dialect::kAuto, cron::Dialect::kVixie, cron::Dialect::kSeconds,
      cron::Dialect::kQuartz};
  in->options = cron::ParseOptions{};
  in->options.dialect = kDialects[flags & 3];
  in->options.day_match =
      (flags & 4) ? cron::DayMatch::kAll : cron::DayMatch::kAny;
  in->options.dst.gap =
      (flags & 8) ? cron::GapPolicy::kSkip : cron::GapPolicy::kRunAtTransition;
  in->options.dst.repeat =
      (flags & 16) ? cron::RepeatPolicy::kTwice : cron::RepeatPolicy::kOnce;
  in->zone = kFuzzZones[byte(1) % std::size(kFuzzZones)];
  in->hash_key = byte(2) == 0 ? "" : absl::StrCat("job-", byte(2));
  in->options.zone = in->zone;
  in->options.hash_key = in->hash_key;

  int64_t seconds = 1774744200;  // 2026-03-29T00:30:00Z
  if (opt_size > 3) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) v |= byte(3 + i) << (8 * i);
    seconds =
        kFuzzFirstSecond +
        static_cast<int64_t>(
            v % static_cast<uint64_t>(kFuzzLastSecond - kFuzzFirstSecond + 1));
  }
  uint64_t nanos = 0;
  for (size_t i = 0; i < 4; ++i) nanos |= byte(11 + i) << (8 * i);
  in->instant =
      absl::FromUnixSeconds(seconds) + absl::Nanoseconds(nanos % 1'000'000'000);
}

}  // namespace chime::fuzz

#endif  // CHIME_TESTS_FUZZ_CRON_FUZZ_INPUT_H_
