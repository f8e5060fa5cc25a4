#include "daemon/membership.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/base/thread_name.h"
#include "src/driver/clock_offset.h"

namespace chime::daemon {

Membership::Membership(Store& store, std::string node, std::string holder,
                       absl::Duration ttl, Logger& log)
    : store_(store),
      lease_(absl::StrCat(kMemberLeasePrefix, node)),
      holder_(std::move(holder)),
      ttl_(ttl),
      log_(log) {}

void Membership::Start() {
  if (thread_.joinable()) return;
  thread_ = base::NamedThread("chime-members", [this] { Run(); });
}

void Membership::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (!thread_.joinable()) return;
  thread_.join();
  if (held_.exchange(false)) {
    (void)store_.ReleaseLease(fence_,
                              RealClock::Get().MonoNow() + absl::Seconds(5));
  }
}

void Membership::Run() {
  // Renewals every third of the ttl; a lost or refused lease is tried again
  // at the same pace.
  const absl::Duration period = ttl_ / 3;
  bool told_taken = false;
  for (;;) {
    const MonoTime deadline = RealClock::Get().MonoNow() + period;
    const absl::Time sent = absl::Now();
    const auto measure = [&](const LeaseGrant& grant) {
      const std::optional<driver::ClockOffset> offset =
          driver::MeasureClockOffset(grant.store_time, sent, absl::Now());
      if (!offset.has_value()) return;
      std::lock_guard<std::mutex> lock(mu_);
      offset_ = offset->offset;
    };
    if (held_.load()) {
      absl::StatusOr<LeaseGrant> renewed =
          store_.RenewLease(fence_, ttl_, deadline);
      if (renewed.ok()) measure(*renewed);
      if (absl::IsFailedPrecondition(renewed.status())) {
        held_ = false;  // expired and taken, or released: acquire again
        log_.Warn("lost this node's member lease; acquiring it again",
                  {{"lease", lease_}});
      }
    } else {
      absl::StatusOr<LeaseGrant> grant =
          store_.AcquireLease(lease_, holder_, ttl_, deadline);
      if (grant.ok()) {
        measure(*grant);
        fence_ = Fence{lease_, grant->token};
        held_ = true;
        told_taken = false;
      } else if (absl::IsAlreadyExists(grant.status()) && !told_taken) {
        // Another live process has this name (or this node's earlier
        // incarnation, until its lease expires).
        log_.Warn("node_name in use by a live member; waiting for it",
                  {{"lease", lease_},
                   {"detail", std::string(grant.status().message())}});
        told_taken = true;
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, absl::ToChronoNanoseconds(period),
                     [this] { return stop_; })) {
      return;
    }
  }
}

}  // namespace chime::daemon
