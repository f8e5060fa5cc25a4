// Workloads of the `chime-bench` binary. Each reads its arguments, runs, and
// prints one JSON object per line on stdout, so that other schedulers can be
// measured side by side with the same inputs and the same output format.
// Returns the process exit code.
#ifndef CHIME_BENCH_WORKLOADS_H_
#define CHIME_BENCH_WORKLOADS_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace chime::bench {

// `chime-bench cron-expr --json`: reads JSON lines
//   {"id":…, "dialect":"vixie|seconds|quartz", "expr":…, "tz":…, "start":…,
//   "dur":1.0, "warm":0.3}
// For each: parses `expr` repeatedly for about 0.3 s, then calls Next()
// successively from `start` (restarting from `start` when the schedule is
// exhausted) for `warm` seconds unmeasured and `dur` seconds measured. Answers
// {"id":…, "parse_ns":…, "next_ns":…, "nexts":…} per line (wall time per call;
// plus parse_cpu_ns and next_cpu_ns, the same in thread CPU time), or
// {"id":…, "error":"…"}.
int RunCronExpr(const std::vector<std::string>& args, std::istream& in,
                std::ostream& out);

}  // namespace chime::bench

#endif  // CHIME_BENCH_WORKLOADS_H_
