// Google Benchmark: parsing one job file of 1,000 jobs with
// config::ParseJobFileWithLocations (YAML to validated JobSpecs), the work the
// daemon does per file when it loads its jobs directory.
//
//   build/release/bench/job_file_benchmark --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
//
// The file is generated like bench/daemon_bench.py's job files: shell jobs
// with cron schedules in five zones, some with namespace, dst, retry, timeout,
// labels, overlap, misfire and jitter (~150 bytes of YAML per job). The
// counter `per_job` is the time per job.
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "src/config/job_file.h"

namespace {

constexpr int kJobs = 1000;

const char* const kZones[] = {"UTC", "Europe/Berlin", "America/New_York",
                              "Asia/Tokyo", "Australia/Sydney"};
const char* const kDays[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
const char* const kMonths[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                               "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};

// A cron expression firing at most daily (daemon_bench.py's schedule_for).
std::string Schedule(std::mt19937& rng) {
  const int m = static_cast<int>(rng() % 60);
  const int h = static_cast<int>(rng() % 24);
  const int day = 1 + static_cast<int>(rng() % 28);
  const unsigned kind = rng() % 100;
  if (kind < 10) return absl::StrCat(m, " ", h, " * * *");
  if (kind < 25) return absl::StrCat(m, " ", h, " * * MON-FRI");
  if (kind < 40) return absl::StrCat(m, " ", h, " * * ", kDays[rng() % 7]);
  if (kind < 80) return absl::StrCat(m, " ", h, " ", day, " * *");
  if (kind < 85) return absl::StrCat(m, " ", h, " L * *");
  if (kind < 90)
    return absl::StrCat(rng() % 60, " ", m, " ", h, " ", day, " * *");
  return absl::StrCat(m, " ", h, " ", day, " ", kMonths[rng() % 12], " *");
}

std::string JobFile() {
  std::mt19937 rng(42);
  std::string text = "# generated: 1000 jobs\njobs:\n";
  for (int g = 0; g < kJobs; ++g) {
    const char* zone = kZones[g % 5];
    absl::StrAppend(&text, "  - id: job-0000-", g, "\n");
    if (g % 3 == 0)
      absl::StrAppend(&text, "    namespace: team-", g % 17, "\n");
    absl::StrAppend(&text, "    schedule: \"", Schedule(rng), "\"\n");
    if (g % 5 != 0) absl::StrAppend(&text, "    zone: ", zone, "\n");
    if (g % 10 == 1) {  // some Europe/Berlin jobs
      absl::StrAppend(&text, "    dst: { gap: skip, repeat: once }\n");
    }
    absl::StrAppend(&text, "    shell: { command: \"true\" }\n");
    if (g % 4 == 0) {
      absl::StrAppend(&text,
                      "    retry: { max_attempts: 3, initial_backoff: 10s, "
                      "max_backoff: 5m }\n");
    }
    if (g % 5 == 0) absl::StrAppend(&text, "    timeout: 10m\n");
    if (g % 6 == 0) {
      absl::StrAppend(&text, "    labels: { team: data, tier: \"", g % 3,
                      "\" }\n");
    }
    if (g % 7 == 0) {
      absl::StrAppend(&text, "    overlap: buffer_one\n    misfire: skip\n");
    }
    if (g % 11 == 0) absl::StrAppend(&text, "    jitter: 30s\n");
  }
  return text;
}

void BM_ParseJobFile(benchmark::State& state) {
  const std::string text = JobFile();
  for (auto _ : state) {
    auto jobs = chime::config::ParseJobFileWithLocations("jobs.yaml", text);
    if (!jobs.ok() || jobs->size() != kJobs) {
      state.SkipWithError(std::string(jobs.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(jobs);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["bytes_per_job"] = static_cast<double>(text.size()) / kJobs;
  state.counters["per_job"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kJobs,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseJobFile)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
