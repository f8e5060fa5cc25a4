// The store workload of chime-bench: durable claims and run transitions per
// second through store::SqliteStore or store::PostgresStore
// (store_backends.h), beside the raw flush rate of the disk under the
// benchmark's directory (see RunStore in bench/workloads.h).
//
// Each writer thread plays a scheduler's hot path for its own job: claim
// `batch` fires (one ClaimFires under the lease's fence), start their runs
// (one TransitionRuns of `batch` pending -> running), finish them (one
// TransitionRuns of `batch` running -> succeeded). Every claim and every
// transition is an item; every call is one durable write, acknowledged after
// the store thread's group commit. With batch 1 each item is its own call, so
// any gain over one flush per item comes from group commit across writers.
// Each run has jobs and RunIds of its own (bench-<run>-<writer>, RunIds from
// (run << 48) + ((writer + 1) << 40)), so that runs may share a database.
//
// The raw flush probe writes a 4 KiB block and calls fdatasync, in the same
// directory as the database: SQLite 3.40 in WAL mode with synchronous=FULL
// syncs each commit with one fdatasync of the WAL (seen with strace), and the
// probe overwrites a 4 MiB file in rotation, as a WAL is reused.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench/bench_args.h"
#include "bench/bench_clock.h"
#include "bench/store_backends.h"
#include "bench/workloads.h"
#include "chime/clock.h"
#include "chime/store.h"
#include "src/base/status_macros.h"

namespace chime::bench {
namespace {

constexpr size_t kFlushBlockBytes = 4096;
constexpr int64_t kFlushFileBlocks = 1024;
constexpr int64_t kMaxFlushes = 1'000'000;
// Every store call gets this long before it counts as failed.
constexpr absl::Duration kCallTimeout = absl::Seconds(30);

// A fresh directory `parent/chime-store-bench.XXXXXX`, removed with everything
// in it when the TempDir is destroyed.
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> Create(
      const std::string& parent) {
    std::string pattern = parent + "/chime-store-bench.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::UnavailableError(absl::StrCat(
          "cannot create a directory in ", parent, ": ", std::strerror(errno)));
    }
    return std::unique_ptr<TempDir>(new TempDir(std::move(pattern)));
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

struct LatencySummary {
  int64_t count = 0;
  double seconds = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

LatencySummary Summarize(std::vector<double>& ms, double seconds) {
  return {static_cast<int64_t>(ms.size()), seconds, Percentile(ms, 0.50),
          Percentile(ms, 0.99)};
}

// Overwrites one block in place and calls fdatasync, repeated for `limit`
// (or kMaxFlushes), in a file written and synced beforehand: a pure flush,
// with no change of the file's size to journal.
absl::StatusOr<LatencySummary> MeasureRawFlush(const std::string& dir,
                                               absl::Duration limit) {
  const std::string path = dir + "/flush-probe";
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  const std::vector<char> block(kFlushBlockBytes, 'c');
  auto write_block = [&](int64_t i) {
    const off_t offset = (i % kFlushFileBlocks) * kFlushBlockBytes;
    return ::pwrite(fd, block.data(), block.size(), offset) ==
           static_cast<ssize_t>(block.size());
  };
  bool ok = true;
  for (int64_t i = 0; ok && i < kFlushFileBlocks; ++i) ok = write_block(i);
  ok = ok && ::fdatasync(fd) == 0;
  std::vector<double> ms;
  const SteadyClock::time_point start = SteadyClock::now();
  const SteadyClock::time_point end = start + absl::ToChronoNanoseconds(limit);
  for (int64_t i = 0; ok && i < kMaxFlushes && SteadyClock::now() < end; ++i) {
    const SteadyClock::time_point t = SteadyClock::now();
    ok = write_block(i) && ::fdatasync(fd) == 0;
    ms.push_back(SecondsSince(t) * 1e3);
  }
  const double seconds = SecondsSince(start);
  const int err = errno;
  ::close(fd);
  ::unlink(path.c_str());
  if (!ok) {
    return absl::UnavailableError(
        absl::StrCat("write or fdatasync of ", path, ": ", std::strerror(err)));
  }
  return Summarize(ms, seconds);
}

struct RunConfig {
  Durability durability = Durability::kSynced;
  int writers = 1;
  int batch = 1;
  absl::Duration duration;
  int64_t max_items = 0;  // all writers together
};

struct RunResult {
  int64_t items = 0;
  int64_t commits = 0;  // store transactions during the run
  double cpu = 0;       // process CPU seconds per second during the run
  double machine = 0;   // the machine's busy cores during the run
  LatencySummary calls;
};

// One writer's loop (see the file comment). Stops at `end`, when `items`
// reaches `max_items`, or when `failed` is set; sets `failed` on an error.
absl::Status WriterLoop(Store& store, const Fence& fence, const JobRecord& job,
                        RunId first_run, const RunConfig& config,
                        SteadyClock::time_point end,
                        std::atomic<int64_t>& items, std::atomic<bool>& failed,
                        std::vector<double>& call_ms) {
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  auto timed = [&](auto call) -> absl::Status {
    const SteadyClock::time_point t = SteadyClock::now();
    absl::Status s = call(RealClock::Get().MonoNow() + kCallTimeout);
    call_ms.push_back(SecondsSince(t) * 1e3);
    if (s.ok()) items.fetch_add(config.batch, std::memory_order_relaxed);
    return s;
  };
  ClaimBatch claims;
  std::vector<RunTransition> starts(config.batch), ends(config.batch);
  int64_t seq = 0;
  while (SteadyClock::now() < end && !failed.load() &&
         items.load(std::memory_order_relaxed) < config.max_items) {
    claims.claims.clear();
    claims.at = t0 + absl::Seconds(seq);
    for (int i = 0; i < config.batch; ++i, ++seq) {
      const RunId run = first_run + static_cast<RunId>(seq);
      claims.claims.push_back(
          {FireRef{job.id, job.generation, t0 + absl::Seconds(seq)}, run});
      starts[i] = {run, RunState::kPending, RunState::kRunning, 1,
                   0,   claims.at};
      ends[i] = {run, RunState::kRunning, RunState::kSucceeded, 1, 0, claims.at,
                 "ok"};
    }
    RETURN_IF_ERROR(timed([&](MonoTime deadline) {
      return store.ClaimFires(fence, claims, deadline);
    }));
    RETURN_IF_ERROR(timed([&](MonoTime deadline) {
      return store.TransitionRuns(fence, starts, deadline);
    }));
    RETURN_IF_ERROR(timed([&](MonoTime deadline) {
      return store.TransitionRuns(fence, ends, deadline);
    }));
  }
  return absl::OkStatus();
}

// Opens a fresh store, registers one job per writer, takes the lease and runs
// the writers together. `run` numbers the runs of one process.
absl::StatusOr<RunResult> RunWriters(StoreBackend& backend, int run,
                                     const RunConfig& config) {
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                   backend.OpenFresh(config.durability, config.writers));
  std::vector<JobWrite> writes(config.writers);
  for (int w = 0; w < config.writers; ++w) {
    writes[w].spec.key.id = absl::StrCat("bench-", run, "-", w);
    writes[w].spec.trigger.expression = "* * * * * *";
  }
  const MonoTime setup_deadline = RealClock::Get().MonoNow() + kCallTimeout;
  ASSIGN_OR_RETURN(std::vector<JobRecord> jobs,
                   store->PutJobs(writes, setup_deadline));
  ASSIGN_OR_RETURN(LeaseGrant grant,
                   store->AcquireLease("scheduler", "chime-bench",
                                       absl::Hours(1), setup_deadline));
  const Fence fence{"scheduler", grant.token};

  std::atomic<int64_t> items{0};
  std::atomic<bool> failed{false};
  std::vector<std::vector<double>> call_ms(config.writers);
  std::vector<absl::Status> statuses(config.writers);
  std::vector<std::thread> threads;
  const std::optional<int64_t> commits_before = backend.Commits(*store);
  const double cpu_before = ProcessCpuSeconds();
  std::vector<int64_t> machine_ticks;
  MachineBusyCores(machine_ticks);
  const SteadyClock::time_point start = SteadyClock::now();
  const SteadyClock::time_point end =
      start + absl::ToChronoNanoseconds(config.duration);
  for (int w = 0; w < config.writers; ++w) {
    threads.emplace_back([&, w] {
      statuses[w] = WriterLoop(
          *store, fence, jobs[w],
          (static_cast<RunId>(run) << 48) + ((static_cast<RunId>(w) + 1) << 40),
          config, end, items, failed, call_ms[w]);
      if (!statuses[w].ok()) failed.store(true);
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds = SecondsSince(start);
  for (const absl::Status& s : statuses) RETURN_IF_ERROR(s);

  RunResult result;
  result.items = items.load();
  result.cpu = (ProcessCpuSeconds() - cpu_before) / seconds;
  result.machine = MachineBusyCores(machine_ticks);
  std::vector<double> all;
  for (const std::vector<double>& v : call_ms)
    all.insert(all.end(), v.begin(), v.end());
  result.calls = Summarize(all, seconds);
  const std::optional<int64_t> commits_after = backend.Commits(*store);
  result.commits =
      commits_after ? *commits_after - *commits_before : result.calls.count;
  return result;
}

// "1,8,64" -> {1, 8, 64}; each in [1, max].
absl::StatusOr<std::vector<int>> ParseList(const std::string& flag,
                                           const std::string& text, int max) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 1 || v > max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, ": \"", part, "\" is not a number in 1-", max));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::vector<Durability>> ParseDurability(
    const std::string& text) {
  using D = Durability;
  if (text == "synced") return std::vector<D>{D::kSynced};
  if (text == "relaxed") return std::vector<D>{D::kRelaxed};
  if (text == "both") return std::vector<D>{D::kSynced, D::kRelaxed};
  return absl::InvalidArgumentError(absl::StrCat(
      "--durability: \"", text, "\" is not synced, relaxed or both"));
}

// The directory of the running binary: inside the build directory.
std::string BinaryDir() {
  std::error_code ec;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

const char* Name(Durability d) {
  return d == Durability::kSynced ? "synced" : "relaxed";
}

absl::StatusOr<std::unique_ptr<StoreBackend>> MakeBackend(const Args& args,
                                                          const TempDir& dir) {
  const std::string& kind = args.String("store");
  if (kind == "sqlite" && args.String("conninfo").empty()) {
    return MakeSqliteBackend(dir.path());
  }
  if (kind == "postgres") return MakePostgresBackend(args.String("conninfo"));
  return absl::InvalidArgumentError(
      absl::StrCat("--store: \"", kind,
                   "\" is not sqlite or postgres (--conninfo needs postgres)"));
}

absl::Status Run(const Args& args, std::ostream& out) {
  ASSIGN_OR_RETURN(std::vector<int> writer_counts,
                   ParseList("writers", args.String("writers"), 1024));
  ASSIGN_OR_RETURN(std::vector<int> batches,
                   ParseList("batch", args.String("batch"), 100'000));
  ASSIGN_OR_RETURN(std::vector<Durability> modes,
                   ParseDurability(args.String("durability")));
  double seconds = 0, flush_seconds = 0, latency_seconds = 0;
  int64_t max_items = 0, latency_writes = 0;
  if (!absl::SimpleAtod(args.String("seconds"), &seconds) ||
      !absl::SimpleAtod(args.String("flush-seconds"), &flush_seconds) ||
      !absl::SimpleAtod(args.String("latency-seconds"), &latency_seconds) ||
      !absl::SimpleAtoi(args.String("max-items"), &max_items) ||
      !absl::SimpleAtoi(args.String("latency-writes"), &latency_writes) ||
      seconds <= 0 || seconds > 3600 || flush_seconds <= 0 ||
      flush_seconds > 3600 || latency_seconds <= 0 || latency_seconds > 3600 ||
      max_items < 1 || latency_writes < 1) {
    return absl::InvalidArgumentError(
        "--seconds, --flush-seconds, --latency-seconds: a number in (0, 3600]; "
        "--max-items, --latency-writes: a positive integer");
  }
  const std::string parent =
      args.String("dir").empty() ? BinaryDir() : args.String("dir");
  ASSIGN_OR_RETURN(std::unique_ptr<TempDir> dir, TempDir::Create(parent));
  ASSIGN_OR_RETURN(std::unique_ptr<StoreBackend> backend,
                   MakeBackend(args, *dir));
  out << "chime-bench store: durable writes through " << backend->Describe()
      << "\ndirectory: " << dir->path() << " (removed at exit)\n\n";

  // The disk's flush latency changes from minute to minute on a shared
  // machine, so every run is compared with a probe made just before it.
  struct Row {
    LatencySummary flush;
    RunResult run;
  };
  int run_number = 0;
  auto measure = [&](const RunConfig& config) -> absl::StatusOr<Row> {
    Row row;
    ASSIGN_OR_RETURN(
        row.flush, MeasureRawFlush(dir->path(), absl::Seconds(flush_seconds)));
    ASSIGN_OR_RETURN(row.run, RunWriters(*backend, run_number++, config));
    return row;
  };

  RunConfig single;
  single.duration = absl::Seconds(latency_seconds);
  single.max_items = latency_writes;
  ASSIGN_OR_RETURN(Row one, measure(single));
  // One writer's calls follow each other, as the probe's flushes do: the
  // time per call is seconds / count (the flush latency is often bimodal).
  auto mean_ms = [](const LatencySummary& l) {
    return l.seconds * 1e3 / std::max<int64_t>(l.count, 1);
  };
  out << absl::StrFormat(
      "raw flush (4 KiB overwrite + fdatasync): %.0f flushes/s = %.3f ms "
      "each; p50 %.3f ms, p99 %.3f ms\n"
      "one acknowledged write (synced, 1 writer, 1 item per call): %.3f ms "
      "each; p50 %.3f ms, p99 %.3f ms (%d writes)\n"
      "  = %.2fx a raw flush (time each), %.2fx at p50, %.2fx at p99\n\n",
      one.flush.count / one.flush.seconds, mean_ms(one.flush), one.flush.p50_ms,
      one.flush.p99_ms, mean_ms(one.run.calls), one.run.calls.p50_ms,
      one.run.calls.p99_ms, one.run.calls.count,
      mean_ms(one.run.calls) / mean_ms(one.flush),
      one.run.calls.p50_ms / one.flush.p50_ms,
      one.run.calls.p99_ms / one.flush.p99_ms);

  out << absl::StrFormat(
      "%-7s %5s %7s %9s %8s %9s %10s %9s %9s %4s %4s %8s %9s %7s\n", "mode",
      "batch", "writers", "items/s", "calls/s", "commits/s", "writes/cmt",
      "call p50", "call p99", "cpu", "busy", "flush/s", "flush p50",
      "items/flush");
  for (Durability mode : modes) {
    for (int batch : batches) {
      for (int writers : writer_counts) {
        ASSIGN_OR_RETURN(Row row, measure({mode, writers, batch,
                                           absl::Seconds(seconds), max_items}));
        const RunResult& r = row.run;
        const double s = r.calls.seconds;
        const double flushes_per_s = row.flush.count / row.flush.seconds;
        out << absl::StrFormat(
                   "%-7s %5d %7d %9.0f %8.0f %9.0f %10.1f %6.3f ms %6.3f ms "
                   "%4.2f %4.2f %8.0f %6.3f ms %7.1f\n",
                   Name(mode), batch, writers, r.items / s, r.calls.count / s,
                   r.commits / s,
                   static_cast<double>(r.calls.count) /
                       std::max<int64_t>(r.commits, 1),
                   r.calls.p50_ms, r.calls.p99_ms, r.cpu, r.machine,
                   flushes_per_s, row.flush.p50_ms,
                   (r.items / s) / flushes_per_s)
            << std::flush;
      }
    }
  }
  out << "\nitems: claims + transitions, each durable when acknowledged; "
         "writes/cmt: calls per group commit;\ncpu: process CPU seconds per "
         "second; busy: the machine's busy cores (every process, a database "
         "server\n"
         "included); flush: the raw probe just before the run; items/flush: "
         "items/s over its flushes/s\n";
  return absl::OkStatus();
}

}  // namespace

int RunStore(const std::vector<std::string>& argv, std::ostream& out) {
  Args args;
  if (!Args::Parse("store", argv,
                   {{"dir", ""},
                    {"store", "sqlite"},
                    {"conninfo", ""},
                    {"writers", "1,8,64"},
                    {"batch", "1,100"},
                    {"durability", "synced"},
                    {"seconds", "3"},
                    {"max-items", "10000000"},
                    {"flush-seconds", "1"},
                    {"latency-seconds", "5"},
                    {"latency-writes", "2000"}},
                   &args)) {
    return 2;
  }
  if (absl::Status s = Run(args, out); !s.ok()) {
    std::cerr << "chime-bench store: " << s << "\n";
    return 1;
  }
  return 0;
}

}  // namespace chime::bench
