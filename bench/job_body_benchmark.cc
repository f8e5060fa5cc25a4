// What reading a creation's body costs the listener (src/api/job_body.h): the
// text read by events straight into the job reader's tree (ReadJobText),
// against parsing nlohmann's value first (ParseJsonObject + ReadJobJson).
// The body is api_load's, and one with labels, retry and a command.
//
//   build/release/bench/job_body_benchmark --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <string>

#include "benchmark/benchmark.h"
#include "src/api/job_body.h"

namespace chime::api {
namespace {

const char* const kBodies[] = {
    R"({"id":"c7-1234","namespace":"bench","schedule":"0 0 1 1 *",)"
    R"("http":{"url":"http://127.0.0.1:9/hook"}})",
    R"({"id":"nightly-backup","namespace":"ops","schedule":"30 2 * * *",)"
    R"("zone":"Europe/Berlin","labels":{"team":"storage","tier":"1"},)"
    R"("retry":{"max_attempts":5,"initial_backoff":"10s"},"timeout":"1h",)"
    R"("shell":{"argv":["/usr/bin/backup","--all"],"env":{"A":"1"}}})",
};

void BM_ReadJobText(benchmark::State& state) {
  const std::string body = kBodies[state.range(0)];
  for (auto _ : state) {
    absl::StatusOr<JobSpec> spec = ReadJobText(body);
    if (!spec.ok()) state.SkipWithError(spec.status().ToString().c_str());
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_ReadJobText)->Arg(0)->Arg(1);

void BM_ReadJobThroughTheValue(benchmark::State& state) {
  const std::string body = kBodies[state.range(0)];
  for (auto _ : state) {
    absl::StatusOr<nlohmann::ordered_json> json = ParseJsonObject(body);
    absl::StatusOr<JobSpec> spec = ReadJobJson(*std::move(json), nullptr);
    if (!spec.ok()) state.SkipWithError(spec.status().ToString().c_str());
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_ReadJobThroughTheValue)->Arg(0)->Arg(1);

}  // namespace
}  // namespace chime::api

BENCHMARK_MAIN();
