// Runs every scenario file in tests/scenarios/ (CHIME_SCENARIO_DIR) as one
// test, named after the file: Scenario.misfire_run_once for
// misfire_run_once.txt.
//
// With --rewrite (or CHIME_REWRITE=1 in the environment) each file is rewritten
// with the actual output instead of being checked; review the change with `git
// diff` before keeping it.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/scenarios/scenario_runner.h"

namespace chime::scenarios {
namespace {

bool rewrite = false;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

class ScenarioFileTest : public ::testing::Test {
 public:
  explicit ScenarioFileTest(std::filesystem::path path)
      : path_(std::move(path)) {}

  void TestBody() override {
    const std::string text = ReadFile(path_);
    auto result = RunScenarioText(text, path_.filename().string());
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_GT(result->cases, 0) << path_ << " has no cases";
    if (rewrite) {
      if (result->rewritten != text) {
        std::ofstream(path_, std::ios::binary) << result->rewritten;
        std::printf("rewrote %s\n", path_.string().c_str());
      }
      return;
    }
    EXPECT_TRUE(result->diff.empty())
        << "the actual output differs; if the change is intended, run with "
           "--rewrite and "
           "review the diff\n"
        << result->diff;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace
}  // namespace chime::scenarios

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rewrite") == 0)
      chime::scenarios::rewrite = true;
  }
  if (const char* env = std::getenv("CHIME_REWRITE");
      env != nullptr && std::strcmp(env, "1") == 0) {
    chime::scenarios::rewrite = true;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(CHIME_SCENARIO_DIR)) {
    if (entry.path().extension() == ".txt" &&
        entry.path().filename() != "CMakeLists.txt") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no scenario files in %s\n", CHIME_SCENARIO_DIR);
    return 1;
  }
  for (const std::filesystem::path& path : files) {
    std::string name = path.stem().string();
    std::replace(name.begin(), name.end(), '-', '_');
    ::testing::RegisterTest(
        "Scenario", name.c_str(), nullptr, nullptr, path.string().c_str(), 1,
        [path]() -> ::testing::Test* {
          return new chime::scenarios::ScenarioFileTest(path);
        });
  }
  return RUN_ALL_TESTS();
}
