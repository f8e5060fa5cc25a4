#include "src/driver/store_writer.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/base/thread_name.h"

namespace chime::driver {
namespace {

// The writer's batch keeps at most this much capacity between batches.
constexpr size_t kKeptItems = 4096;

// A write answered like this may or may not have been applied: send it again.
bool Indeterminate(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) ||
         absl::IsInternal(s) || absl::IsUnknown(s) ||
         absl::IsResourceExhausted(s);
}

// Once the scheduler is shutting down, a write the store keeps refusing as
// unavailable is given up after this many sends.
constexpr int kSendsWhileStopping = 3;

}  // namespace

StoreWriter::StoreWriter(Store& store, Clock& clock,
                         std::shared_ptr<const Fences> fences, Options options,
                         std::function<void()> wake,
                         std::function<void(const absl::Status&)> on_fatal)
    : store_(store),
      clock_(clock),
      fences_(std::move(fences)),
      options_(options),
      wake_(std::move(wake)),
      on_fatal_(std::move(on_fatal)) {
  thread_ = base::NamedThread("chime-writer", [this] { Run(); });
}

StoreWriter::~StoreWriter() { Stop(); }

void StoreWriter::GiveUpWhenDown() {
  std::lock_guard<std::mutex> lock(mu_);
  give_up_ = true;
}

void StoreWriter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    give_up_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StoreWriter::Enqueue(Item item, bool wake) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(item));
    if (!wake || std::exchange(signalled_, true)) return;
  }
  cv_.notify_one();
}

void StoreWriter::PutJob(core::PackedSpec spec, bool paused, int64_t generation,
                         uint32_t job_slot, JobId stored_id) {
  // A note of a stored job's id waits for the next write: a wake-up of this
  // thread per job created through the API was ~4% of the daemon's CPU.
  Enqueue(PutJobItem{std::move(spec), paused, generation, job_slot, stored_id},
          /*wake=*/stored_id == 0);
}

void StoreWriter::DeleteJob(const JobKey& key) { Enqueue(DeleteJobItem{key}); }

void StoreWriter::Persist(core::PersistAction batch) {
  Enqueue(std::move(batch));
}

void StoreWriter::Transition(core::TransitionAction t, absl::Time at,
                             std::string output, int32_t exit_code) {
  Enqueue(TransitionItem{std::move(t), at, std::move(output), exit_code});
}

void StoreWriter::Barrier(std::function<void()> done) {
  Enqueue(BarrierItem{std::move(done)});
}

std::vector<StoreWriter::Completion> StoreWriter::TakeCompletions() {
  std::vector<Completion> done;
  std::lock_guard<std::mutex> lock(mu_);
  done.swap(completed_);
  return done;
}

bool StoreWriter::Idle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) return !busy_ && completed_.empty();
    if (std::exchange(signalled_, true)) return false;
  }
  cv_.notify_one();  // notes only: the thread is woken to take them
  return false;
}

void StoreWriter::Complete(std::vector<Completion> done) {
  if (done.empty()) return;
  bool first;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = completed_.empty();
    if (first) {
      completed_ = std::move(done);
    } else {
      std::move(done.begin(), done.end(), std::back_inserter(completed_));
    }
  }
  if (first) wake_();
}

void StoreWriter::Run() {
  std::vector<Item> items;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      busy_ = false;
      if (!items.empty()) {
        // The scheduler thread may be waiting for the writer to go idle.
        lock.unlock();
        wake_();
        lock.lock();
      }
      items.clear();
      // A burst (100k jobs added at start) must not pin its memory: an item
      // holds a whole JobSpec.
      if (items.capacity() > kKeptItems) std::vector<Item>().swap(items);
      cv_.wait(lock, [&] { return stop_ || signalled_; });
      if (queue_.empty()) return;  // stopping, and everything is written
      busy_ = true;
      signalled_ = false;
      items.swap(queue_);  // queue_ takes the emptied buffer
    }
    size_t i = 0;
    while (i < items.size()) {
      Item& item = items[i];
      if (std::holds_alternative<PutJobItem>(item)) {
        i = WriteJobs(items, i);
      } else if (std::holds_alternative<core::PersistAction>(item)) {
        i = WriteClaims(items, i);
      } else if (std::holds_alternative<TransitionItem>(item)) {
        i = WriteTransitions(items, i);
      } else if (auto* del = std::get_if<DeleteJobItem>(&item)) {
        if (!failed_) {
          absl::Status s = Retry("delete_job", 1, [&](MonoTime deadline) {
            return store_.DeleteJob(del->key, kAnyRevision, deadline);
          });
          if (!s.ok() && !absl::IsNotFound(s)) Fatal(s);
        }
        ++i;
      } else {
        std::vector<Completion> reached;
        reached.emplace_back(
            Reached{std::move(std::get<BarrierItem>(item).done)});
        Complete(std::move(reached));
        ++i;
      }
    }
  }
}

absl::Status StoreWriter::Retry(
    absl::string_view op, size_t items,
    const std::function<absl::Status(MonoTime)>& write) {
  absl::Duration pause = options_.first_retry;
  for (int sends = 1;; ++sends) {
    const MonoTime start = clock_.MonoNow();
    absl::Status s = write(start + options_.call_timeout);
    if (options_.on_write) {
      options_.on_write(StoreWrite{op, items, clock_.MonoNow() - start, s});
    }
    if (!Indeterminate(s)) return s;
    std::unique_lock<std::mutex> lock(mu_);
    if (give_up_ && sends >= kSendsWhileStopping) return s;
    std::fprintf(stderr, "chime: store write failed (%s); sending it again\n",
                 s.ToString().c_str());
    cv_.wait_for(lock, absl::ToChronoNanoseconds(pause));
    pause = std::min(pause * 2, options_.max_retry);
  }
}

void StoreWriter::Fatal(const absl::Status& status) {
  failed_or_given_up_ = true;
  if (Indeterminate(status)) {
    // Given up while shutting down (Retry): not a disagreement with the
    // store. The next scheduler finds what was not written undecided or
    // unfinished.
    std::fprintf(stderr, "chime: store write given up: %s\n",
                 status.ToString().c_str());
    return;
  }
  if (failed_) return;
  failed_ = true;
  on_fatal_(status);
}

JobId StoreWriter::IdOf(uint32_t job_slot) const {
  return job_slot < ids_.size() ? ids_[job_slot] : 0;
}

size_t StoreWriter::WriteJobs(std::vector<Item>& items, size_t i) {
  // A bulk load writes its jobs a few hundred per call: each call unpacks
  // its specs (~1 KB each), and a call of 100,000 would leave ~100 MB of
  // freed memory scattered through the heap.
  constexpr size_t kMaxJobsPerCall = 512;
  std::vector<JobWrite> writes;
  std::vector<int64_t> generations;
  std::vector<uint32_t> slots;
  absl::flat_hash_set<JobKey> keys;                // one write per job per call
  std::vector<std::pair<uint32_t, JobId>> stored;  // written by the caller
  for (; i < items.size() && writes.size() < kMaxJobsPerCall; ++i) {
    auto* put = std::get_if<PutJobItem>(&items[i]);
    if (put == nullptr) break;
    if (put->stored_id != 0) {
      if (!keys.insert(put->spec.Key()).second) break;
      stored.emplace_back(put->job_slot, put->stored_id);
      continue;
    }
    JobSpec spec = put->spec.Unpack();
    if (!keys.insert(spec.key).second) break;
    spec.paused = put->paused;
    writes.push_back(JobWrite{std::move(spec), kAnyRevision});
    generations.push_back(put->generation);
    slots.push_back(put->job_slot);
  }
  if (failed_) return i;
  for (const auto& [slot, id] : stored) {
    if (slot >= ids_.size()) ids_.resize(slot + 1);
    ids_[slot] = id;
  }
  if (writes.empty()) return i;
  absl::StatusOr<std::vector<JobRecord>> records;
  absl::Status s = Retry("put_jobs", writes.size(), [&](MonoTime deadline) {
    records = store_.PutJobs(writes, deadline);
    return records.status();
  });
  if (!s.ok()) {
    Fatal(s);
    return i;
  }
  for (size_t k = 0; k < records->size(); ++k) {
    const JobRecord& record = (*records)[k];
    if (slots[k] == kNoSlot) continue;
    if (record.generation != generations[k]) {
      Fatal(absl::FailedPreconditionError(absl::StrCat(
          "job ", record.spec.key.ToString(), ": the store has generation ",
          record.generation, ", the scheduler ", generations[k])));
      return i;
    }
    if (slots[k] >= ids_.size()) ids_.resize(slots[k] + 1);
    ids_[slots[k]] = record.id;
  }
  return i;
}

absl::Status StoreWriter::Fenced(
    uint32_t shard, absl::string_view op, size_t items,
    const std::function<absl::Status(const Fence&, MonoTime)>& write) {
  const std::optional<Fence> fence = fences_->Get(shard);
  if (!fence.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("a write for shard ", shard, ", which is not held"));
  }
  return Retry(op, items,
               [&](MonoTime deadline) { return write(*fence, deadline); });
}

absl::Status StoreWriter::Claim(
    const std::vector<const core::PersistAction*>& batches) {
  // One ClaimBatch per shard, in the order the shards first appear.
  std::vector<std::pair<uint32_t, ClaimBatch>> claims;
  absl::flat_hash_map<uint32_t, size_t> index;
  const absl::Time at = clock_.Now();
  const auto batch_of = [&](const JobKey& key) -> ClaimBatch& {
    const uint32_t shard = fences_->ShardOf(key);
    auto [it, inserted] = index.try_emplace(shard, claims.size());
    if (inserted) claims.emplace_back(shard, ClaimBatch{}).second.at = at;
    return claims[it->second].second;
  };
  bool unknown = false;  // a job never put
  for (const core::PersistAction* b : batches) {
    for (const core::PersistAction::Claim& c : b->claims) {
      const JobId id = IdOf(c.job_slot);
      unknown |= id == 0;
      batch_of(c.fire.job)
          .claims.push_back({FireRef{id, c.fire.generation,
                                     c.fire.scheduled_time, c.fire.manual},
                             c.run});
    }
    for (const core::PersistAction::Missed& m : b->missed) {
      const JobId id = IdOf(m.job_slot);
      unknown |= id == 0;
      batch_of(m.job).missed.push_back(
          MissedRecord{id, m.generation, m.range.first, m.range.last,
                       m.range.count, m.range.count_capped, m.range.reason});
    }
    for (const core::PersistAction::Watermark& w : b->watermarks) {
      const JobId id = IdOf(w.job_slot);
      unknown |= id == 0;
      WatermarkAdvance& advance = batch_of(w.job).watermarks.emplace_back();
      advance.job = id;
      advance.generation = w.generation;
      advance.watermark = w.watermark;
    }
  }
  // Every job was put before its fires were decided (the queue keeps the
  // order), so an unknown one is a bug.
  if (unknown) {
    Fatal(
        absl::FailedPreconditionError("a persist batch names a job never put"));
    return absl::UnavailableError("store writer failed");
  }
  // Shards are independent: a refusal in one leaves the others' writes in
  // place, and each is accepted again when re-sent (every claim, missed
  // record and watermark is idempotent).
  absl::Status first_error;
  for (const auto& [shard, claim] : claims) {
    const size_t items =
        claim.claims.size() + claim.missed.size() + claim.watermarks.size();
    // (`claim` captured by name: clang before 16 cannot capture a binding.)
    absl::Status s =
        Fenced(shard, "claim_fires", items,
               [&, &claim = claim](const Fence& fence, MonoTime dl) {
                 return store_.ClaimFires(fence, claim, dl);
               });
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

size_t StoreWriter::WriteClaims(std::vector<Item>& items, size_t i) {
  const size_t first = i;
  std::vector<const core::PersistAction*> batches;
  size_t records = 0;
  for (; i < items.size() && records < options_.max_records_per_call; ++i) {
    auto* batch = std::get_if<core::PersistAction>(&items[i]);
    if (batch == nullptr) break;
    batches.push_back(batch);
    records +=
        batch->claims.size() + batch->missed.size() + batch->watermarks.size();
  }
  std::vector<absl::Status> statuses(batches.size());
  if (failed_) {
    statuses.assign(batches.size(), absl::UnavailableError("store failed"));
  } else {
    absl::Status all = Claim(batches);
    if (all.ok() || batches.size() == 1) {
      statuses.assign(batches.size(), all);
    } else {
      // Some batch was refused: ask again one by one, so that each gets its
      // own answer (the ones that are fine go through; nothing of the merged
      // call was written).
      for (size_t k = 0; k < batches.size(); ++k)
        statuses[k] = Claim({batches[k]});
    }
  }
  std::vector<Completion> done;
  done.reserve(batches.size());
  for (size_t k = 0; k < batches.size(); ++k) {
    done.emplace_back(
        Persisted{std::move(std::get<core::PersistAction>(items[first + k])),
                  std::move(statuses[k])});
  }
  Complete(std::move(done));
  return i;
}

size_t StoreWriter::WriteTransitions(std::vector<Item>& items, size_t i) {
  std::vector<RunTransition> batch;
  std::vector<uint32_t> shards;  // of batch's transitions
  std::vector<Completion> done;
  const auto write = [&](uint32_t shard, absl::Span<const RunTransition> ts) {
    absl::Status s = Fenced(shard, "transition_runs", ts.size(),
                            [&](const Fence& fence, MonoTime deadline) {
                              return store_.TransitionRuns(fence, ts, deadline);
                            });
    if (!s.ok()) Fatal(s);
  };
  const auto flush = [&] {
    if (batch.empty() || failed_) return;
    if (std::all_of(shards.begin(), shards.end(),
                    [&](uint32_t s) { return s == shards[0]; })) {
      write(shards[0], batch);
    } else {
      // One call per shard, each keeping its transitions' order.
      absl::flat_hash_map<uint32_t, std::vector<RunTransition>> by_shard;
      std::vector<uint32_t> order;
      for (size_t k = 0; k < batch.size(); ++k) {
        auto [it, inserted] = by_shard.try_emplace(shards[k]);
        if (inserted) order.push_back(shards[k]);
        it->second.push_back(std::move(batch[k]));
      }
      for (uint32_t shard : order) {
        if (!failed_) write(shard, by_shard[shard]);
      }
    }
    batch.clear();
    shards.clear();
  };
  for (; i < items.size(); ++i) {
    auto* item = std::get_if<TransitionItem>(&items[i]);
    if (item == nullptr) break;
    const core::TransitionAction& t = item->t;
    if (t.from == core::RunState::kClaiming) {
      // claiming -> pending is the claim itself. claiming -> cancelled: the
      // Plan gave the run up while its claim was on its way; if the claim
      // got in, the run is pending in the store and is cancelled there too.
      if (t.to == core::RunState::kCancelled && !failed_) {
        flush();
        absl::Status s = Fenced(
            fences_->ShardOf(t.fire.job), "transition_runs", 1,
            [&](const Fence& fence, MonoTime deadline) {
              return store_.TransitionRun(
                  fence,
                  RunTransition{t.run, RunState::kPending, RunState::kCancelled,
                                t.attempt, 0, item->at, t.detail, ""},
                  deadline);
            });
        if (!s.ok() && !absl::IsNotFound(s)) Fatal(s);
      }
    } else {
      batch.push_back(RunTransition{t.run, t.from, t.to, t.attempt,
                                    item->exit_code, item->at, t.detail,
                                    std::move(item->output)});
      shards.push_back(fences_->ShardOf(t.fire.job));
      if (batch.size() >= options_.max_records_per_call) flush();
    }
    if (options_.report_transitions)
      done.emplace_back(Transitioned{std::move(item->t), item->at});
  }
  flush();
  Complete(std::move(done));
  return i;
}

}  // namespace chime::driver
