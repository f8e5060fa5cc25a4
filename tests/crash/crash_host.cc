// crash_host: a process hosting a Scheduler on a SqliteStore, for the crash
// test (crash_test.cc) to kill with SIGKILL and start again.
//
//   crash_host --dir=<data dir> --witness=<file> --acks=<file>
//              [--jobs=200] [--workers=64] [--seed=0]
//
// It adds --jobs jobs (crash_jobs.h), all firing every second, whose bodies
// append a witness line (crash_log.h), sleep 0-300 ms so that kills land
// mid-run, and succeed -- except that jobs with retries fail about a quarter
// of their first attempts. Every RunEvent goes to the acks file. It runs until
// SIGTERM or SIGINT (then it shuts the scheduler down with a 2 s grace and
// exits 0) or SIGKILL. Any failure to start exits 1 with a message on stderr.
#include <pthread.h>
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "chime/scheduler.h"
#include "src/store/sqlite_store.h"
#include "tests/crash/crash_jobs.h"
#include "tests/crash/crash_log.h"

namespace chime::crash {
namespace {

struct Args {
  std::string dir;
  std::string witness;
  std::string acks;
  int jobs = 200;
  // Enough for every job's body at once: 200 bodies of 150 ms on average a
  // second need about 30.
  int workers = 64;
  uint64_t seed = 0;
};

absl::Status ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    bool ok = true;
    if (absl::ConsumePrefix(&arg, "--dir=")) {
      args->dir = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--witness=")) {
      args->witness = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--acks=")) {
      args->acks = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--jobs=")) {
      ok = absl::SimpleAtoi(arg, &args->jobs) && args->jobs >= 1;
    } else if (absl::ConsumePrefix(&arg, "--workers=")) {
      ok = absl::SimpleAtoi(arg, &args->workers) && args->workers >= 1;
    } else if (absl::ConsumePrefix(&arg, "--seed=")) {
      ok = absl::SimpleAtoi(arg, &args->seed);
    } else {
      ok = false;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad argument \"", argv[i],
          "\"; expected --dir=, --witness=, --acks= (paths), --jobs=, "
          "--workers= (>= 1), --seed="));
    }
  }
  if (args->dir.empty() || args->witness.empty() || args->acks.empty())
    return absl::InvalidArgumentError("--dir, --witness and --acks are needed");
  return absl::OkStatus();
}

// The body of every job: witness first (so a kill at any later moment leaves
// the proof that the attempt began), then work that a kill can interrupt.
JobFunction Body(AppendFile& witness, uint64_t seed, bool fail_some_first) {
  return [&witness, seed, fail_some_first](const AttemptContext& ctx) {
    witness.Append(FormatWitness(ctx));
    const uint64_t h =
        absl::HashOf(seed, ctx.fire_id(), ctx.attempt, ctx.fencing_token);
    absl::SleepFor(absl::Milliseconds(h % 301));
    if (fail_some_first && ctx.attempt == 1 && (h / 301) % 4 == 0)
      return absl::UnavailableError("crash_host: a planned first failure");
    return absl::OkStatus();
  };
}

absl::Status Run(const Args& args, const sigset_t& stop_signals) {
  absl::StatusOr<std::unique_ptr<AppendFile>> witness =
      AppendFile::Open(args.witness);
  if (!witness.ok()) return witness.status();
  absl::StatusOr<std::unique_ptr<AppendFile>> acks =
      AppendFile::Open(args.acks);
  if (!acks.ok()) return acks.status();

  store::SqliteStore::Options store_options;
  store_options.data_dir = args.dir;  // Durability::kSynced
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
      store::SqliteStore::Open(store_options);
  if (!store.ok()) return store.status();

  SchedulerOptions options;
  options.store = std::shared_ptr<Store>(*std::move(store));
  options.worker_threads = args.workers;
  options.seed = args.seed;
  options.on_run_event = [&acks = **acks](const RunEvent& e) {
    acks.Append(FormatAck(e));
  };
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(std::move(options));
  if (!scheduler.ok()) return scheduler.status();
  for (int i = 0; i < args.jobs; ++i) {
    const JobSpec spec = CrashJob(i);
    if (absl::Status s = (*scheduler)
                             ->AddJob(spec, Body(**witness, args.seed,
                                                 FailsSomeFirstAttempts(spec)));
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = (*scheduler)->Start(); !s.ok()) return s;

  int signal = 0;
  sigwait(&stop_signals, &signal);
  (*scheduler)->Shutdown(absl::Seconds(2));
  // The scheduler goes first: it holds the store, whose destructor finishes
  // every queued write.
  scheduler->reset();
  return absl::OkStatus();
}

}  // namespace
}  // namespace chime::crash

int main(int argc, char** argv) {
  // The stop signals are taken by sigwait; block them before any thread
  // starts, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  chime::crash::Args args;
  absl::Status s = chime::crash::ParseArgs(argc, argv, &args);
  if (s.ok()) s = chime::crash::Run(args, stop_signals);
  if (!s.ok()) {
    std::fprintf(stderr, "crash_host: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
