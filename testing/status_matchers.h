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
#include <type_traits>
#include <utility>

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

namespace internal {
// IsOkAndHolds: a polymorphic matcher, so that the inner one may be
// polymorphic too (IsEmpty(), ElementsAre(...)): it becomes a Matcher of the
// StatusOr's value type when the StatusOr's type is known.
template <typename StatusOrT, typename T>
class IsOkAndHoldsImpl : public ::testing::MatcherInterface<StatusOrT> {
 public:
  explicit IsOkAndHoldsImpl(::testing::Matcher<const T&> inner)
      : inner_(std::move(inner)) {}
  bool MatchAndExplain(
      StatusOrT arg, ::testing::MatchResultListener* listener) const override {
    if (!arg.ok()) {
      *listener << "status is " << arg.status();
      return false;
    }
    return inner_.MatchAndExplain(*arg, listener);
  }
  void DescribeTo(std::ostream* os) const override {
    *os << "is OK and holds a value that ";
    inner_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const override {
    *os << "is not OK, or holds a value that ";
    inner_.DescribeNegationTo(os);
  }

 private:
  const ::testing::Matcher<const T&> inner_;
};

template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}
  template <typename StatusOrT>
  operator ::testing::Matcher<StatusOrT>() const {  // NOLINT: implicit
    using T = typename std::decay_t<StatusOrT>::value_type;
    return ::testing::MakeMatcher(new IsOkAndHoldsImpl<StatusOrT, T>(
        ::testing::SafeMatcherCast<const T&>(inner_)));
  }

 private:
  InnerMatcher inner_;
};
}  // namespace internal

// Matches an OK StatusOr whose value matches `inner` (a value or a matcher).
template <typename InnerMatcher>
internal::IsOkAndHoldsMatcher<InnerMatcher> IsOkAndHolds(InnerMatcher inner) {
  return internal::IsOkAndHoldsMatcher<InnerMatcher>(std::move(inner));
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
