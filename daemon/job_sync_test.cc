#include "daemon/job_sync.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/driver.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"

namespace chime::daemon {
namespace {

using ::chime::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class JobSyncTest : public ::testing::Test {
 protected:
  JobSyncTest() : log_(null_, LogFormat::kJson, LogLevel::kError, clock_) {
    SchedulerOptions options;
    options.clock = &clock_;
    scheduler_ = *driver::CreateScheduler(std::move(options));
    sync_ = std::make_unique<JobSync>(
        *scheduler_,
        [this](const JobSpec& spec) {
          ++made_[spec.key.id];
          return std::make_shared<const JobFunction>(
              [](const AttemptContext&) { return absl::OkStatus(); });
        },
        log_);
  }
  ~JobSyncTest() override {
    scheduler_->Shutdown(absl::ZeroDuration());
    std::fclose(null_);
  }

  // A file result from YAML text.
  static config::FileResult File(std::string path, absl::string_view yaml) {
    return {path, config::ParseJobFileWithLocations(path, yaml)};
  }

  SimulatedClock clock_;
  std::FILE* null_ = std::fopen("/dev/null", "w");
  Logger log_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<JobSync> sync_;
  std::map<std::string, int> made_;  // id -> functions made (AddJob calls)
};

constexpr absl::string_view kA = R"(
jobs:
  - id: a
    schedule: "0 * * * *"
    shell: "echo a"
  - id: b
    schedule: "@every 10m"
    shell: "echo b"
)";

TEST_F(JobSyncTest, AppliesADiffLeavingUnchangedJobsAlone) {
  JobSync::Report r = sync_->Apply({File("a.yaml", kA)});
  EXPECT_EQ(r.added, 2);
  EXPECT_EQ(sync_->NumJobs(), 2);
  // The same files again: nothing is touched.
  r = sync_->Apply({File("a.yaml", kA)});
  EXPECT_EQ(r.unchanged, 2);
  EXPECT_EQ(r.added + r.changed + r.removed, 0);
  EXPECT_EQ(made_["a"], 1);
  // b changes its schedule, a goes, c comes.
  r = sync_->Apply({File("a.yaml", R"(
jobs:
  - id: b
    schedule: "@every 5m"
    shell: "echo b"
  - id: c
    schedule: "0 0 * * *"
    shell: "echo c"
)")});
  EXPECT_EQ(r.added, 1);
  EXPECT_EQ(r.changed, 1);
  EXPECT_EQ(r.removed, 1);
  EXPECT_EQ(made_["b"], 2);
  EXPECT_FALSE(scheduler_->NextFireTime(JobKey{"default", "a"}).ok());
  EXPECT_THAT(scheduler_->NextFireTime(JobKey{"default", "c"}), IsOk());
}

TEST_F(JobSyncTest, ABrokenFileKeepsItsPreviousVersionInForce) {
  ASSERT_EQ(sync_->Apply({File("a.yaml", kA)}).added, 2);
  JobSync::Report r = sync_->Apply({File("a.yaml", R"(
jobs:
  - id: a
    schedule: "0 * * * *"
    shell: "echo a"
    retry: { max_attempts: 0 }
)")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("a.yaml:6:"));
  EXPECT_THAT(r.errors[0], HasSubstr("max_attempts"));
  EXPECT_EQ(r.removed, 0);
  EXPECT_EQ(r.unchanged, 2);
  EXPECT_EQ(sync_->NumJobs(), 2);
  EXPECT_EQ(sync_->Errors(), r.errors);
  // Fixed: the errors clear and the new version applies.
  r = sync_->Apply({File("a.yaml", R"(
id: a
schedule: "0 * * * *"
shell: "echo a"
)")});
  EXPECT_THAT(r.errors, IsEmpty());
  EXPECT_EQ(r.removed, 1);  // b
  EXPECT_THAT(sync_->Errors(), IsEmpty());
}

TEST_F(JobSyncTest, ADeletedFileTakesItsJobsAlong) {
  ASSERT_EQ(sync_->Apply({File("a.yaml", kA)}).added, 2);
  const JobSync::Report r = sync_->Apply({});
  EXPECT_EQ(r.removed, 2);
  EXPECT_EQ(sync_->NumJobs(), 0);
}

TEST_F(JobSyncTest, AKeyDefinedInTwoFilesIsRejectedInTheLaterOne) {
  ASSERT_EQ(sync_->Apply({File("a.yaml", kA)}).added, 2);
  // b.yaml now defines "a" too, and a.yaml is broken: its old version, which
  // defines "a", is kept and wins over the newcomer.
  JobSync::Report r = sync_->Apply(
      {File("a.yaml", "jobs: [\n"),
       File("b.yaml", "id: a\nschedule: \"5 * * * *\"\nshell: \"echo b\"\n")});
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_THAT(r.errors[1], HasSubstr("b.yaml:1:1: job \"a\" is already "
                                     "defined at a.yaml:3:5"));
  EXPECT_EQ(r.unchanged, 2);
  EXPECT_EQ(made_["a"], 1);
}

}  // namespace
}  // namespace chime::daemon
