// What the two crash tests (tests/crash/crash_test.cc on a library
// Scheduler, tests/daemon/daemon_crash_test.cc on the real daemon) share:
// settings from the environment, and the checker's verdict as test
// expectations.
#ifndef CHIME_TESTS_CRASH_CRASH_TEST_UTIL_H_
#define CHIME_TESTS_CRASH_CRASH_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/crash/crash_checker.h"

namespace chime::crash {

// The environment variable `name` as a number (CHIME_CRASH_KILLS, ...), or
// `otherwise`.
inline uint64_t EnvOr(const char* name, uint64_t otherwise) {
  const char* value = std::getenv(name);
  uint64_t n = 0;
  return value != nullptr && absl::SimpleAtoi(value, &n) ? n : otherwise;
}

// How many violations, and the first few.
inline std::string Examples(const std::vector<std::string>& violations) {
  constexpr size_t kExamples = 5;
  const std::vector<std::string> shown(
      violations.begin(),
      violations.begin() + std::min(violations.size(), kExamples));
  return absl::StrCat(violations.size(), ", for example:\n  ",
                      absl::StrJoin(shown, "\n  "));
}

// Every kind of violation the checker looks for is absent, and the kills hit
// something: fires ran, and some runs were lost or run again.
inline void ExpectNothingLostOrDoubled(const CrashReport& report) {
  for (const CrashReport::Kind& kind : report.Violations()) {
    EXPECT_TRUE(kind.violations->empty())
        << kind.what << ": " << Examples(*kind.violations);
  }
  EXPECT_GT(report.fires_executed, 0);
  const auto lost = report.runs_by_state.find("lost");
  EXPECT_GT((lost == report.runs_by_state.end() ? 0 : lost->second) +
                report.fires_rerun_after_crash,
            0)
      << "no kill interrupted a run";
}

}  // namespace chime::crash

#endif  // CHIME_TESTS_CRASH_CRASH_TEST_UTIL_H_
