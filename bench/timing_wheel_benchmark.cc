// Google Benchmark: the timing wheel at 1M and 10M timers, deadlines spread
// uniformly over 10 s and over 1 day; and removal of 10k and 100k timers in
// the order they were added, the way a scheduler removes jobs.
//
//   B=build/release/bench/timing_wheel_benchmark
//   $B --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Every benchmark reports items_per_second (timers per second) and
// bytes_per_timer (TimingWheel::MemoryBytes() / timers, at the high-water
// mark). Setup (building the deadlines, filling the wheel for Cancel, freeing
// the wheel) is not timed.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "src/wheel/timing_wheel.h"

namespace {

using chime::wheel::TimingWheel;

constexpr int64_t kStart = 1'234'567'890;  // an arbitrary monotonic "now"
constexpr int64_t kTenSeconds = 10'000;
constexpr int64_t kOneDay = 86'400'000;

// n deadlines uniform in (kStart, kStart + span], made once per (n, span).
const std::vector<int64_t>& Deadlines(int64_t n, int64_t span) {
  static auto* cache =
      new std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>>;
  std::vector<int64_t>& d = (*cache)[{n, span}];
  if (d.empty()) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<int64_t> offset(1, span);
    d.resize(static_cast<size_t>(n));
    for (int64_t& x : d) x = kStart + offset(rng);
  }
  return d;
}

void Report(benchmark::State& state, const TimingWheel& w, int64_t n) {
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["bytes_per_timer"] =
      static_cast<double>(w.MemoryBytes()) / static_cast<double>(n);
}

// Inserting n timers into a new wheel (its slab grows as it fills).
void BM_Insert(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<int64_t>& deadlines = Deadlines(n, state.range(1));
  std::unique_ptr<TimingWheel> w;
  for (auto _ : state) {
    state.PauseTiming();
    w = std::make_unique<TimingWheel>(kStart);
    state.ResumeTiming();
    for (int64_t i = 0; i < n; ++i) {
      w->Insert(static_cast<uint64_t>(i), deadlines[static_cast<size_t>(i)]);
    }
    benchmark::ClobberMemory();
  }
  Report(state, *w, n);
}

// Cancelling n pending timers, in random order.
void BM_Cancel(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<int64_t>& deadlines = Deadlines(n, state.range(1));
  std::unique_ptr<TimingWheel> w;
  std::vector<TimingWheel::Handle> handles(static_cast<size_t>(n));
  std::mt19937_64 rng(7);
  for (auto _ : state) {
    state.PauseTiming();
    w = std::make_unique<TimingWheel>(kStart);
    for (int64_t i = 0; i < n; ++i) {
      handles[static_cast<size_t>(i)] = w->Insert(
          static_cast<uint64_t>(i), deadlines[static_cast<size_t>(i)]);
    }
    std::shuffle(handles.begin(), handles.end(), rng);
    state.ResumeTiming();
    for (const TimingWheel::Handle& h : handles) {
      benchmark::DoNotOptimize(w->Cancel(h));
    }
  }
  Report(state, *w, n);
}

// Inserting n timers, then firing them all the way a scheduler thread does:
// ask NextDeadline(), advance to it, take what fired, repeat.
void BM_InsertAdvanceToEachDeadline(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<int64_t>& deadlines = Deadlines(n, state.range(1));
  std::unique_ptr<TimingWheel> w;
  std::vector<TimingWheel::Expired> expired;
  int64_t advances = 0;
  for (auto _ : state) {
    state.PauseTiming();
    w = std::make_unique<TimingWheel>(kStart);
    advances = 0;
    state.ResumeTiming();
    for (int64_t i = 0; i < n; ++i) {
      w->Insert(static_cast<uint64_t>(i), deadlines[static_cast<size_t>(i)]);
    }
    while (std::optional<int64_t> next = w->NextDeadline()) {
      expired.clear();
      w->AdvanceTo(*next, &expired);
      benchmark::DoNotOptimize(expired.data());
      ++advances;
    }
  }
  Report(state, *w, n);
  state.counters["advances"] = static_cast<double>(advances);
}

// Inserting n timers, then firing them all in one AdvanceTo (a catch-up after
// a long stall).
void BM_InsertAdvanceInOneJump(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int64_t span = state.range(1);
  const std::vector<int64_t>& deadlines = Deadlines(n, span);
  std::unique_ptr<TimingWheel> w;
  std::vector<TimingWheel::Expired> expired;
  expired.reserve(static_cast<size_t>(n));
  for (auto _ : state) {
    state.PauseTiming();
    w = std::make_unique<TimingWheel>(kStart);
    expired.clear();
    state.ResumeTiming();
    for (int64_t i = 0; i < n; ++i) {
      w->Insert(static_cast<uint64_t>(i), deadlines[static_cast<size_t>(i)]);
    }
    w->AdvanceTo(kStart + span, &expired);
    benchmark::DoNotOptimize(expired.data());
  }
  Report(state, *w, n);
}

// n timers due 100 ms apart a day ahead (a few slots of the top occupied
// level), cancelled in insertion order, that is earliest first, with
// NextDeadline() after each Cancel as the scheduler core asks for it.
void BM_CancelEarliestThenNextDeadline(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::unique_ptr<TimingWheel> w;
  std::vector<TimingWheel::Handle> handles(static_cast<size_t>(n));
  for (auto _ : state) {
    state.PauseTiming();
    w = std::make_unique<TimingWheel>(kStart);
    for (int64_t i = 0; i < n; ++i) {
      handles[static_cast<size_t>(i)] =
          w->Insert(static_cast<uint64_t>(i), kStart + kOneDay + i * 100);
    }
    state.ResumeTiming();
    for (const TimingWheel::Handle& h : handles) {
      w->Cancel(h);
      benchmark::DoNotOptimize(w->NextDeadline());
    }
  }
  Report(state, *w, n);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1'000'000, 10'000'000}) {
    for (int64_t span : {kTenSeconds, kOneDay}) b->Args({n, span});
  }
  b->ArgNames({"timers", "span_ms"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Insert)->Apply(Sizes);
BENCHMARK(BM_Cancel)->Apply(Sizes);
BENCHMARK(BM_InsertAdvanceToEachDeadline)->Apply(Sizes);
BENCHMARK(BM_InsertAdvanceInOneJump)->Apply(Sizes);
BENCHMARK(BM_CancelEarliestThenNextDeadline)
    ->Arg(10'000)
    ->Arg(100'000)
    ->ArgName("timers")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
