#include "src/api/event_hub.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "src/base/thread_name.h"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

constexpr absl::string_view kOpening = ": chime events\n\n";
constexpr absl::string_view kHeartbeat = ": heartbeat\n\n";

bool Matches(const EventHub::Filter& filter, const JobKey& job) {
  if (filter.name_space.has_value() && job.name_space != *filter.name_space)
    return false;
  return !filter.job.has_value() || job == *filter.job;
}

}  // namespace

struct EventHub::State {
  struct Kept {
    uint64_t id;
    JobKey job;
    std::string text;
  };
  struct Subscriber {
    uint64_t key;
    Filter filter;
    std::shared_ptr<http::ResponseStream> stream;
  };

  absl::Mutex mu;
  uint64_t last_id ABSL_GUARDED_BY(mu) = 0;
  std::deque<Kept> kept ABSL_GUARDED_BY(mu);  // oldest first
  std::vector<Subscriber> subscribers ABSL_GUARDED_BY(mu);
  uint64_t next_key ABSL_GUARDED_BY(mu) = 1;

  // The heartbeat thread's wait, on the monotonic clock (abseil's timed
  // waits follow the wall clock).
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;  // guarded by stop_mu

  // Writes `text` to every subscriber `pick` chooses, dropping those whose
  // stream has ended.
  template <class Pick>
  void WriteAll(absl::string_view text, Pick pick)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::erase_if(subscribers, [&](const Subscriber& s) {
      return pick(s) && !s.stream->Write(text);
    });
  }
};

EventHub::EventHub(Options options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {
  heartbeat_ = base::NamedThread("chime-events", [this] { Heartbeats(); });
}

EventHub::~EventHub() {
  {
    std::lock_guard<std::mutex> lock(state_->stop_mu);
    state_->stopping = true;
  }
  state_->stop_cv.notify_all();
  heartbeat_.join();
  std::vector<State::Subscriber> subscribers;
  {
    absl::MutexLock lock(&state_->mu);
    subscribers.swap(state_->subscribers);
  }
  for (State::Subscriber& s : subscribers) s.stream->Close();
}

std::string EventHub::Format(uint64_t id, const RunEvent& event) {
  nlohmann::ordered_json data;
  data["job"] = event.fire.job.id.empty() ? "" : event.fire.job.ToString();
  data["fire_id"] = event.fire_id;
  data["run_id"] = event.run_id;
  data["from"] = event.from;
  data["to"] = event.to;
  data["attempt"] = event.attempt;
  data["detail"] = event.detail;
  data["time"] = time::FormatUtc(event.at);
  data["fires"] = event.fires;
  // One line (JSON escapes newlines); bytes that are not UTF-8 become
  // U+FFFD instead of throwing on the scheduler thread.
  return absl::StrCat(
      "id: ", id, "\nevent: run\ndata: ",
      data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      "\n\n");
}

void EventHub::Publish(const RunEvent& event) {
  absl::MutexLock lock(&state_->mu);
  const uint64_t id = ++state_->last_id;
  State::Kept kept{id, event.fire.job, Format(id, event)};
  state_->WriteAll(kept.text, [&](const State::Subscriber& s) {
    return Matches(s.filter, kept.job);
  });
  if (options_.replay_events == 0) return;
  if (state_->kept.size() >= options_.replay_events) state_->kept.pop_front();
  state_->kept.push_back(std::move(kept));
}

absl::StatusOr<std::shared_ptr<http::ResponseStream>> EventHub::Subscribe(
    const Filter& filter, std::optional<uint64_t> last_event_id) {
  std::shared_ptr<http::ResponseStream> stream;
  uint64_t key = 0;
  {
    absl::MutexLock lock(&state_->mu);
    if (static_cast<int>(state_->subscribers.size()) >=
        options_.max_subscribers) {
      return absl::ResourceExhaustedError(
          absl::StrCat("too many event stream subscribers (",
                       options_.max_subscribers, "); try again later"));
    }
    std::string opening(kOpening);
    if (last_event_id.has_value() && !state_->kept.empty()) {
      const uint64_t first = state_->kept.front().id;
      uint64_t after = *last_event_id;
      if (after > state_->last_id) {
        absl::StrAppend(&opening, ": event ", after,
                        " is not one of this server's (it restarted?); "
                        "replaying the events kept since\n\n");
        after = 0;
      } else if (after + 1 < first) {
        absl::StrAppend(&opening, ": events ", after + 1, " to ", first - 1,
                        " are no longer kept; GET /v1/runs has the runs\n\n");
      }
      for (const State::Kept& k : state_->kept) {
        if (k.id > after && Matches(filter, k.job))
          absl::StrAppend(&opening, k.text);
      }
    }
    stream =
        http::ResponseStream::Create(options_.max_buffered + opening.size());
    stream->Write(opening);
    key = state_->next_key++;
    state_->subscribers.push_back({key, filter, stream});
  }
  // Outside the lock: OnEnd runs the callback at once if the stream has
  // already ended, and the callback takes the lock.
  stream->OnEnd([weak = std::weak_ptr<State>(state_), key] {
    if (std::shared_ptr<State> state = weak.lock()) {
      absl::MutexLock lock(&state->mu);
      std::erase_if(state->subscribers,
                    [key](const State::Subscriber& s) { return s.key == key; });
    }
  });
  return stream;
}

int EventHub::subscribers() const {
  absl::MutexLock lock(&state_->mu);
  return static_cast<int>(state_->subscribers.size());
}

void EventHub::Heartbeats() {
  State& state = *state_;
  std::unique_lock<std::mutex> stop_lock(state.stop_mu);
  while (!state.stop_cv.wait_for(stop_lock,
                                 absl::ToChronoNanoseconds(options_.heartbeat),
                                 [&state] { return state.stopping; })) {
    absl::MutexLock lock(&state.mu);
    state.WriteAll(kHeartbeat, [](const State::Subscriber&) { return true; });
  }
}

}  // namespace chime::api
