// Loading a jobs directory: file selection, broken files, duplicate keys.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/job_file.h"
#include "testing/status_matchers.h"

namespace chime::config {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class JobDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "chime_jobs_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

// The keys of a file's jobs, "ns/id" or "id".
std::vector<std::string> Keys(const FileResult& file) {
  std::vector<std::string> keys;
  if (file.jobs.ok()) {
    for (const FileJob& job : *file.jobs)
      keys.push_back(job.spec.key.ToString());
  }
  return keys;
}

std::string Job(const std::string& id) {
  return "  - id: " + id + "\n    schedule: '@hourly'\n    shell: 'true'\n";
}

TEST_F(JobDirTest, GoodFilesLoadNextToABrokenOne) {
  Write("a.yaml", "jobs:\n" + Job("a1") + Job("a2"));
  Write("b.yml", "jobs:\n" + Job("b1") + "    retry: {max_attempts: 0}\n");
  Write("c.yaml", "id: c1\nschedule: '@daily'\nshell: x\n");
  auto files = LoadJobDir(dir_);
  ASSERT_THAT(files, IsOk());
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].path, Path("a.yaml"));
  EXPECT_THAT(Keys((*files)[0]), ElementsAre("a1", "a2"));
  EXPECT_EQ((*files)[1].path, Path("b.yml"));
  EXPECT_THAT((*files)[1].jobs,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Path("b.yml") +
                           ":5:27: jobs[0].retry.max_attempts: 0 is below 1"));
  EXPECT_EQ((*files)[2].path, Path("c.yaml"));
  EXPECT_THAT(Keys((*files)[2]), ElementsAre("c1"));
}

TEST_F(JobDirTest, ReadsOnlyVisibleYamlFilesSortedByName) {
  Write("z.yml", "id: z\nschedule: '@daily'\nshell: x\n");
  Write("m.yaml", "id: m\nschedule: '@daily'\nshell: x\n");
  Write("README.md", "not yaml: [");
  Write("m.yaml.bak", "not yaml: [");
  Write(".m.yaml", "not yaml: [");
  std::filesystem::create_directory(Path("sub.yaml"));
  Write("sub.yaml/s.yaml", "id: s\nschedule: '@daily'\nshell: x\n");
  auto files = LoadJobDir(dir_);
  ASSERT_THAT(files, IsOk());
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, Path("m.yaml"));
  EXPECT_EQ((*files)[1].path, Path("z.yml"));
}

TEST_F(JobDirTest, AnEmptyDirectoryHasNoFiles) {
  auto files = LoadJobDir(dir_);
  ASSERT_THAT(files, IsOk());
  EXPECT_THAT(*files, ::testing::IsEmpty());
}

TEST_F(JobDirTest, AMissingDirectoryIsNotFound) {
  EXPECT_THAT(LoadJobDir(dir_ + "/absent"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/absent")));
}

TEST_F(JobDirTest, ADuplicateKeyRejectsTheLaterFileNamingBoth) {
  Write("a.yaml",
        "jobs:\n" + Job("x") + Job("backup") + "    namespace: ops\n");
  Write("b.yaml",
        "# again\nnamespace: ops\nid: backup\nschedule: '@daily'\n"
        "shell: x\n");
  Write("c.yaml", "jobs:\n" + Job("y"));
  auto files = LoadJobDir(dir_);
  ASSERT_THAT(files, IsOk());
  ASSERT_EQ(files->size(), 3u);
  EXPECT_THAT(Keys((*files)[0]), ElementsAre("x", "ops/backup"));
  EXPECT_THAT((*files)[1].jobs,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Path("b.yaml") +
                           ":2:1: job \"ops/backup\" is already "
                           "defined at " +
                           Path("a.yaml") + ":5:5 (jobs[1])"));
  EXPECT_THAT(Keys((*files)[2]), ElementsAre("y"));
}

FileResult Parsed(const std::string& path, const std::string& text) {
  return {.path = path, .jobs = ParseJobFileWithLocations(path, text)};
}

TEST(RejectDuplicateKeys, OnlyAcceptedFilesClaimKeys) {
  std::vector<FileResult> files = {
      Parsed("a.yaml", "jobs:\n" + Job("one")),
      Parsed("b.yaml", "jobs:\n" + Job("two") + Job("one")),
      // b.yaml was rejected, so its "two" is free for c.yaml.
      Parsed("c.yaml", "jobs:\n" + Job("two")),
      Parsed("d.yaml", "broken: ["),
  };
  RejectDuplicateKeys(&files);
  EXPECT_THAT(files[0].jobs, IsOk());
  EXPECT_THAT(files[1].jobs,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "b.yaml:5:5: jobs[1]: job \"one\" is already defined "
                       "at a.yaml:2:5 (jobs[0])"));
  EXPECT_THAT(Keys(files[2]), ElementsAre("two"));
  EXPECT_THAT(files[3].jobs, StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("invalid YAML")));
}

}  // namespace
}  // namespace chime::config
