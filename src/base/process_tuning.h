// Process-wide settings for chime's own executables, called first thing in
// main(). The library never calls them: an embedding program owns its
// allocator and its locks.
#ifndef CHIME_BASE_PROCESS_TUNING_H_
#define CHIME_BASE_PROCESS_TUNING_H_

#include <malloc.h>

#include "absl/synchronization/mutex.h"

namespace chime::base {

// Bytes of free memory glibc keeps at the top of a heap before it gives
// pages back (M_TRIM_THRESHOLD), and the size from which an allocation gets
// its own mapping (M_MMAP_THRESHOLD).
inline constexpr int kMallocTrimThreshold = 64 << 20;
inline constexpr int kMallocMmapThreshold = 4 << 20;

// In release builds (NDEBUG), turns off abseil's lock-order check: Debian's
// abseil is built without NDEBUG, so its mutexes look for lock-order cycles
// on every Lock -- a global graph behind a global lock, ~6% of a busy
// scheduler's CPU. Debug and test builds keep the check.
inline void SkipLockOrderChecks() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

// For a server answering requests on a pool of threads (`chime serve`). By
// default glibc trims a thread's heap once ~128 KiB at its top are free:
// madvise, a TLB shootdown on every core, and a page fault per page when the
// next request takes the memory again (~7 us each on a VM) -- per request.
// Without it: 25-35% more run listings per second (bench/RESULTS.md,
// 2026-12-01). The cost is up to kMallocTrimThreshold of idle memory per
// heap after a peak; steady use reuses it. Setting the trim threshold stops
// glibc's sliding mmap threshold, so that one is fixed too. (Not for
// chime-bench's scheduler workloads: they measure the library as an
// embedding program gets it, and register was ~5% slower with it.)
inline void KeepFreedHeapMemory() {
  mallopt(M_TRIM_THRESHOLD, kMallocTrimThreshold);
  mallopt(M_MMAP_THRESHOLD, kMallocMmapThreshold);
}

}  // namespace chime::base

#endif  // CHIME_BASE_PROCESS_TUNING_H_
