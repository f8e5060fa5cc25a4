// chime-bench: workloads that measure chime the same way other schedulers can
// be measured, one JSON line per result. Build it in Release: scripts/build.sh
// release.
//
//   chime-bench cron-expr --json < cases.jsonl
#include <iostream>
#include <string>
#include <vector>

#include "bench/workloads.h"

int main(int argc, char** argv) {
  const std::string usage =
      "usage: chime-bench WORKLOAD [ARGS]\n"
      "workloads:\n"
      "  cron-expr --json   parse and Next() speed per expression, JSON lines "
      "on stdin\n";
  if (argc < 2) {
    std::cerr << usage;
    return 2;
  }
  const std::string workload = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (workload == "cron-expr")
    return chime::bench::RunCronExpr(args, std::cin, std::cout);
  std::cerr << "chime-bench: unknown workload \"" << workload << "\"\n"
            << usage;
  return 2;
}
