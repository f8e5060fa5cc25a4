// LiveOutput: the output of the attempts running now, for following it
// (GET /v1/jobs/{namespace}/{id}/runs/{run}/output, docs/api.md).
//
// The daemon's job function calls Begin when an attempt starts, Append with
// the output as the executor reads it (the shell executor's
// ShellOptions::on_output; an HTTP job appends nothing), and End when the
// attempt returns, with what the executor kept but did not stream (an HTTP
// job's response). The scheduler's on_run_event calls OnRunEvent. For each
// running attempt it keeps the last `limit` bytes (the job's output limit,
// as the run history does; a "[chime: first <n> bytes dropped]" line marks a
// cut); End drops them -- the run history has the attempt's output from then
// on.
//
// A follower (Follow) gets what is kept at once, then each piece as it
// comes; its stream closes when the attempt ends. A follower of a run that
// has no attempt yet (pending) waits for the next attempt to begin, or for
// the run to end without one. A follower more than kFollowSlack bytes behind
// is disconnected (http::ResponseStream).
//
// Thread-safety: thread-safe. Append and End run on the attempt's thread and
// never wait for a client.
#ifndef CHIME_SRC_API_LIVE_OUTPUT_H_
#define CHIME_SRC_API_LIVE_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "chime/scheduler.h"
#include "src/http/response_stream.h"

namespace chime::api {

class LiveOutput {
 public:
  // How far a follower may fall behind before it is disconnected.
  static constexpr size_t kFollowSlack = 1 << 20;

  class Attempt;

  // `ended_runs_kept`: how many runs whose attempt ended are remembered (to
  // tell a follower to read the run history).
  explicit LiveOutput(size_t ended_runs_kept = 4096)
      : ended_runs_kept_(ended_runs_kept) {}
  ~LiveOutput();
  LiveOutput(const LiveOutput&) = delete;
  LiveOutput& operator=(const LiveOutput&) = delete;

  // An attempt of `run` begins, keeping the last `limit` bytes. The followers
  // waiting for the run follow it from here. An attempt that has not ended
  // is replaced (its followers' streams close).
  std::shared_ptr<Attempt> Begin(uint64_t run, int64_t limit);
  // Output of `attempt`, as it comes.
  void Append(Attempt& attempt, absl::string_view bytes);
  // `attempt` ended: `trailer` goes to its followers, whose streams then
  // close, and what was kept is dropped.
  void End(Attempt& attempt, absl::string_view trailer = "");
  // A run that ends (succeeded, failed, cancelled, lost) closes the streams
  // of the followers still waiting for an attempt of it.
  void OnRunEvent(const RunEvent& event);

  // What the running attempt of `run` has written so far (the kept tail),
  // or nullopt when none runs here.
  std::optional<std::string> Snapshot(uint64_t run) const;

  // A stream of the output of `run`'s attempt: the running one, or else the
  // next one to begin. Null when the run's latest attempt has ended, or the
  // run has, since this process started: the run history has the output
  // (it may take a moment to be written there).
  std::shared_ptr<http::ResponseStream> Follow(uint64_t run);

 private:
  // Remembers that `run`'s attempt (or the run) ended.
  void RememberEnded(uint64_t run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t ended_runs_kept_;
  mutable absl::Mutex mu_;
  std::map<uint64_t, std::shared_ptr<Attempt>> running_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::vector<std::shared_ptr<http::ResponseStream>>>
      waiting_ ABSL_GUARDED_BY(mu_);
  // Runs whose latest attempt ended, with the order they did in.
  std::map<uint64_t, uint64_t> ended_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<uint64_t, uint64_t>> ended_order_ ABSL_GUARDED_BY(mu_);
  uint64_t ended_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace chime::api

#endif  // CHIME_SRC_API_LIVE_OUTPUT_H_
