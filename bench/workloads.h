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

// The scheduler workloads (scheduler_workloads.cc) run a chime::Scheduler on
// the real clock, with no-op job bodies that record their fire instant. Every
// one also takes --workers (worker_threads, default 2) and --max-runs
// (max_concurrent_runs, default 4096), and --timeout-s (default 600: then the
// process prints {"error":"timed out ..."} and exits 3). Each line carries
// peer, version, workload, n, config and max_rss_mb (peak RSS of the process).
//
// `chime-bench timers --n N --max-delay-ms 10000 --grace-s 60 --seed 1`: adds
// N one-shot jobs due uniformly within max-delay-ms of the start of insertion,
// waits until all fired or grace-s after the last due time. Answers insert_s,
// insert_per_s, fires, missed (N - fires), extra (a job that fired twice),
// due_before_add (jobs already due when their AddJob returned: they run late,
// among the late fires), fire_span_s, fires_per_s, drain_lag_s (last
// fire - last due time), late_p50_ms, late_p99_ms, late_max_ms (fire instant -
// due time) and cpu_s (process CPU from insertion to the end).
int RunTimers(const std::vector<std::string>& args, std::ostream& out);

// `chime-bench cron --n N --duration-s 20 [--settle-s 5]
// [--start-after-register 0]`: N jobs on `* * * * * *`, added to a running
// scheduler (or, with --start-after-register 1, added before Start); counts the
// fires scheduled in [W0, W0 + duration), W0 the whole second 2 s after
// registration ends. Answers register_s, duration_s, fires, expected (N *
// duration), missed, extra (a second fired twice), late_p50_ms, late_p99_ms,
// late_max_ms, late_max_ms_by_second (each second of the window's latest
// fire) and cpu_window_s (process CPU over the window). The lateness
// quantiles, here and in `timers`, are histogram bucket edges, at most 1.6%
// above the true value (fire_record.h).
int RunCron(const std::vector<std::string>& args, std::ostream& out);

// `chime-bench register --n N`: adds N jobs with distinct cron expressions
// ("S M H D * *") to a running scheduler, then removes them in insertion order.
// Answers add_s, add_per_s, remove_s, remove_per_s.
int RunRegister(const std::vector<std::string>& args, std::ostream& out);

// `chime-bench store [--writers 1,8,64] [--batch 1,100] [--seconds 3]
// [--durability synced|relaxed|both] [--dir D] [--store sqlite|postgres]
// [--conninfo C]`: durable writes through store::SqliteStore, or
// store::PostgresStore on a PostgreSQL 15 server the benchmark starts (or the
// one --conninfo names) (store_workload.cc, store_backends.h), with a
// temporary directory under D (default: the binary's directory, inside the
// build directory), removed at exit. First the latency of one acknowledged
// write (synced, 1 writer, 1 item per call, up to --latency-writes or
// --latency-seconds), then for each mode, batch size and writer count a fresh
// store where every writer claims `batch` fires and moves their runs pending ->
// running -> succeeded, for --seconds or until --max-items. Before every run, a
// probe of the disk's raw flush (a 4 KiB block overwritten in place +
// fdatasync, for --flush-seconds). Prints a table, not JSON: items (claims +
// transitions) per second, calls and commits per second, calls per commit, call
// latency p50 / p99, process CPU, and the probe's flushes per second and p50,
// and the machine's busy cores.
int RunStore(const std::vector<std::string>& args, std::ostream& out);

}  // namespace chime::bench

#endif  // CHIME_BENCH_WORKLOADS_H_
