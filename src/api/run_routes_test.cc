#include "src/api/run_routes.h"

#include <string>

#include "gtest/gtest.h"

namespace chime::api::internal {
namespace {

http::Request Get(std::string path, std::string query = "") {
  return http::Request{.method = "GET",
                       .target = query.empty() ? path : path + "?" + query,
                       .path = path,
                       .query = query};
}

TEST(BoundedRunPage, IsAJobsRunPageOfAtMostOneHundredWithoutAStateFilter) {
  EXPECT_TRUE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs")));
  EXPECT_TRUE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "limit=100")));
  EXPECT_TRUE(BoundedRunPage(Get("/v1/jobs/ops%2Fx/backup/runs", "limit=7")));
  EXPECT_TRUE(BoundedRunPage(
      Get("/v1/jobs/ops/backup/runs",
          "from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z&cursor=5_3")));
}

TEST(BoundedRunPage, IsTheGlobalRunListWithoutAFilterThatMayScan) {
  EXPECT_TRUE(BoundedRunPage(Get("/v1/runs")));
  EXPECT_TRUE(BoundedRunPage(Get("/v1/runs", "limit=100&cursor=5_3")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/runs", "namespace=ops")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/runs", "state=running")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/runs", "limit=500")));
}

TEST(BoundedRunPage, AStateFilterOrALargerPageMayScanAndIsNot) {
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "state=failed")));
  // Names are read as the listing reads them: percent-decoded.
  EXPECT_FALSE(
      BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "%73tate=failed")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "limit=101")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "limit=1000")));
}

TEST(BoundedRunPage, OtherHistoriesAreNot) {
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs/17")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup/missed")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/runs")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/dead-letters")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/runs/per-minute")));
  EXPECT_FALSE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs/17/output")));
}

TEST(BoundedRunPage, AQueryTheListingRefusesIsAnsweredAtOnce) {
  EXPECT_TRUE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "bogus=1")));
  EXPECT_TRUE(BoundedRunPage(Get("/v1/jobs/ops/backup/runs", "limit=x")));
}

}  // namespace
}  // namespace chime::api::internal
