// SchedulerImpl with shards (SchedulerOptions::shards; docs/cluster.md,
// "Shards"): taking shards over, handing them off, and the jobs kept for
// shards other nodes hold.
//
// A gain: the ShardKeeper acquired the leases; RecoverShards records their
// jobs' unfinished runs lost (or keeps them pending), on the keeper's thread;
// then one command on the scheduler thread holds the fences and adds the
// shards' parked jobs to the Plan with what the store had of them (their
// watermarks, runs to take over), as a restart adds every job.
//
// A hand-off: one command removes the shards' jobs from the Plan as Shutdown
// does (runs not started are left pending in the store for the next holder)
// and parks them; CheckHandOffs waits for the shards' running attempts to
// end (cancelling them after handoff_grace), then queues a barrier behind
// their outcomes; once it is reached the fence is dropped and the keeper
// releases the lease -- only if no write failed, so that the next holder
// can trust that a pending run never started.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/driver/scheduler_impl.h"

namespace chime::driver {
namespace {

// RunIds reserved at a time (Store::ReserveRunIds): a store round trip on
// the scheduler thread every this many runs.
constexpr int64_t kRunIdRange = int64_t{1} << 16;

}  // namespace

absl::Status SchedulerImpl::NotHere(const JobKey& key) const {
  const uint32_t shard = fences_->ShardOf(key);
  absl::Status s = absl::FailedPreconditionError(
      absl::StrCat("job ", key.ToString(), " is in shard ", shard,
                   ", which another node schedules"));
  s.SetPayload(kShardElsewherePayload, absl::Cord(absl::StrCat(shard)));
  return s;
}

void SchedulerImpl::Park(core::PackedSpec packed,
                         std::shared_ptr<const JobFunction> fn, bool paused,
                         bool stored) {
  if (!stored && writer_ != nullptr)
    writer_->PutJob(packed, paused, 0, StoreWriter::kNoSlot);
  const JobKey key = packed.Key();
  parked_.insert_or_assign(key,
                           Parked{std::move(packed), std::move(fn), paused});
}

std::pair<core::RunId, core::RunId> SchedulerImpl::MoreRunIds() {
  // Rare (once per range): the scheduler thread waits for the store. While
  // the store does not answer nothing could be claimed anyway.
  for (absl::Duration pause = absl::Milliseconds(10);;
       pause = std::min(pause * 2, absl::Seconds(1))) {
    const MonoTime now = clock_.MonoNow();
    absl::StatusOr<RunId> first =
        store_->ReserveRunIds(kRunIdRange, now + absl::Seconds(10));
    if (first.ok()) {
      run_id_end_ = *first + kRunIdRange;
      return {*first, run_id_end_};
    }
    if (lease_ != nullptr && !lease_->Valid(now)) {
      // The lease is lost (the process is on its way out): RunIds that no
      // claim will be accepted with.
      const core::RunId first_lost = run_id_end_;
      run_id_end_ += kRunIdRange;
      return {first_lost, run_id_end_};
    }
    absl::SleepFor(pause);
  }
}

absl::Status SchedulerImpl::OnGained(const std::vector<GainedShard>& gained) {
  absl::StatusOr<Recovered> r =
      RecoverShards(*store_, clock_, *fences_, gained, options_.max_clock_skew);
  if (!r.ok()) return r.status();
  // Applied, not durable: the keeper's thread (which also acquires and hands
  // off) need not wait for the writer's backlog; the jobs' writes are fenced
  // by the shards' leases whenever they are made.
  return Call<absl::Status>(
      [&] {
        for (const GainedShard& g : gained) {
          fences_->Hold(g.shard, g.fence);
          shards_[g.shard] = ShardPlace{.state = ShardState::kHeld};
        }
        for (const RunEvent& e : r->events) Emit(e);
        for (auto& [key, record] : r->jobs)
          stored_jobs_.insert_or_assign(key, std::move(record));
        for (auto& [key, runs] : r->lost)
          lost_runs_.insert_or_assign(key, std::move(runs));
        for (auto& [key, runs] : r->pending)
          pending_runs_.insert_or_assign(key, std::move(runs));
        // The shards' parked jobs, as AddStoredJob would add them.
        std::vector<PendingAdd> adds;
        for (auto it = parked_.begin(); it != parked_.end();) {
          if (!Scheduled(it->first)) {
            ++it;
            continue;
          }
          Parked& p = it->second;
          JobSpec spec = p.packed.Unpack();
          spec.paused = p.paused;
          absl::StatusOr<core::FireSource> source =
              core::FireSource::Create(spec);
          if (!source.ok())
            Die(source.status().ToString());  // validated before
          PendingAdd add{core::PackedSpec::Pack(spec), *std::move(source),
                         std::move(p.fn), clock_.Now()};
          if (auto stored = stored_jobs_.find(it->first);
              stored != stored_jobs_.end() && !stored->second.deleted) {
            add.stored_id = stored->second.id;
            add.stored_generation = stored->second.generation;
          }
          adds.push_back(std::move(add));
          parked_.erase(it++);
        }
        ApplyAdds(adds, Now());
        return absl::OkStatus();
      },
      Wait::kApplied);
}

void SchedulerImpl::OnHandOff(const std::vector<uint32_t>& shards) {
  // Refused once shutting down: Shutdown then hands every shard back.
  (void)Call<absl::Status>([&] {
    const MonoTime deadline = clock_.MonoNow() + options_.handoff_grace;
    for (uint32_t shard : shards) {
      if (shards_[shard].state != ShardState::kHeld) continue;
      shards_[shard] =
          ShardPlace{.state = ShardState::kHandingOff, .deadline = deadline};
      ++handing_off_;
    }
    for (const JobKey& key : plan_.JobKeys()) {
      if (Scheduled(key)) continue;
      const uint32_t slot = *plan_.JobSlot(key);
      Parked parked{*plan_.Packed(key), functions_[slot], plan_.IsPaused(key)};
      core::Output& out = Scratch();
      // Runs not started stay pending in the store, for the next holder.
      if (absl::Status s = plan_.RemoveJob(key, Now(), &out,
                                           core::Plan::Unstarted::kRelease);
          !s.ok()) {
        Die(s.ToString());
      }
      Absorb(out, false);
      functions_[slot].reset();
      parked_.insert_or_assign(key, std::move(parked));
    }
    return absl::OkStatus();
  });
}

MonoTime SchedulerImpl::CheckHandOffs() {
  MonoTime next = MonoTime::Infinite();
  if (handing_off_ == 0) return next;
  const MonoTime now = clock_.MonoNow();
  std::vector<int> running(shards_.size(), 0);
  for (const auto& [run, attempt] : attempts_) ++running[attempt->ctx.shard];
  for (uint32_t shard = 0; shard < shards_.size(); ++shard) {
    ShardPlace& place = shards_[shard];
    if (place.state != ShardState::kHandingOff || place.released) continue;
    if (running[shard] > 0) {
      const bool cancel = !place.cancelled && now >= place.deadline;
      const bool kill =
          !place.killed && now >= place.deadline + options_.shutdown_kill_grace;
      if (cancel || kill) {
        place.cancelled = true;
        place.killed = place.killed || kill;
        for (auto& [run, attempt] : attempts_) {
          if (attempt->ctx.shard != shard) continue;
          attempt->cancelled.store(true);
          attempt->cancelled.notify_all();
          if (kill) {
            attempt->killed.store(true);
            attempt->killed.notify_all();
          }
        }
      }
      next = std::min(next, place.killed ? MonoTime::Infinite()
                            : place.cancelled
                                ? place.deadline + options_.shutdown_kill_grace
                                : place.deadline);
      continue;
    }
    // Every outcome of the shard's runs is queued: release the lease once
    // they are durable.
    place.released = true;
    writer_->Barrier([this, shard] {
      fences_->Drop(shard);
      shards_[shard] = ShardPlace{};
      --handing_off_;
      shard_keeper_->Released(shard, !writer_->Failed());
    });
  }
  return next;
}

}  // namespace chime::driver
