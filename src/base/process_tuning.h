// Process-wide settings for chime's own executables, called first thing in
// main(). The library never calls them: an embedding program owns its
// locks. (`chime serve` also sets glibc's allocator up for a long-running
// server: cli/serve_command.cc.)
#ifndef CHIME_BASE_PROCESS_TUNING_H_
#define CHIME_BASE_PROCESS_TUNING_H_

#include "absl/synchronization/mutex.h"

namespace chime::base {

// In release builds (NDEBUG), turns off abseil's lock-order check: Debian's
// abseil is built without NDEBUG, so its mutexes look for lock-order cycles
// on every Lock -- a global graph behind a global lock, ~6% of a busy
// scheduler's CPU. Debug and test builds keep the check.
inline void SkipLockOrderChecks() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace chime::base

#endif  // CHIME_BASE_PROCESS_TUNING_H_
