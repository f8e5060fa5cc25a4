// Runs a libFuzzer target's LLVMFuzzerTestOneInput over saved inputs, without
// libFuzzer: the regression half of fuzzing, built with the normal compiler and
// sanitizers and run by CTest.
//
//   cron_fuzz_regression tests/fuzz/corpus/cron [more directories or files...]
//
// Every regular file in each directory (not recursive, in name order) is one
// input. Prints how many inputs ran and the slowest one. Exits 1 if an argument
// cannot be read or nothing ran (an empty corpus must not pass silently); a
// violated invariant aborts inside the target.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

bool ReadFile(const fs::path& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f),
              std::istreambuf_iterator<char>());
  return !f.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 1;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(arg, ec)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      if (ec) {
        std::fprintf(stderr, "cannot list %s: %s\n", argv[i],
                     ec.message().c_str());
        return 1;
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "%s is neither a directory nor a file\n", argv[i]);
      return 1;
    }
  }
  std::string data;
  double slowest_ms = 0;
  std::string slowest;
  for (const fs::path& path : inputs) {
    if (!ReadFile(path, &data)) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()),
                           data.size());
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (ms > slowest_ms) {
      slowest_ms = ms;
      slowest = path.filename().string();
    }
  }
  std::printf("ran %zu inputs; slowest %s (%.3f ms)\n", inputs.size(),
              slowest.c_str(), slowest_ms);
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs found\n");
    return 1;
  }
  return 0;
}
