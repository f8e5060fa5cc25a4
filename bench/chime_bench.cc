// chime-bench: workloads that measure chime the same way other schedulers can
// be measured, one JSON line per result. Build it in Release: scripts/build.sh
// release.
//
//   chime-bench cron-expr --json < cases.jsonl
//   chime-bench timers --n 100000 --max-delay-ms 10000
//   chime-bench cron --n 10000 --duration-s 10
//   chime-bench register --n 100000
//   chime-bench store --writers 1,8,64 --batch 1,100 --seconds 3
//   chime-bench store --store postgres --writers 1,8 --batch 1,100
#include <iostream>
#include <string>
#include <vector>

#include "bench/workloads.h"
#include "src/base/process_tuning.h"

int main(int argc, char** argv) {
  chime::base::SkipLockOrderChecks();  // as `chime` does (cli/main.cc)
  const std::string usage =
      "usage: chime-bench WORKLOAD [ARGS]\n"
      "workloads:\n"
      "  cron-expr --json   parse and Next() speed per expression, JSON lines "
      "on stdin\n"
      "  timers --n N      one-shot jobs: insert rate, lateness, missed fires\n"
      "  cron --n N        N every-second cron jobs: lateness, missed fires\n"
      "  register --n N    add and remove N cron jobs: rates\n"
      "  store             durable claims and transitions through SqliteStore"
      "\n                    (or --store postgres), beside the disk's raw "
      "flush\n                    rate (a table)\n"
      "(see bench/workloads.h for every argument)\n";
  if (argc < 2) {
    std::cerr << usage;
    return 2;
  }
  const std::string workload = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (workload == "cron-expr")
    return chime::bench::RunCronExpr(args, std::cin, std::cout);
  if (workload == "timers") return chime::bench::RunTimers(args, std::cout);
  if (workload == "cron") return chime::bench::RunCron(args, std::cout);
  if (workload == "register") return chime::bench::RunRegister(args, std::cout);
  if (workload == "store") return chime::bench::RunStore(args, std::cout);
  std::cerr << "chime-bench: unknown workload \"" << workload << "\"\n"
            << usage;
  return 2;
}
