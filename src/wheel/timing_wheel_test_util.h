// Test support for the timing wheel's tests (timing_wheel_test.cc,
// timing_wheel_stress_test.cc): how gtest prints a fired timer, and the
// times the tests are written in.
#ifndef CHIME_SRC_WHEEL_TIMING_WHEEL_TEST_UTIL_H_
#define CHIME_SRC_WHEEL_TIMING_WHEEL_TEST_UTIL_H_

#include <cstdint>
#include <limits>
#include <ostream>

#include "src/wheel/timing_wheel.h"

namespace chime::wheel {

// Found by gtest through argument-dependent lookup: prints "id@deadline".
inline void PrintTo(const TimingWheel::Expired& e, std::ostream* os) {
  *os << e.id << "@" << e.deadline_ms;
}

namespace testing {

inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kDay = 86'400'000;
inline constexpr int64_t kYear = 365 * kDay;

}  // namespace testing
}  // namespace chime::wheel

#endif  // CHIME_SRC_WHEEL_TIMING_WHEEL_TEST_UTIL_H_
