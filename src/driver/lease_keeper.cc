#include "src/driver/lease_keeper.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/thread_name.h"

namespace chime::driver {

LeaseKeeper::LeaseKeeper(Store& store, Clock& clock, Fence fence,
                         absl::Duration ttl, MonoTime granted_at,
                         std::function<void(const absl::Status&)> on_lost,
                         SkewCheck skew)
    : store_(store),
      clock_(clock),
      fence_(std::move(fence)),
      ttl_(ttl),
      margin_(ttl / 5),
      on_lost_(std::move(on_lost)),
      skew_(std::move(skew)),
      valid_until_ns_(0),
      offset_(skew_.at_grant),
      reading_time_(skew_.grant_store_time),
      reading_sent_(granted_at) {
  SetValidUntil(granted_at + ttl_ - margin_);
}

void LeaseKeeper::Measured(const LeaseGrant& grant, MonoTime sent,
                           const std::optional<ClockOffset>& offset) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (grant.store_time != absl::InfinitePast()) {
      reading_time_ = grant.store_time;
      reading_sent_ = sent;
    }
    if (offset.has_value()) offset_ = offset;
  }
  if (!offset.has_value()) return;  // our clock stepped back meanwhile
  if (!skew_reported_ && offset->SurelyExceeds(skew_.max)) {
    skew_reported_ = true;
    if (skew_.on_exceeded) skew_.on_exceeded(*offset);
  }
}

void LeaseKeeper::SetValidUntil(MonoTime t) {
  valid_until_ns_.store(absl::ToInt64Nanoseconds(t.SinceOrigin()),
                        std::memory_order_release);
}

void LeaseKeeper::Start() {
  if (thread_.joinable()) return;
  thread_ = base::NamedThread("chime-lease", [this] { Run(); });
  watchdog_ = base::NamedThread("chime-leasewd", [this] { Watch(); });
}

void LeaseKeeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::ReportLost(const absl::Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_) return;
    lost_ = true;
    Invalidate();
  }
  cv_.notify_all();
  on_lost_(why);
}

void LeaseKeeper::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_ && !lost_) {
    const MonoTime now = clock_.MonoNow();
    // A renewal sent before the deadline may still answer OK until its own
    // deadline (Run decides then, as it always has); past both, it hangs.
    const MonoTime until =
        std::max(valid_until(),
                 MonoTime::FromSinceOrigin(absl::Nanoseconds(
                     renewal_deadline_ns_.load(std::memory_order_acquire))));
    if (now >= until) {
      lock.unlock();
      ReportLost(absl::UnavailableError(absl::StrCat(
          "lost the store's lease \"", fence_.lease, "\" (token ", fence_.token,
          "): not renewed within its ttl of ", absl::FormatDuration(ttl_),
          "; a renewal is still waiting for the "
          "store")));
      return;
    }
    // Real time, as Run's waits; a renewal moves the deadline and the next
    // pass reads it again.
    cv_.wait_for(lock, absl::ToChronoNanoseconds(until - now));
  }
}

void LeaseKeeper::Run() {
  const absl::Duration period = ttl_ / 3;
  absl::Status last = absl::OkStatus();
  for (;;) {
    {
      // Real time: the renewal must keep pace with the store's clock, which
      // a simulated clock does not drive.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, absl::ToChronoNanoseconds(period),
                   [this] { return stop_ || lost_; });
      if (stop_ || lost_) return;
    }
    const MonoTime sent = clock_.MonoNow();
    if (!Valid(sent)) break;
    const absl::Time sent_wall = clock_.Now();
    renewal_deadline_ns_.store(
        absl::ToInt64Nanoseconds((sent + period).SinceOrigin()),
        std::memory_order_release);
    absl::StatusOr<LeaseGrant> renewed =
        store_.RenewLease(fence_, ttl_, sent + period);
    renewal_deadline_ns_.store(0, std::memory_order_release);
    if (renewed.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (lost_) return;  // reported by Watch meanwhile
        SetValidUntil(sent + ttl_ - margin_);
      }
      Measured(
          *renewed, sent,
          MeasureClockOffset(renewed->store_time, sent_wall, clock_.Now()));
      continue;
    }
    last = renewed.status();
    // Another holder has it: no later renewal can succeed.
    if (absl::IsFailedPrecondition(last)) break;
  }
  ReportLost(absl::UnavailableError(absl::StrCat(
      "lost the store's lease \"", fence_.lease, "\" (token ", fence_.token,
      "): not renewed within its ttl of ", absl::FormatDuration(ttl_),
      last.ok() ? "" : absl::StrCat("; last answer: ", last.ToString()))));
}

}  // namespace chime::driver
