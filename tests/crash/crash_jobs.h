// The jobs of the crash test (tests/crash/, docs/testing.md): what crash_host
// registers, and what the checker reads back from the store to know each
// job's delivery and schedule.
//
// Every job fires every second. Across the indices the policies rotate, so
// that a few hundred jobs cover every combination that matters to a crash:
//   - delivery: even indices at-most-once, odd ones at-least-once;
//   - misfire (index / 2 % 4): run_once with the default threshold (1 min,
//     so downtime fires run late), skip, run_once and run_all (max_catchup 2)
//     with a 300 ms threshold (so a restart records downtime fires missed);
//   - overlap (index % 5): allow (decided and claimed up to the scheduler's
//     lookahead before their time), buffer_one, or skip;
//   - retry: at-least-once jobs whose index / 2 % 3 == 0 have two attempts,
//     and crash_host fails some of their first attempts (so runs are found
//     retrying); at-most-once jobs never retry, so that a second execution of
//     their fire can only be a crash re-run.
// The spec depends on the index alone: every incarnation of crash_host adds
// the same jobs, so they keep their generation and watermark.
//
// Thread-safety: pure functions.
#ifndef CHIME_TESTS_CRASH_CRASH_JOBS_H_
#define CHIME_TESTS_CRASH_CRASH_JOBS_H_

#include "chime/job.h"

namespace chime::crash {

// The spec of job `index` (>= 0): id "crash-<index, 3 digits>".
JobSpec CrashJob(int index);

// Whether crash_host fails some first attempts of `spec` (those with retries).
inline bool FailsSomeFirstAttempts(const JobSpec& spec) {
  return spec.retry.max_attempts > 1;
}

}  // namespace chime::crash

#endif  // CHIME_TESTS_CRASH_CRASH_JOBS_H_
