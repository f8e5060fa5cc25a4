#include "src/base/status_macros.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;

absl::StatusOr<int> ParsePositive(int v) {
  if (v <= 0) return absl::InvalidArgumentError("not positive");
  return v;
}

absl::Status CheckBoth(int a, int b) {
  RETURN_IF_ERROR(ParsePositive(a).status());
  RETURN_IF_ERROR(ParsePositive(b).status());
  return absl::OkStatus();
}

absl::StatusOr<int> Sum(int a, int b) {
  ASSIGN_OR_RETURN(int x, ParsePositive(a));
  int y = 0;
  ASSIGN_OR_RETURN(y, ParsePositive(b));
  return x + y;
}

TEST(StatusMacros, ReturnIfErrorPassesTheFirstFailureThrough) {
  EXPECT_THAT(CheckBoth(1, 2), IsOk());
  EXPECT_THAT(CheckBoth(1, -2),
              StatusIs(absl::StatusCode::kInvalidArgument, "not positive"));
}

TEST(StatusMacros, AssignOrReturnAssignsDeclarationsAndLvalues) {
  EXPECT_THAT(Sum(2, 3), IsOkAndHolds(5));
  EXPECT_THAT(Sum(-1, 3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Sum(1, 0), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StatusMacros, AssignOrReturnEvaluatesItsExpressionOnce) {
  int calls = 0;
  auto f = [&]() -> absl::StatusOr<int> {
    ++calls;
    return 7;
  };
  auto g = [&]() -> absl::StatusOr<int> {
    ASSIGN_OR_RETURN(int v, f());
    return v;
  };
  EXPECT_THAT(g(), IsOkAndHolds(7));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace chime
