// EventHub: run transitions and missed/skipped fire records as server-sent
// events, for GET /v1/events (docs/api.md, "Event stream").
//
// The daemon publishes every chime::RunEvent from the scheduler's
// on_run_event, on the scheduler thread. Publish formats the event once,
// keeps it in a bounded replay buffer and queues it on every subscriber whose
// filter it matches. It never blocks and does no I/O: a subscriber whose
// client cannot keep up (more than Options::max_buffered bytes not yet sent)
// is disconnected and dropped (http::ResponseStream); the scheduler never
// waits for a client.
//
// An event, its data on one line:
//
//   id: 17
//   event: run
//   data: {"job":"ops/report","fire_id":"report:1:2026-11-29T02:30:00Z",
//          "run_id":41,"from":"pending","to":"running","attempt":1,
//          "detail":"","time":"2026-11-29T02:30:00.004Z","fires":1}
//
// `job` is "" when the scheduler could not name the job (recovery of a run
// whose fire it cannot parse); a fire that did not run has run_id 0, from "",
// to "missed" or "skipped", detail the reason and `fires` the count. Ids count
// from 1 since the hub was made (they restart with the daemon).
//
// A subscriber first gets the comment line ": chime events", then -- when it
// sends Last-Event-ID (what EventSource does on reconnecting) -- the events
// after that id that are still kept (the last Options::replay_events; a
// comment says when some were no longer kept, or when the id is higher than
// any so far, i.e. from before a restart, and then all kept ones follow),
// then each new event, and a comment line ": heartbeat" every
// Options::heartbeat so that proxies keep the connection.
//
// Thread-safety: thread-safe. Subscribers' streams end when their client goes
// away, when the HttpServer stops, or when the hub is destroyed (it closes
// them).
#ifndef CHIME_SRC_API_EVENT_HUB_H_
#define CHIME_SRC_API_EVENT_HUB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "src/http/response_stream.h"

namespace chime::api {

class EventHub {
 public:
  struct Options {
    // Subscribers at once; Subscribe refuses more (the route answers 503).
    int max_subscribers = 64;
    // Events kept for Last-Event-ID.
    size_t replay_events = 1000;
    // Bytes a subscriber may be behind before it is disconnected (besides
    // what a replay queued at once).
    size_t max_buffered = 256 << 10;
    absl::Duration heartbeat = absl::Seconds(15);
  };

  // Which events a subscriber gets: those of jobs in `name_space` and of
  // `job`, when set (both: both must hold).
  struct Filter {
    std::optional<std::string> name_space;
    std::optional<JobKey> job;
  };

  // Starts the heartbeat thread.
  explicit EventHub(Options options);
  // Closes every subscriber's stream and joins the thread.
  ~EventHub();
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  // Queues `event` on the matching subscribers (see the file comment).
  void Publish(const RunEvent& event);

  // A new subscriber: its stream, with the opening comment and any replay
  // already queued. ResourceExhausted when max_subscribers are subscribed.
  absl::StatusOr<std::shared_ptr<http::ResponseStream>> Subscribe(
      const Filter& filter, std::optional<uint64_t> last_event_id);

  // Subscribers now.
  int subscribers() const;

  // The text of one event (the "id:", "event:" and "data:" lines and the
  // blank line that ends it).
  static std::string Format(uint64_t id, const RunEvent& event);

 private:
  struct State;
  void Heartbeats();

  const Options options_;
  std::shared_ptr<State> state_;  // OnEnd callbacks hold it weakly
  std::thread heartbeat_;
};

}  // namespace chime::api

#endif  // CHIME_SRC_API_EVENT_HUB_H_
