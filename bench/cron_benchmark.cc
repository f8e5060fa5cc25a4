// Google Benchmark: parse and Next() for the reference expressions, in
// Europe/Berlin.
//
//   build/release/bench/cron_benchmark --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
//
// Next() is measured the way a scheduler calls it: successively, each call
// starting from the previous fire time (restarting from the start instant when
// a schedule is exhausted).
#include <string>
#include <vector>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "chime/cron.h"

namespace {

const char* const kExpressions[] = {
    "* * * * *",       "*/5 * * * *",   "* * * * * *",  "0 9 * * MON-FRI",
    "30 8-18 * * 1-5", "0 0 1 1 *",     "0 0 29 2 *",   "0 12 13 * 5",
    "0 0 0 L * ?",     "0 0 0 ? * 6#3", "0 0 0 31 * ?", "0 0 9 15W * ?",
};

const chime::cron::ParseOptions kBerlin{.zone = "Europe/Berlin"};

absl::Time Start() {
  return absl::FromCivil(absl::CivilSecond(2026, 3, 29, 0, 30, 0),
                         absl::UTCTimeZone());
}

void BM_Parse(benchmark::State& state) {
  const char* expr = kExpressions[state.range(0)];
  state.SetLabel(expr);
  for (auto _ : state) {
    auto s = chime::cron::Schedule::Parse(expr, kBerlin);
    benchmark::DoNotOptimize(s);
  }
}

void BM_Next(benchmark::State& state) {
  const char* expr = kExpressions[state.range(0)];
  state.SetLabel(expr);
  const auto schedule = *chime::cron::Schedule::Parse(expr, kBerlin);
  const absl::Time start = Start();
  absl::Time t = start;
  for (auto _ : state) {
    t = schedule.Next(t);
    if (t == absl::InfiniteFuture()) t = start;
    benchmark::DoNotOptimize(t);
  }
}

BENCHMARK(BM_Parse)->DenseRange(0, std::size(kExpressions) - 1);
BENCHMARK(BM_Next)->DenseRange(0, std::size(kExpressions) - 1);

}  // namespace

BENCHMARK_MAIN();
