// The job count behind GET /v1/namespaces, and its cap, on a MemoryStore
// (tests/daemon/api_status_test.cc has the routes on the real daemon).
#include "src/api/status_routes.h"

#include <string>

#include "chime/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/memory_store.h"
#include "testing/job_specs.h"

namespace chime::api::internal {
namespace {

JobSpec Job(const std::string& ns, const std::string& id, bool paused) {
  JobSpec spec = testing::CronJob(id, "0 0 1 1 *");
  spec.key.name_space = ns;
  spec.paused = paused;
  return spec;
}

class CountJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const JobSpec& spec :
         {Job("ops", "a", false), Job("default", "b", true),
          Job("ops", "c", true), Job("web", "d", false),
          Job("ops", "e", false)}) {
      ASSERT_TRUE(store_.PutJob(spec, kAnyRevision, MonoTime::Infinite()).ok());
    }
  }
  store::MemoryStore store_;
};

TEST_F(CountJobsTest, CountsEveryJobAndPausedJobByNamespace) {
  absl::StatusOr<JobCount> c = CountJobsByNamespace(store_, 100, 2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->counted, 5);
  EXPECT_FALSE(c->capped);
  ASSERT_EQ(c->by_namespace.size(), 3u);
  EXPECT_EQ(c->by_namespace["ops"].jobs, 3);
  EXPECT_EQ(c->by_namespace["ops"].paused, 1);
  EXPECT_EQ(c->by_namespace["default"].jobs, 1);
  EXPECT_EQ(c->by_namespace["default"].paused, 1);
  EXPECT_EQ(c->by_namespace["web"].jobs, 1);
  EXPECT_EQ(c->by_namespace["web"].paused, 0);
}

TEST_F(CountJobsTest, StopsAtTheCapAndSaysSo) {
  absl::StatusOr<JobCount> c = CountJobsByNamespace(store_, 3, 2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->counted, 3);
  EXPECT_TRUE(c->capped);
  // The first three stored: ops/a, default/b, ops/c.
  EXPECT_EQ(c->by_namespace["ops"].jobs, 2);
  EXPECT_EQ(c->by_namespace["default"].jobs, 1);
  EXPECT_FALSE(c->by_namespace.contains("web"));
}

TEST_F(CountJobsTest, ExactlyTheCapIsNotCapped) {
  for (int page : {1, 2, 5, 1000}) {
    absl::StatusOr<JobCount> c = CountJobsByNamespace(store_, 5, page);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->counted, 5) << page;
    EXPECT_FALSE(c->capped) << page;
  }
}

}  // namespace
}  // namespace chime::api::internal
