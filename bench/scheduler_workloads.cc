// The scheduler workloads of chime-bench (timers, cron, register): chime as a
// library, through the public chime::Scheduler with the real clock. Job bodies
// only read the wall clock, set their fire's bit and count its lateness in
// their thread's histogram (fire_record.h), so the measurement stays out of
// the scheduler's way, in time and in memory. Every wait is bounded; each run
// prints one JSON line.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_args.h"
#include "bench/bench_clock.h"
#include "bench/fire_record.h"
#include "bench/store_backends.h"
#include "bench/workloads.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "nlohmann/json.hpp"
#include "src/store/memory_store.h"
#include "src/store/sqlite_store.h"

#ifndef CHIME_VERSION
#define CHIME_VERSION "0.1.0"
#endif

namespace chime::bench {
namespace {

// Options shared by the workloads: --workers and --max-runs.
const std::map<std::string, std::string> kSchedulerDefaults = {
    {"workers", "2"},
    {"max-runs", "4096"},
    {"timeout-s", "600"},
    {"lookahead-ms", "1000"},
    // SchedulerOptions::release_early, in microseconds.
    {"release-early-us", "2000"},
    // none (decisions acknowledged at once), memory (store::MemoryStore,
    // bounded history), sqlite (store::SqliteStore, synced, in a temporary
    // directory removed at exit) or postgres (store::PostgresStore on a
    // PostgreSQL 15 server the benchmark starts, synchronous_commit on; the
    // scheduler on it as a cluster node schedules: lease renewed, every
    // claim and transition fenced).
    {"store", "none"},
    // --store postgres on an existing database (a libpq URL) instead of a
    // server of its own: several chime-bench processes as the nodes of one
    // cluster (bench/cluster_bench.py).
    {"pg-url", ""},
    // SchedulerOptions::shards and node_name (a cluster's node).
    {"shards", "0"},
    {"node-name", ""},
    // 1: a line on stderr every second (the scheduler's Stats) and for every
    // store write slower than 200 ms or failed, each with the wall time.
    {"trace", "0"}};

std::map<std::string, std::string> WithSchedulerDefaults(
    std::map<std::string, std::string> m) {
  m.insert(kSchedulerDefaults.begin(), kSchedulerDefaults.end());
  return m;
}

// Bounds the whole run: after --timeout-s, prints an error line and exits
// (a scheduler that cannot keep up may take unbounded time to register jobs or
// to shut down).
void StartWatchdog(const std::string& workload, const Args& args) {
  const int64_t timeout_s = args.Int("timeout-s");
  std::thread([workload, timeout_s] {
    absl::SleepFor(absl::Seconds(timeout_s));
    std::cout << nlohmann::json{{"peer", "ours"},
                                {"workload", workload},
                                {"error", absl::StrCat("timed out after ",
                                                       timeout_s, " s")},
                                {"max_rss_mb", MaxRssMb()}}
                     .dump()
              << std::endl;
    std::_Exit(3);
  }).detach();
}

// Set when the scheduler lost a store lease (StartScheduler).
std::atomic<bool> lease_lost{false};

double WallSeconds() { return absl::ToUnixMicros(absl::Now()) * 1e-6; }

// --trace: the scheduler's state once a second while it lives (declare it
// after the scheduler).
class StatsTracer {
 public:
  StatsTracer(const Args& args, Scheduler* scheduler) {
    if (args.Int("trace") == 0) return;
    thread_ = std::thread([this, scheduler] { Run(scheduler); });
  }
  ~StatsTracer() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run(Scheduler* scheduler) {
    for (absl::Time next = absl::Now() + absl::Seconds(1); !stop_.load();
         next += absl::Seconds(1)) {
      while (!stop_.load() && absl::Now() < next)
        absl::SleepFor(absl::Milliseconds(20));
      absl::StatusOr<SchedulerStats> s = scheduler->Stats();
      if (!s.ok()) return;
      std::fprintf(stderr,
                   "%.3f stats shards=%zu jobs=%lld elsewhere=%lld "
                   "pending=%lld running=%lld fires_run=%lld\n",
                   WallSeconds(), s->shards.size(),
                   static_cast<long long>(s->jobs),
                   static_cast<long long>(s->jobs_elsewhere),
                   static_cast<long long>(s->runs_pending),
                   static_cast<long long>(s->runs_running),
                   static_cast<long long>(s->fires_run));
    }
  }

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The store named by --store (null for "none").
absl::StatusOr<std::shared_ptr<Store>> MakeStore(const std::string& kind,
                                                 const std::string& pg_url) {
  if (kind == "none") return nullptr;
  if (kind == "memory") {
    store::MemoryStore::Options options;
    options.max_finished_runs = 10000;
    options.max_missed_records = 10000;
    return std::make_shared<store::MemoryStore>(options);
  }
  if (kind == "postgres") {
    absl::StatusOr<std::unique_ptr<StoreBackend>> backend =
        MakePostgresBackend(pg_url);
    if (!backend.ok()) return backend.status();
    absl::StatusOr<std::unique_ptr<Store>> opened =
        (*backend)->OpenFresh(Durability::kSynced, 4);
    if (!opened.ok()) return opened.status();
    // The server outlives the store.
    std::shared_ptr<StoreBackend> server = *std::move(backend);
    return std::shared_ptr<Store>(opened->release(),
                                  [server](Store* s) { delete s; });
  }
  if (kind != "sqlite") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--store: \"", kind, "\" is not none, memory, sqlite or postgres"));
  }
  static std::string dir;
  char pattern[] = "/tmp/chime-bench-store-XXXXXX";
  if (mkdtemp(pattern) == nullptr)
    return absl::UnavailableError("--store sqlite: cannot create a directory");
  dir = pattern;
  std::atexit([] { std::filesystem::remove_all(dir); });
  store::SqliteStore::Options options;
  options.data_dir = dir;
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> opened =
      store::SqliteStore::Open(options);
  if (!opened.ok()) return opened.status();
  return std::shared_ptr<Store>(*std::move(opened));
}

absl::StatusOr<std::unique_ptr<Scheduler>> StartScheduler(const Args& args,
                                                          bool start = true) {
  SchedulerOptions options;
  options.worker_threads = static_cast<int>(args.Int("workers"));
  options.max_concurrent_runs = static_cast<int>(args.Int("max-runs"));
  options.seed = 1;
  options.lookahead = absl::Milliseconds(args.Int("lookahead-ms"));
  options.release_early = absl::Microseconds(args.Int("release-early-us"));
  absl::StatusOr<std::shared_ptr<Store>> store =
      MakeStore(args.String("store"), args.String("pg-url"));
  options.shards = static_cast<uint32_t>(args.Int("shards"));
  options.node_name = args.String("node-name");
  // A lost lease is reported in the output line (lease_lost), not an abort:
  // the workload's own records (its fires) stay readable.
  options.on_lease_lost = [](const absl::Status& why) {
    std::cerr << "chime-bench: " << why << "\n";
    lease_lost.store(true);
  };
  if (!store.ok()) return store.status();
  options.store = *std::move(store);
  if (args.Int("trace") != 0) {
    options.on_store_write = [](const StoreWrite& w) {
      if (w.status.ok() && w.latency < absl::Milliseconds(200)) return;
      std::fprintf(stderr, "%.3f write %.*s items=%zu %.3f s %s\n",
                   WallSeconds(), static_cast<int>(w.op.size()), w.op.data(),
                   w.items, absl::ToDoubleSeconds(w.latency),
                   w.status.ToString().c_str());
    };
  }
  // On a shared store the scheduler renews its lease, as in a cluster.
  if (args.String("store") == "postgres") options.lease_ttl = absl::Seconds(5);
  auto scheduler = Scheduler::Create(options);
  if (!scheduler.ok()) return scheduler.status();
  if (start) {
    if (absl::Status s = (*scheduler)->Start(); !s.ok()) return s;
  }

  return scheduler;
}

nlohmann::json Header(const std::string& workload, int64_t n,
                      const Args& args) {
  return {{"peer", "ours"},
          {"version", CHIME_VERSION},
          {"workload", workload},
          {"n", n},
          {"config",
           {{"worker_threads", args.Int("workers")},
            {"max_concurrent_runs", args.Int("max-runs")},
            {"lookahead_ms", args.Int("lookahead-ms")},
            {"release_early_us", args.Int("release-early-us")},
            {"store", args.String("store")},
            {"shards", args.Int("shards")},
            // The malloc tunables the run had (docs/performance.md: huge
            // pages decide these figures on a virtual machine).
            {"glibc_tunables", std::getenv("GLIBC_TUNABLES") == nullptr
                                   ? ""
                                   : std::getenv("GLIBC_TUNABLES")}}}};
}

// A spec whose late fires run (and count as late), beside earlier runs.
JobSpec BenchSpec(std::string id) {
  JobSpec spec;
  spec.key.id = std::move(id);
  spec.misfire.threshold = absl::Hours(1);
  spec.overlap.action = OverlapAction::kAllow;
  return spec;
}

// i of the bench's job "<letter><i>". The timers and cron workloads give all
// their jobs one function, as AddJob suggests for many alike (a closure per
// job was ~48 bytes of the bench's own a job), and tell the jobs apart by id.
// By hand: on the workers' path, ~3 times quicker than absl::SimpleAtoi.
int64_t JobIndex(const AttemptContext& ctx) {
  const std::string& id = ctx.fire.job.id;
  if (id.size() < 2) std::abort();  // not a job of ours
  int64_t i = 0;
  for (size_t k = 1; k < id.size(); ++k) {
    if (id[k] < '0' || id[k] > '9') std::abort();
    i = i * 10 + (id[k] - '0');
  }
  return i;
}

// The quantiles are their histogram bucket's upper edge: at most 1.6% above
// the true value (LatencyHistogram).
void AddLateness(const LatencyHistogram& late, nlohmann::json& line) {
  line["late_p50_ms"] = static_cast<double>(late.QuantileUs(0.50)) * 1e-3;
  line["late_p99_ms"] = static_cast<double>(late.QuantileUs(0.99)) * 1e-3;
  line["late_max_ms"] = static_cast<double>(late.max_us()) * 1e-3;
}

int Fail(const std::string& workload, const absl::Status& status) {
  std::cerr << "chime-bench " << workload << ": " << status << "\n";
  return 1;
}

// Sleeps in short steps until `done()` or `deadline` (wall time).
template <typename Done>
void WaitUntil(absl::Time deadline, Done done) {
  while (!done() && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(5));
}

}  // namespace

int RunTimers(const std::vector<std::string>& argv, std::ostream& out) {
  Args args;
  if (!Args::Parse("timers", argv,
                   WithSchedulerDefaults({{"n", "10000"},
                                          {"max-delay-ms", "10000"},
                                          {"grace-s", "60"},
                                          {"seed", "1"},
                                          // A job's delay counts from its
                                          // AddJob call ("add"), as a timer
                                          // API's does (Netty's newTimeout,
                                          // Go's AfterFunc), or from the
                                          // start of the insertion loop
                                          // ("start": a slow insertion then
                                          // makes late fires by itself).
                                          {"delay-from", "add"}}),
                   &args)) {
    return 2;
  }
  const int64_t n = args.Int("n");
  const absl::Duration max_delay = absl::Milliseconds(args.Int("max-delay-ms"));
  StartWatchdog("timers", args);
  auto scheduler = StartScheduler(args);
  if (!scheduler.ok()) return Fail("timers", scheduler.status());

  // What the job bodies share; each captures a pointer to it and its index
  // (small enough for std::function to hold without an allocation).
  struct Record {
    FireStats stats;  // cell i: job i fired
    std::atomic<int64_t> fires{0};
  } record{FireStats(n)};
  std::mt19937_64 rng(static_cast<uint64_t>(args.Int("seed")));
  std::uniform_int_distribution<int64_t> delay_ns(
      0, absl::ToInt64Nanoseconds(max_delay));

  // Jobs whose due time had passed when AddJob returned: they still run, late
  // (BenchSpec's misfire threshold is an hour), among the late fires.
  int64_t due_before_add = 0;
  int64_t last_due = 0;
  const auto fn = std::make_shared<const JobFunction>(
      [r = &record](const AttemptContext& ctx) {
        const int64_t now = absl::GetCurrentTimeNanos();
        FireStats::Local& mine = r->stats.Mine();
        if (mine.Mark(JobIndex(ctx))) return absl::OkStatus();
        const int64_t late_ns = now - absl::ToUnixNanos(ctx.scheduled_time);
        mine.Add(late_ns / 1000, now);
        r->fires.fetch_add(1, std::memory_order_relaxed);
        return absl::OkStatus();
      });
  const double cpu_start = ProcessCpuSeconds();
  const SteadyClock::time_point insert_start = SteadyClock::now();
  const absl::Time t0 = absl::Now();
  const std::string& delay_from = args.String("delay-from");
  if (delay_from != "add" && delay_from != "start")
    return Fail("timers",
                absl::InvalidArgumentError(absl::StrCat(
                    "--delay-from: \"", delay_from, "\" is not add or start")));
  const bool from_add = delay_from == "add";
  for (int64_t i = 0; i < n; ++i) {
    JobSpec spec = BenchSpec(absl::StrCat("t", i));
    spec.trigger.kind = Trigger::Kind::kAt;
    spec.trigger.at =
        (from_add ? absl::Now() : t0) + absl::Nanoseconds(delay_ns(rng));
    const int64_t due = absl::ToUnixNanos(spec.trigger.at);
    last_due = std::max(last_due, due);
    absl::Status s = (*scheduler)->AddJob(spec, fn);
    if (!s.ok()) return Fail("timers", s);
    if (absl::GetCurrentTimeNanos() > due) ++due_before_add;
  }
  const double insert_s = SecondsSince(insert_start);

  std::atomic<int64_t>& fires = record.fires;
  WaitUntil(absl::FromUnixNanos(last_due) + absl::Seconds(args.Int("grace-s")),
            [&] { return fires.load() >= n; });
  const double cpu_s = ProcessCpuSeconds() - cpu_start;
  (*scheduler)->Shutdown(absl::ZeroDuration());

  const FireStats::Local all = record.stats.Merged();
  const int64_t first_fire = all.first_ns, last_fire = all.last_ns;
  const int64_t count = all.late.count();
  const double fire_span_s =
      count > 0 ? static_cast<double>(last_fire - first_fire) * 1e-9 : 0;

  nlohmann::json line = Header("timers", n, args);
  line["delay_from"] = delay_from;
  line["insert_s"] = insert_s;
  line["insert_per_s"] = static_cast<double>(n) / insert_s;
  line["fires"] = all.ran.Count() + all.extra;
  line["missed"] = n - all.ran.Count();
  line["extra"] = all.extra;
  line["due_before_add"] = due_before_add;
  line["fire_span_s"] = fire_span_s;
  line["fires_per_s"] =
      fire_span_s > 0 ? static_cast<double>(count) / fire_span_s : 0;
  line["drain_lag_s"] =
      count > 0 ? static_cast<double>(last_fire - last_due) * 1e-9 : 0;
  AddLateness(all.late, line);
  line["cpu_s"] = cpu_s;
  line["max_rss_mb"] = MaxRssMb();
  out << line.dump() << std::endl;
  return 0;
}

int RunCron(const std::vector<std::string>& argv, std::ostream& out) {
  Args args;
  if (!Args::Parse("cron", argv,
                   WithSchedulerDefaults({{"n", "1000"},
                                          {"duration-s", "20"},
                                          {"settle-s", "5"},
                                          {"start-after-register", "0"},
                                          // The window's start (unix s; 0:
                                          // 3 s after registration), and
                                          // a file for each (job, second)'s
                                          // lateness: cluster_bench.py
                                          // merges the nodes'.
                                          {"w0", "0"},
                                          {"fired-file", ""}}),
                   &args)) {
    return 2;
  }
  const int64_t n = args.Int("n");
  const int64_t duration = args.Int("duration-s");
  StartWatchdog("cron", args);
  const bool start_after_register = args.Int("start-after-register") != 0;
  auto scheduler = StartScheduler(args, !start_after_register);
  if (!scheduler.ok()) return Fail("cron", scheduler.status());
  StatsTracer tracer(args, scheduler->get());

  // What the job bodies share; each captures a pointer to it and its index
  // (small enough for std::function to hold without an allocation). Cell
  // k * n + i of `stats`: job i's fire for second W0 + k ran. Second-major: a
  // second's fires, which start in job order, touch neighbouring words. W0
  // is known only once registration ends; until then w0_s is INT64_MAX and
  // every fire falls outside the window.
  struct Record {
    int64_t n;
    int64_t duration;
    FireStats stats;
    std::atomic<int64_t> w0_s{INT64_MAX};
    std::atomic<int64_t> early{0};  // started before their scheduled time
  } record{n, duration, FireStats(n * duration)};

  const auto fn = std::make_shared<const JobFunction>(
      [r = &record](const AttemptContext& ctx) {
        const int64_t now = absl::GetCurrentTimeNanos();
        const int64_t due = absl::ToUnixNanos(ctx.scheduled_time);
        // Made (with its bits) by the fires before the window.
        FireStats::Local& mine = r->stats.Mine();
        const int64_t k = due / 1'000'000'000 - r->w0_s.load();
        if (k < 0 || k >= r->duration) return absl::OkStatus();
        if (now < due) r->early.fetch_add(1, std::memory_order_relaxed);
        if (mine.Mark(k * r->n + JobIndex(ctx))) return absl::OkStatus();
        mine.Add(std::max<int64_t>(now - due, 0) / 1000, now, k);
        return absl::OkStatus();
      });
  const SteadyClock::time_point register_start = SteadyClock::now();
  for (int64_t i = 0; i < n; ++i) {
    JobSpec spec = BenchSpec(absl::StrCat("c", i));
    spec.trigger.expression = "* * * * * *";
    spec.trigger.dialect = cron::Dialect::kSeconds;
    absl::Status s = (*scheduler)->AddJob(spec, fn);
    if (!s.ok()) return Fail("cron", s);
  }
  const double register_s = SecondsSince(register_start);
  if (start_after_register) {
    if (absl::Status s = (*scheduler)->Start(); !s.ok()) return Fail("cron", s);
  }
  // ToUnixSeconds rounds down: + 1 is the next whole second.
  const int64_t w0 = args.Int("w0") != 0
                         ? args.Int("w0")
                         : absl::ToUnixSeconds(absl::Now()) + 1 + 2;
  record.w0_s.store(w0);

  // CPU over the measured window, then time for its last fires to arrive.
  WaitUntil(absl::FromUnixSeconds(w0), [] { return false; });
  const double cpu_start = ProcessCpuSeconds();
  WaitUntil(absl::FromUnixSeconds(w0 + duration), [] { return false; });
  const double cpu_window_s = ProcessCpuSeconds() - cpu_start;
  WaitUntil(absl::FromUnixSeconds(w0 + duration) +
                absl::Seconds(args.Int("settle-s")),
            [] { return false; });
  (*scheduler)->Shutdown(absl::ZeroDuration());
  const FireStats::Local all = record.stats.Merged();
  if (const std::string& path = args.String("fired-file"); !path.empty()) {
    // n * duration bytes, job-major (job i's second k at i * duration + k):
    // 1 = ran here, 0 = not. The lateness goes in the line (late_hist).
    std::ofstream f(path, std::ios::binary);
    std::vector<char> row(duration);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < duration; ++k)
        row[k] = all.ran.Test(k * n + i) ? 1 : 0;
      f.write(row.data(), duration);
    }
  }
  const int64_t ran = all.ran.Count();
  const int64_t extra = all.extra;
  nlohmann::json line = Header("cron", n, args);
  line["register_s"] = register_s;
  line["config"]["start_after_register"] = start_after_register;
  line["duration_s"] = duration;
  line["fires"] = ran + extra;
  line["expected"] = n * duration;
  line["missed"] = n * duration - ran;
  line["extra"] = extra;
  line["early"] = record.early.load();
  AddLateness(all.late, line);
  // Each second's latest fire: a p99 over the window is decided by its
  // slowest second or two.
  nlohmann::json by_second = nlohmann::json::array();
  for (int64_t us : all.slot_max_us)
    by_second.push_back(static_cast<double>(us / 10) * 1e-2);
  line["late_max_ms_by_second"] = std::move(by_second);
  if (!args.String("fired-file").empty()) {
    // The lateness histogram's non-empty buckets, [upper edge µs, count].
    nlohmann::json hist = nlohmann::json::array();
    for (const auto& [edge, count] : all.late.Buckets())
      hist.push_back({edge, count});
    line["late_hist"] = std::move(hist);
  }
  line["cpu_window_s"] = cpu_window_s;
  line["max_rss_mb"] = MaxRssMb();
  line["lease_lost"] = lease_lost.load();
  out << line.dump() << std::endl;
  return 0;
}

int RunRegister(const std::vector<std::string>& argv, std::ostream& out) {
  Args args;
  if (!Args::Parse("register", argv, WithSchedulerDefaults({{"n", "100000"}}),
                   &args)) {
    return 2;
  }
  const int64_t n = args.Int("n");
  StartWatchdog("register", args);
  auto scheduler = StartScheduler(args);
  if (!scheduler.ok()) return Fail("register", scheduler.status());

  std::vector<JobSpec> specs;
  specs.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    JobSpec spec = BenchSpec(absl::StrCat("r", i));
    spec.trigger.expression =
        absl::StrCat(i % 60, " ", (i / 60) % 60, " ", (i / 3600) % 24, " ",
                     1 + (i / 86400) % 28, " * *");
    spec.trigger.dialect = cron::Dialect::kSeconds;
    specs.push_back(std::move(spec));
  }
  // The jobs share one (no-op) function, as jobs that differ only in their
  // definition do (AttemptContext::Spec() tells them apart).
  const auto fn = std::make_shared<const JobFunction>(
      [](const AttemptContext&) { return absl::OkStatus(); });
  const SteadyClock::time_point add_start = SteadyClock::now();
  for (const JobSpec& spec : specs) {
    absl::Status s = (*scheduler)->AddJob(spec, fn);
    if (!s.ok()) return Fail("register", s);
  }
  const double add_s = SecondsSince(add_start);
  const SteadyClock::time_point remove_start = SteadyClock::now();
  for (const JobSpec& spec : specs) {
    absl::Status s = (*scheduler)->RemoveJob(spec.key);
    if (!s.ok()) return Fail("register", s);
  }
  const double remove_s = SecondsSince(remove_start);
  (*scheduler)->Shutdown(absl::ZeroDuration());

  nlohmann::json line = Header("register", n, args);
  line["add_s"] = add_s;
  line["add_per_s"] = static_cast<double>(n) / add_s;
  line["remove_s"] = remove_s;
  line["remove_per_s"] = static_cast<double>(n) / remove_s;
  line["max_rss_mb"] = MaxRssMb();
  out << line.dump() << std::endl;
  return 0;
}

}  // namespace chime::bench
