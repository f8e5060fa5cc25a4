// The crash test's checker: after crash_host has been killed many times and
// stopped once cleanly, it holds three records of what happened against each
// other -- the store (what the schedulers recorded), the witness (what job
// bodies really began) and the acks (what the schedulers reported recorded;
// both files are described in crash_log.h) -- and lists every violation of
// what chime promises across kill -9 (include/chime/scheduler.h,
// "Restarts"):
//
//   claimed_twice          a fire with two runs: two RunIds for one FireKey in
//                          the store, or in the witness;
//   acks_missing           an acknowledged write the store does not have: a
//                          run transition (from, to, attempt) not in the run's
//                          history, or a missed/skipped fire with no missed
//                          record of that job, generation, first fire and
//                          reason. (claiming -> pending is the claim itself:
//                          the run must exist; claiming -> cancelled is written
//                          as pending -> cancelled if the claim got in.)
//   fires_undecided        a scheduled time of a job's watermark generation,
//                          between its earliest decided fire and its stored
//                          watermark, with neither a claim nor a missed record
//                          covering it;
//   witness_unknown        a witness line whose run the store does not have,
//                          or has for another fire (or a line that is not
//                          one);
//   at_most_once_repeated  an at-most-once fire whose body began twice;
// and, as invariants of the same history:
//   claimed_and_missed     a fire with a claim and also inside a missed record
//                          (but for "quota": a claimed run that waited too
//                          long for a slot, cancelled before any attempt);
//   unfinished             a run left running by the clean Shutdown (which
//                          waits for every running attempt), or one left
//                          pending, retrying, or lost although its job is
//                          at-least-once, whose fire was due more than
//                          kReleaseSlack before the stop began: the last
//                          scheduler should have started it (a stuck run).
//                          Later ones were released by Shutdown to the next
//                          scheduler, as designed, and are counted in
//                          `released`.
//
// Each violation is one line naming the fire or run and the evidence (store
// contents, witness or ack lines). The counts say what was exercised.
//
// Thread-safety: a function; the store must not change while it reads.
#ifndef CHIME_TESTS_CRASH_CRASH_CHECKER_H_
#define CHIME_TESTS_CRASH_CRASH_CHECKER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "chime/store.h"

namespace chime::crash {

struct CrashReport {
  // What the history holds.
  int64_t jobs = 0;
  int64_t runs = 0;                              // claims
  std::map<std::string, int64_t> runs_by_state;  // "succeeded" -> n, ...
  int64_t missed_records = 0;
  int64_t missed_fires = 0;   // the fires they cover (their counts)
  int64_t fires_decided = 0;  // runs + missed_fires
  int64_t fires_checked = 0;  // scheduled times checked by fires_undecided
  int64_t acks = 0;
  int64_t witness_lines = 0;
  int64_t fires_executed = 0;  // distinct fires in the witness
  // At-least-once fires whose body began more than once: under one token
  // (retries within one scheduler) and under several (started again after a
  // crash; allowed, expected sometimes).
  int64_t fires_retried = 0;
  int64_t fires_rerun_after_crash = 0;

  // Violations (see above).
  std::vector<std::string> claimed_twice;
  std::vector<std::string> acks_missing;
  std::vector<std::string> fires_undecided;
  std::vector<std::string> witness_unknown;
  std::vector<std::string> at_most_once_repeated;
  std::vector<std::string> claimed_and_missed;
  std::vector<std::string> unfinished;
  int64_t released = 0;  // unstarted runs left to the next scheduler

  // Each list of violations above with what it means ("a FireKey claimed
  // twice"), for callers that check them all.
  struct Kind {
    const char* what;
    const std::vector<std::string>* violations;
  };
  std::vector<Kind> Violations() const;

  // The counts, a few lines for a reader.
  std::string Counts() const;
};

// Reads everything `store` has (jobs, runs with their history, missed
// records) and checks it against the witness and ack lines (crash_log.h).
// Errors: the store's, if it cannot be read.
// `stopped`: when the clean stop began (the SIGTERM).
absl::StatusOr<CrashReport> CheckCrashHistory(
    Store& store, absl::Span<const std::string> witness,
    absl::Span<const std::string> acks, absl::Time stopped);

// How long before the stop a run left unstarted -- waiting since its fire's
// time, its claim or its last transition, whichever is last -- counts as
// stuck.
inline constexpr absl::Duration kReleaseSlack = absl::Seconds(2);

}  // namespace chime::crash

#endif  // CHIME_TESTS_CRASH_CRASH_CHECKER_H_
