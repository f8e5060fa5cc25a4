#include "src/metrics/registry.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::metrics {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

TEST(Registry, UnlabelledCounterRendersFromZero) {
  Registry registry;
  auto counter = registry.AddCounter("chime_ticks_total", "Ticks seen.");
  ASSERT_THAT(counter, IsOk());
  EXPECT_EQ(registry.Render(),
            "# HELP chime_ticks_total Ticks seen.\n"
            "# TYPE chime_ticks_total counter\n"
            "chime_ticks_total 0\n");
  Counter& ticks = (*counter)->With({});
  ticks.Increment();
  ticks.Increment(2.5);
  ticks.Increment(-7);  // ignored: counters never go down
  EXPECT_EQ(ticks.Value(), 3.5);
  EXPECT_THAT(registry.Render(), HasSubstr("\nchime_ticks_total 3.5\n"));
}

TEST(Registry, LabelledFamilyRendersSeriesSortedByLabelValues) {
  Registry registry;
  CounterFamily* fires = *registry.AddCounter(
      "chime_fires_total", "Fires by outcome.", {"outcome", "namespace"});
  EXPECT_EQ(registry.Render(),
            "# HELP chime_fires_total Fires by outcome.\n"
            "# TYPE chime_fires_total counter\n");
  Counter& skipped = fires->With({"skipped", "default"});
  fires->With({"run", "ops"}).Increment(2);
  skipped.Increment();
  fires->With({"run", "default"}).Increment();
  EXPECT_EQ(&fires->With({"skipped", "default"}), &skipped);
  EXPECT_EQ(registry.Render(),
            "# HELP chime_fires_total Fires by outcome.\n"
            "# TYPE chime_fires_total counter\n"
            "chime_fires_total{outcome=\"run\",namespace=\"default\"} 1\n"
            "chime_fires_total{outcome=\"run\",namespace=\"ops\"} 2\n"
            "chime_fires_total{outcome=\"skipped\",namespace=\"default\"} 1\n");
}

TEST(Registry, GaugeGoesUpAndDown) {
  Registry registry;
  GaugeFamily* queue =
      *registry.AddGauge("chime_queue_depth", "Waiting fires.", {"queue"});
  Gauge& main = queue->With({"main"});
  main.Set(10);
  main.Add(-2.5);
  main.Increment();
  main.Decrement();
  main.Decrement();
  queue->With({"retry"}).Set(-1);
  EXPECT_EQ(registry.Render(),
            "# HELP chime_queue_depth Waiting fires.\n"
            "# TYPE chime_queue_depth gauge\n"
            "chime_queue_depth{queue=\"main\"} 6.5\n"
            "chime_queue_depth{queue=\"retry\"} -1\n");
}

TEST(Registry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry registry;
  HistogramFamily* latency = *registry.AddHistogram(
      "chime_run_duration_seconds", "Run durations.", {0.1, 1, 10}, {"job"});
  Histogram& backup = latency->With({"backup"});
  for (double v : {0.05, 0.1, 0.5, 3.0, 100.0}) backup.Observe(v);
  EXPECT_EQ(registry.Render(),
            "# HELP chime_run_duration_seconds Run durations.\n"
            "# TYPE chime_run_duration_seconds histogram\n"
            "chime_run_duration_seconds_bucket{job=\"backup\",le=\"0.1\"} 2\n"
            "chime_run_duration_seconds_bucket{job=\"backup\",le=\"1\"} 3\n"
            "chime_run_duration_seconds_bucket{job=\"backup\",le=\"10\"} 4\n"
            "chime_run_duration_seconds_bucket{job=\"backup\",le=\"+Inf\"} 5\n"
            "chime_run_duration_seconds_sum{job=\"backup\"} 103.65\n"
            "chime_run_duration_seconds_count{job=\"backup\"} 5\n");
}

TEST(Registry, UnlabelledHistogramStartsEmpty) {
  Registry registry;
  ASSERT_THAT(registry.AddHistogram("chime_wait_seconds", "Waits.", {0.5}),
              IsOk());
  EXPECT_EQ(registry.Render(),
            "# HELP chime_wait_seconds Waits.\n"
            "# TYPE chime_wait_seconds histogram\n"
            "chime_wait_seconds_bucket{le=\"0.5\"} 0\n"
            "chime_wait_seconds_bucket{le=\"+Inf\"} 0\n"
            "chime_wait_seconds_sum 0\n"
            "chime_wait_seconds_count 0\n");
}

TEST(Registry, EscapesLabelValuesAndHelp) {
  Registry registry;
  GaugeFamily* info = *registry.AddGauge(
      "chime_job_info", "Path C:\\jobs\nsecond \"line\".", {"name"});
  info->With({"a\\b \"quoted\"\nnext"}).Set(1);
  EXPECT_EQ(registry.Render(),
            "# HELP chime_job_info Path C:\\\\jobs\\nsecond \"line\".\n"
            "# TYPE chime_job_info gauge\n"
            "chime_job_info{name=\"a\\\\b \\\"quoted\\\"\\nnext\"} 1\n");
}

TEST(Registry, FamiliesRenderInNameOrder) {
  Registry registry;
  ASSERT_THAT(registry.AddGauge("chime_b", "B."), IsOk());
  ASSERT_THAT(registry.AddCounter("chime_a_total", "A."), IsOk());
  EXPECT_EQ(registry.Render(),
            "# HELP chime_a_total A.\n# TYPE chime_a_total counter\n"
            "chime_a_total 0\n"
            "# HELP chime_b B.\n# TYPE chime_b gauge\nchime_b 0\n");
}

TEST(Registry, ConcurrentUpdatesFromSeveralThreadsSumExactly) {
  Registry registry;
  CounterFamily* fires =
      *registry.AddCounter("chime_fires_total", "Fires.", {"outcome"});
  HistogramFamily* sizes =
      *registry.AddHistogram("chime_output_bytes", "Output sizes.", {1, 2});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Counter& run = fires->With({"run"});
      Histogram& size = sizes->With({});
      for (int i = 0; i < kPerThread; ++i) {
        run.Increment();
        size.Observe(i % 3);  // 0, 1, 2: sum is exact in a double
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(fires->With({"run"}).Value(), kThreads * kPerThread);
  const Histogram::Snapshot s = sizes->With({}).Read();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.cumulative.back(), s.count);
  // Per thread: 16667 zeros, 16667 ones, 16666 twos.
  EXPECT_EQ(s.sum, kThreads * (16667.0 + 2 * 16666.0));
  EXPECT_EQ(s.cumulative[0], uint64_t{kThreads} * (16667 + 16667));  // le="1"
}

TEST(Registry, CallbackGaugeIsComputedAtEveryRender) {
  Registry registry;
  int running = 3;
  ASSERT_THAT(registry.AddGaugeCallback(
                  "chime_jobs", "Jobs by state.", {"state"},
                  [&] {
                    return std::vector<GaugeSample>{
                        {{"paused"}, 1},
                        {{"active"}, static_cast<double>(running)},
                        {{"too", "many"}, 9},  // wrong arity: dropped
                    };
                  }),
              IsOk());
  const std::string expected =
      "# HELP chime_jobs Jobs by state.\n"
      "# TYPE chime_jobs gauge\n"
      "chime_jobs{state=\"active\"} 3\n"
      "chime_jobs{state=\"paused\"} 1\n";
  EXPECT_EQ(registry.Render(), expected);
  running = 0;
  EXPECT_THAT(registry.Render(), HasSubstr("chime_jobs{state=\"active\"} 0\n"));
}

TEST(Registry, CallbackCounterRendersAsACounter) {
  Registry registry;
  double fires = 5;
  ASSERT_THAT(
      registry.AddCounterCallback(
          "chime_fires_total", "Fires.", {"outcome"},
          [&] {
            return std::vector<Sample>{{{"run"}, fires}, {{"missed"}, 2}};
          }),
      IsOk());
  EXPECT_EQ(registry.Render(),
            "# HELP chime_fires_total Fires.\n"
            "# TYPE chime_fires_total counter\n"
            "chime_fires_total{outcome=\"missed\"} 2\n"
            "chime_fires_total{outcome=\"run\"} 5\n");
  fires = 6;
  EXPECT_THAT(registry.Render(),
              HasSubstr("chime_fires_total{outcome=\"run\"} 6\n"));
  EXPECT_THAT(registry.AddCounterCallback("chime_fires", "x", {},
                                          [] { return std::vector<Sample>{}; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must end in _total")));
}

// Render() holds no registry lock while a callback runs: registering from a
// callback would deadlock otherwise.
TEST(Registry, CallbackRunsWithoutTheRegistryLock) {
  Registry registry;
  ASSERT_THAT(registry.AddGaugeCallback(
                  "chime_self", "Registers while rendering.", {},
                  [&] {
                    const bool added =
                        registry.AddGauge("chime_late", "Late.").ok();
                    return std::vector<GaugeSample>{{{}, added ? 1.0 : 0.0}};
                  }),
              IsOk());
  EXPECT_THAT(registry.Render(), HasSubstr("\nchime_self 1\n"));
  EXPECT_THAT(registry.Render(), HasSubstr("\nchime_late 0\n"));
}

TEST(Registry, RefusesNamesThatBreakTheConventions) {
  Registry registry;
  EXPECT_THAT(registry.AddCounter("chime_fires", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must end in _total")));
  EXPECT_THAT(registry.AddGauge("chime_fires_total", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("only a counter's name ends in _total")));
  EXPECT_THAT(registry.AddGauge("chime_jobs_count", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("_count is reserved")));
  EXPECT_THAT(registry.AddGauge("9lives", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metric name \"9lives\"")));
  EXPECT_THAT(registry.AddGauge("chime-jobs", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(registry.AddGauge("chime_jobs", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("help text is empty")));
  EXPECT_THAT(registry.AddGauge("chime_jobs", "x", {"__name"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("label name \"__name\"")));
  EXPECT_THAT(registry.AddGauge("chime_jobs", "x", {"state", "state"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"state\" repeated")));
  EXPECT_THAT(registry.AddHistogram("chime_wait_seconds", "x", {1}, {"le"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"le\" is reserved")));
  EXPECT_EQ(registry.Render(), "");
}

TEST(Registry, RefusesBadBucketsAndDuplicateNames) {
  Registry registry;
  EXPECT_THAT(registry.AddHistogram("chime_wait_seconds", "x", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no bucket bounds")));
  EXPECT_THAT(
      registry.AddHistogram("chime_wait_seconds", "x", {1, 1}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bound 1 is 1")));
  EXPECT_THAT(
      registry.AddHistogram("chime_wait_seconds", "x",
                            {1, std::numeric_limits<double>::infinity()}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("bound 1 is +Inf")));
  ASSERT_THAT(registry.AddGauge("chime_jobs", "x"), IsOk());
  EXPECT_THAT(
      registry.AddGaugeCallback("chime_jobs", "y", {},
                                [] { return std::vector<GaugeSample>{}; }),
      StatusIs(absl::StatusCode::kAlreadyExists,
               HasSubstr("\"chime_jobs\" is already registered")));
}

TEST(Registry, ExponentialBucketsMultiply) {
  EXPECT_EQ(ExponentialBuckets(0.001, 10, 4),
            (std::vector<double>{0.001, 0.01, 0.1, 1}));
}

// What a Prometheus server would say about a scrape of every kind of family.
TEST(Registry, PromtoolAcceptsTheRenderedText) {
  const char* kPromtool = "/usr/bin/promtool";
  if (access(kPromtool, X_OK) != 0) {
    GTEST_SKIP() << kPromtool << " is absent (Debian package prometheus)";
  }
  Registry registry;
  CounterFamily* fires =
      *registry.AddCounter("chime_fires_total", "Fires.", {"outcome"});
  fires->With({"run"}).Increment(3);
  fires->With({"we\"ird\\\nvalue"}).Increment();
  HistogramFamily* durations =
      *registry.AddHistogram("chime_run_duration_seconds", "Run durations.",
                             ExponentialBuckets(0.001, 10, 5), {"job"});
  durations->With({"a"}).Observe(0.02);
  durations->With({"b"}).Observe(500);
  (*registry.AddGauge("chime_queue_depth", "Waiting."))->With({}).Set(2);
  ASSERT_THAT(
      registry.AddGaugeCallback(
          "chime_jobs", "Jobs by state.", {"state"},
          [] {
            return std::vector<GaugeSample>{{{"active"}, 4}, {{"paused"}, 0}};
          }),
      IsOk());
  ASSERT_THAT(registry.AddCounter("chime_empty_total", "No series yet.", {"x"}),
              IsOk());

  const std::string path = ::testing::TempDir() + "/registry_test_metrics.txt";
  std::ofstream(path) << registry.Render();
  const std::string command =
      absl::StrCat(kPromtool, " check metrics < ", path, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << output << "\n--- input ---\n" << registry.Render();
  EXPECT_EQ(output, "");
}

}  // namespace
}  // namespace chime::metrics
