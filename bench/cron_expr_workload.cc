#include <time.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "bench/bench_clock.h"
#include "bench/workloads.h"
#include "chime/cron.h"
#include "nlohmann/json.hpp"

namespace chime::bench {
namespace {

absl::StatusOr<cron::Dialect> DialectFromName(const std::string& name) {
  if (name.empty()) return cron::Dialect::kAuto;
  if (name == "vixie") return cron::Dialect::kVixie;
  if (name == "seconds") return cron::Dialect::kSeconds;
  if (name == "quartz") return cron::Dialect::kQuartz;
  return absl::InvalidArgumentError("unknown dialect \"" + name +
                                    "\" (expected vixie, seconds or quartz)");
}

struct Timing {
  int64_t calls = 0;
  double wall_s = 0;
  double cpu_s = 0;
};

// Runs `body` in batches until `seconds` of wall time have passed.
template <typename Body>
Timing RunFor(double seconds, Body body) {
  const SteadyClock::time_point start = SteadyClock::now();
  const double cpu_start = ThreadCpuSeconds();
  Timing t;
  do {
    for (int i = 0; i < 256; ++i) body();
    t.calls += 256;
    t.wall_s = SecondsSince(start);
  } while (t.wall_s < seconds);
  t.cpu_s = ThreadCpuSeconds() - cpu_start;
  return t;
}

nlohmann::json RunCase(const nlohmann::json& c) {
  nlohmann::json answer;
  answer["id"] = c.value("id", nlohmann::json());
  auto fail = [&](const std::string& message) {
    answer["error"] = message;
    return answer;
  };
  if (!c.contains("expr") || !c["expr"].is_string())
    return fail("missing string field \"expr\"");
  const std::string expr = c["expr"];
  const std::string tz = c.value("tz", std::string("UTC"));
  const auto dialect = DialectFromName(c.value("dialect", std::string()));
  if (!dialect.ok()) return fail(std::string(dialect.status().message()));
  absl::Time start;
  std::string parse_error;
  if (!absl::ParseTime(absl::RFC3339_full, c.value("start", std::string()),
                       &start, &parse_error)) {
    return fail("bad \"start\": " + parse_error);
  }
  const double dur = c.value("dur", 1.0);
  const double warm = c.value("warm", 0.3);
  const cron::ParseOptions options{.dialect = *dialect, .zone = tz};
  auto schedule = cron::Schedule::Parse(expr, options);
  if (!schedule.ok()) return fail(std::string(schedule.status().message()));

  bool ok = true;
  const Timing parse = RunFor(0.3, [&] {
    auto s = cron::Schedule::Parse(expr, options);
    ok &= s.ok();
  });
  if (!ok) return fail("parse became unstable");

  absl::Time t = start;
  auto next = [&] {
    t = schedule->Next(t);
    if (t == absl::InfiniteFuture()) t = start;
  };
  RunFor(warm, next);
  t = start;
  const Timing nexts = RunFor(dur, next);
  auto per_call_ns = [](double s, int64_t calls) {
    return s * 1e9 / static_cast<double>(calls);
  };
  answer["parse_ns"] = per_call_ns(parse.wall_s, parse.calls);
  answer["next_ns"] = per_call_ns(nexts.wall_s, nexts.calls);
  answer["nexts"] = nexts.calls;
  // Extra fields: the same, in thread CPU time.
  answer["parse_cpu_ns"] = per_call_ns(parse.cpu_s, parse.calls);
  answer["next_cpu_ns"] = per_call_ns(nexts.cpu_s, nexts.calls);
  return answer;
}

}  // namespace

int RunCronExpr(const std::vector<std::string>& args, std::istream& in,
                std::ostream& out) {
  for (const std::string& a : args) {
    if (a != "--json") {
      std::cerr << "chime-bench cron-expr: unknown argument " << a << "\n";
      return 2;
    }
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json c =
        nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (c.is_discarded() || !c.is_object()) {
      out << nlohmann::json{{"id", nullptr},
                            {"error", "line is not a JSON object"}}
                 .dump()
          << std::endl;
      continue;
    }
    out << RunCase(c).dump()
        << std::endl;  // flush: callers stream results while we run
  }
  return 0;
}

}  // namespace chime::bench
