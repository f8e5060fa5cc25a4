// What one Scheduler::AddJob costs its caller, piece by piece, for the jobs
// of `chime-bench register` (distinct six-field cron expressions): the
// trigger's parse, the whole validation, the packing, and AddJob itself on a
// running scheduler (which applies the jobs on its own thread meanwhile).
//
//   build/release/bench/add_job_benchmark --benchmark_repetitions=3
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "chime/cron.h"
#include "chime/scheduler.h"
#include "src/base/process_tuning.h"
#include "src/core/fire_source.h"
#include "src/core/packed_spec.h"

namespace chime {
namespace {

// The register workload's i-th job.
JobSpec RegisterSpec(int64_t i) {
  JobSpec spec;
  spec.key.id = absl::StrCat("r", i);
  spec.misfire.threshold = absl::Hours(1);
  spec.overlap.action = OverlapAction::kAllow;
  spec.trigger.expression =
      absl::StrCat(i % 60, " ", (i / 60) % 60, " ", (i / 3600) % 24, " ",
                   1 + (i / 86400) % 28, " * *");
  spec.trigger.dialect = cron::Dialect::kSeconds;
  return spec;
}

const std::vector<JobSpec>& Specs() {
  static const auto* specs = [] {
    auto* v = new std::vector<JobSpec>();
    for (int64_t i = 0; i < 100000; ++i) v->push_back(RegisterSpec(i));
    return v;
  }();
  return *specs;
}

void BM_Parse(benchmark::State& state) {
  const std::vector<JobSpec>& specs = Specs();
  size_t i = 0;
  for (auto _ : state) {
    const Trigger& t = specs[i++ % specs.size()].trigger;
    auto s = cron::Schedule::Parse(t.expression, {.dialect = t.dialect});
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_Parse);

void BM_Validate(benchmark::State& state) {
  const std::vector<JobSpec>& specs = Specs();
  size_t i = 0;
  for (auto _ : state) {
    auto s = core::FireSource::Validate(specs[i++ % specs.size()]);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_Validate);

void BM_Pack(benchmark::State& state) {
  const std::vector<JobSpec>& specs = Specs();
  size_t i = 0;
  for (auto _ : state) {
    auto p = core::PackedSpec::Pack(specs[i++ % specs.size()]);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_Pack);

// AddJob of 100,000 distinct jobs into a started scheduler, the register
// workload's add phase; items/s is adds per second.
void BM_AddJob(benchmark::State& state) {
  const bool started = state.range(0) != 0;
  const std::vector<JobSpec>& specs = Specs();
  const auto fn = std::make_shared<const JobFunction>(
      [](const AttemptContext&) { return absl::OkStatus(); });
  for (auto _ : state) {
    state.PauseTiming();
    SchedulerOptions options;
    options.worker_threads = 2;
    auto scheduler = Scheduler::Create(options);
    if (!scheduler.ok() || (started && !(*scheduler)->Start().ok())) {
      state.SkipWithError("no scheduler");
      return;
    }
    state.ResumeTiming();
    for (const JobSpec& spec : specs) {
      if (!(*scheduler)->AddJob(spec, fn).ok()) state.SkipWithError("add");
    }
    state.PauseTiming();
    (*scheduler)->Shutdown(absl::ZeroDuration());
    scheduler->reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * specs.size());
}
// One iteration per process: later ones would find the memory of the
// first already faulted in, which a scheduler adding its jobs does not.
BENCHMARK(BM_AddJob)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Arg(1)
    ->Arg(0);

}  // namespace
}  // namespace chime

int main(int argc, char** argv) {
  chime::base::SkipLockOrderChecks();  // as `chime` does (cli/main.cc)
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
