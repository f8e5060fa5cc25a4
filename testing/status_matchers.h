// GoogleTest matchers for absl::Status and absl::StatusOr<T>.
//
//   EXPECT_THAT(store.Put(job), IsOk());
//   EXPECT_THAT(Parse("0 0 32 * *"),
//   StatusIs(absl::StatusCode::kInvalidArgument,
//                                             HasSubstr("day-of-month")));
//   EXPECT_THAT(Sum(2, 3), IsOkAndHolds(5));
//
// `StatusIs` and `IsOk` accept either a Status or a StatusOr<T>.
#ifndef CHIME_TESTING_STATUS_MATCHERS_H_
#define CHIME_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace chime::testing {

namespace internal {
inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}
}  // namespace internal

MATCHER(IsOk, "is OK") {
  const absl::Status& s = internal::GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s;
  return s.ok();
}

MATCHER_P(
    IsOkAndHolds, value_matcher,
    "is OK and holds a value that " +
        ::testing::DescribeMatcher<decltype(value_matcher)>(value_matcher)) {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

MATCHER_P(StatusIs, code, "has status code " + absl::StatusCodeToString(code)) {
  const absl::Status& s = internal::GetStatus(arg);
  if (s.code() != code) {
    *result_listener << "status is " << s;
    return false;
  }
  return true;
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has status code " + absl::StatusCodeToString(code) +
               " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  const absl::Status& s = internal::GetStatus(arg);
  if (s.code() != code) {
    *result_listener << "status is " << s;
    return false;
  }
  return ::testing::ExplainMatchResult(
      message_matcher, std::string(s.message()), result_listener);
}

}  // namespace chime::testing

#endif  // CHIME_TESTING_STATUS_MATCHERS_H_
