// How a SchedulerImpl comes to be: CreateScheduler (the options checked, then
// the store recovered -- or, with shards, the member lease taken and RunIds
// reserved) and the constructor (the store writer, the lease keepers, the
// shard keeper). The public methods are in scheduler.cc.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "chime/scheduler.h"
#include "src/driver/driver.h"
#include "src/driver/scheduler_impl.h"

namespace chime {
namespace driver {
namespace {

// The lease of a scheduler whose SchedulerOptions::lease_ttl is infinite: an
// embedded store's open fences out the holders of earlier opens, so it is
// taken once and never renewed.
constexpr absl::Duration kLeaseTtl = absl::Hours(24 * 365);

// With shards: the RunIds a scheduler reserves when it is created (later
// ranges: scheduler_shards.cc).
constexpr int64_t kFirstRunIdRange = int64_t{1} << 16;

// This machine's name, for the lease's holder: on a shared store the holder
// tells the operator which node has it.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace

SchedulerImpl::SchedulerImpl(SchedulerOptions options, Clock& clock,
                             const core::PlanOptions& plan_options,
                             std::shared_ptr<Store> store, Recovered recovered)
    : options_(std::move(options)),
      clock_(clock),
      chain_(options_.interceptors),
      store_(std::move(store)),
      fence_(recovered.fence),
      fences_(options_.shards > 0 ? Fences::Sharded(options_.shards)
                                  : std::make_shared<Fences>(fence_)),
      plan_(
          [&] {
            core::PlanOptions o = plan_options;
            if (o.run_id_end != 0)
              o.more_run_ids = [this] { return MoreRunIds(); };
            return o;
          }(),
          Now()),
      stored_jobs_(std::move(recovered.jobs)),
      lost_runs_(std::move(recovered.lost)),
      pending_runs_(std::move(recovered.pending)),
      recovery_events_(std::move(recovered.events)),
      // Workers wait for an attempt's time on the real clock only (a
      // SimulatedClock's waiters are the scheduler thread alone).
      release_early_(
          &clock_ == &RealClock::Get()
              ? std::max(options_.release_early, absl::ZeroDuration())
              : absl::ZeroDuration()) {
  run_id_end_ = plan_options.run_id_end;
  if (store_ == nullptr) return;  // nothing is written anywhere
  StoreWriter::Options writer;
  writer.report_transitions = static_cast<bool>(options_.on_run_event);
  writer.on_write = options_.on_store_write;
  const bool renewed = options_.lease_ttl != absl::InfiniteDuration();
  writer_ = std::make_unique<StoreWriter>(
      *store_, clock_, fences_, writer, [this] { wakeup_.Notify(); },
      [this, renewed](const absl::Status& s) {
        // With a lease that can expire, a fenced write means another
        // scheduler took over.
        if (renewed && absl::IsFailedPrecondition(s)) return LeaseLost(s);
        Die(absl::StrCat("the store refused a write: ", s.ToString()));
      });
  if (renewed) {
    SkewCheck skew{.max = options_.max_clock_skew,
                   .at_grant = recovered.clock_offset,
                   .grant_store_time = recovered.store_time};
    if (options_.on_clock_skew) {
      skew.on_exceeded = [this](const ClockOffset& offset) {
        options_.on_clock_skew(offset.offset);
      };
    }
    lease_ = std::make_unique<LeaseKeeper>(
        *store_, clock_, fence_, options_.lease_ttl, recovered.granted_at,
        [this](const absl::Status& s) { LeaseLost(s); }, std::move(skew));
  }
  if (options_.shards > 0) {
    shards_.resize(options_.shards);
    ShardKeeper::Callbacks callbacks;
    callbacks.on_gained = [this](const std::vector<GainedShard>& gained) {
      return OnGained(gained);
    };
    callbacks.on_hand_off = [this](const std::vector<uint32_t>& shards) {
      OnHandOff(shards);
    };
    callbacks.on_lost = [this](const absl::Status& s) { LeaseLost(s); };
    callbacks.on_warning = [](const std::string& what) {
      std::fprintf(stderr, "chime::Scheduler: %s\n", what.c_str());
    };
    // As the one scheduler lease: no shard for a node whose clock is off
    // (its fires would start early or late by the offset).
    callbacks.may_acquire = [this] {
      if (lease_ == nullptr) return true;
      const std::optional<ClockOffset> offset = lease_->clock_offset();
      return lease_->Valid(clock_.MonoNow()) &&
             !(offset.has_value() &&
               offset->SurelyExceeds(options_.max_clock_skew));
    };
    shard_keeper_ = std::make_unique<ShardKeeper>(
        *store_, clock_,
        ShardKeeper::Options{options_.shards, options_.node_name,
                             recovered.holder, options_.lease_ttl},
        std::move(callbacks));
  }
}

absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(
    SchedulerOptions options) {
  if (options.worker_threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker_threads: ", options.worker_threads, " is below 1"));
  }
  if (options.max_concurrent_runs < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_concurrent_runs: ", options.max_concurrent_runs, " is below 0"));
  }
  for (size_t i = 0; i < options.interceptors.size(); ++i) {
    if (options.interceptors[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("interceptors[", i, "]: is null"));
    }
  }
  Clock& clock = options.clock != nullptr ? *options.clock : RealClock::Get();
  std::shared_ptr<Store> store = options.store;
  core::PlanOptions plan;
  plan.lookahead = options.lookahead;
  // Without a store a claim is acknowledged at once, and a fire at an
  // instant of its own gains nothing from being decided ahead.
  plan.lookahead_sub_second = options.store != nullptr;
  plan.max_losses = options.max_losses;
  // Transitions go to the store, or to on_run_event; with neither, nowhere.
  plan.record_transitions =
      options.store != nullptr || static_cast<bool>(options.on_run_event);
  // Watermarks are for a store to resume from.
  plan.record_watermarks = options.store != nullptr;
  // A burst of fires is handled a slice at a time, each carried out before
  // the next (PlanOptions::max_timers_per_step): ~2 ms of the scheduler
  // thread a slice.
  plan.max_timers_per_step = 2048;
  plan.max_concurrent_runs = options.max_concurrent_runs == 0
                                 ? options.worker_threads
                                 : options.max_concurrent_runs;
  plan.seed = options.seed != 0
                  ? options.seed
                  : static_cast<uint64_t>(absl::ToUnixNanos(clock.Now()));
  if (absl::Status s = core::Plan::ValidateOptions(plan); !s.ok()) return s;
  // Without a store there is nothing to recover and no lease: the token is
  // 1, RunIds start at 1.
  absl::StatusOr<Recovered> recovered = Recovered{Fence{"", 1}};
  if (store != nullptr) {
    // The holder names this scheduler: two in one process are two holders.
    static std::atomic<int64_t> schedulers{0};
    const absl::Duration ttl = options.lease_ttl == absl::InfiniteDuration()
                                   ? kLeaseTtl
                                   : options.lease_ttl;
    if (ttl <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "lease_ttl: ", absl::FormatDuration(ttl), " is not positive"));
    }
    if (options.node_name.empty()) options.node_name = HostName();
    // " shards <S>" before " url ...", which runs to the end.
    const std::string holder = absl::StrCat(
        options.node_name, " pid ", getpid(), " scheduler ", ++schedulers,
        options.shards > 0 ? absl::StrCat(" shards ", options.shards) : "",
        options.advertise_url.empty() ? "" : " url ", options.advertise_url);
    if (options.shards > 0) {
      // A member of the cluster: shards come later (ShardKeeper), and runs
      // take RunIds from ranges reserved in the store.
      if (options.lease_ttl == absl::InfiniteDuration()) {
        return absl::InvalidArgumentError(
            "shards: needs a finite lease_ttl (a store shared by nodes)");
      }
      recovered = TakeLease(*store, clock,
                            absl::StrCat(kMemberLeasePrefix, options.node_name),
                            holder, ttl, options.max_clock_skew);
      if (!recovered.ok()) return recovered.status();
      absl::StatusOr<RunId> first = store->ReserveRunIds(
          kFirstRunIdRange, clock.MonoNow() + absl::Seconds(60));
      if (!first.ok()) {
        (void)store->ReleaseLease(recovered->fence,
                                  clock.MonoNow() + absl::Seconds(10));
        return first.status();
      }
      plan.first_run_id = *first;
      // Later ranges: SchedulerImpl sets PlanOptions::more_run_ids.
      plan.run_id_end = *first + kFirstRunIdRange;
    } else {
      recovered = Recover(*store, clock, holder, ttl, options.max_clock_skew);
      if (!recovered.ok()) return recovered.status();
    }
  } else if (options.shards > 0) {
    return absl::InvalidArgumentError("shards: needs a store");
  }
  plan.token = recovered->fence.token;
  if (options.shards == 0) plan.first_run_id = recovered->max_run_id + 1;
  return std::unique_ptr<Scheduler>(new SchedulerImpl(std::move(options), clock,
                                                      plan, std::move(store),
                                                      *std::move(recovered)));
}

}  // namespace driver

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    SchedulerOptions options) {
  return driver::CreateScheduler(std::move(options));
}

JobSpec AttemptContext::Spec() const {
  return packed_spec == nullptr ? JobSpec() : packed_spec->Unpack();
}

}  // namespace chime