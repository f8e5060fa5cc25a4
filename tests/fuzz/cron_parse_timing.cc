// Times Schedule::Parse on every input of a fuzz corpus and reports the slowest
// rejection and the slowest acceptance. The cron engine promises that rejecting
// any input takes microseconds (include/chime/cron.h); the corpus is where the
// hardest inputs found so far live.
//
//   cron_parse_timing [--max-reject-us=N] DIR...
//
// Each input is parsed kRepeats times and its fastest run counts, so that a
// scheduler hiccup on a shared machine is not mistaken for a slow input. Exits
// 1 when the slowest rejection exceeds N microseconds (when given), or when no
// input was read.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "chime/cron.h"
#include "tests/fuzz/cron_fuzz_input.h"

namespace {

namespace fs = std::filesystem;
constexpr int kRepeats = 5;

struct Slowest {
  double us = 0;
  std::string file;
  std::string expr;
  std::string message;

  void Offer(double t, const fs::path& path, const chime::fuzz::FuzzInput& in,
             const std::string& why) {
    if (t <= us) return;
    us = t;
    file = path.filename().string();
    expr = in.expr;
    message = why;
  }
  void Print(const char* what) const {
    std::printf("slowest %s: %.1f us  %s  \"%s\"%s%s\n", what, us, file.c_str(),
                absl::CHexEscape(expr.substr(0, 80)).c_str(),
                message.empty() ? "" : "  -> ", message.substr(0, 100).c_str());
  }
};

}  // namespace

int main(int argc, char** argv) {
  double max_reject_us = -1;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--max-reject-us=")) {
      max_reject_us = std::atof(arg.c_str() + 16);
      continue;
    }
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(arg, ec)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    if (ec) {
      std::fprintf(stderr, "cannot list %s: %s\n", arg.c_str(),
                   ec.message().c_str());
      return 1;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "usage: %s [--max-reject-us=N] DIR...  (no inputs found)\n",
                 argv[0]);
    return 1;
  }
  std::sort(files.begin(), files.end());
  Slowest reject, accept;
  int rejected = 0;
  for (const fs::path& path : files) {
    std::ifstream f(path, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(f)),
                           std::istreambuf_iterator<char>());
    chime::fuzz::FuzzInput in;
    chime::fuzz::DecodeFuzzInput(reinterpret_cast<const uint8_t*>(data.data()),
                                 data.size(), &in);
    double best = 1e300;
    std::string message;
    bool ok = false;
    for (int r = 0; r < kRepeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      auto s = chime::cron::Schedule::Parse(in.expr, in.options);
      const double us = std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      best = std::min(best, us);
      ok = s.ok();
      if (!ok) message = std::string(s.status().message());
    }
    if (ok) {
      accept.Offer(best, path, in, "");
    } else {
      ++rejected;
      reject.Offer(best, path, in, message);
    }
  }
  std::printf("parsed %zu inputs (%d rejected), best of %d runs each\n",
              files.size(), rejected, kRepeats);
  reject.Print("rejection");
  accept.Print("acceptance");
  if (max_reject_us >= 0 && reject.us > max_reject_us) {
    std::fprintf(stderr,
                 "slowest rejection %.1f us exceeds the limit of %.1f us\n",
                 reject.us, max_reject_us);
    return 1;
  }
  return 0;
}
