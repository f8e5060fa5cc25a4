#include "src/http/response_stream.h"

#include <algorithm>
#include <utility>

namespace chime::http {

std::shared_ptr<ResponseStream> ResponseStream::Create(size_t max_buffered) {
  return std::shared_ptr<ResponseStream>(new ResponseStream(max_buffered));
}

void ResponseStream::NotifyLocked() {
  if (notify_ && !notify_pending_) {
    notify_pending_ = true;
    notify_();
  }
}

bool ResponseStream::Write(absl::string_view data) {
  absl::MutexLock lock(&mu_);
  if (closed_ || cut_ || finished_) return false;
  if (pending_.size() + in_flight_ + data.size() > max_buffered_) {
    // The client is not keeping up: drop it rather than grow without bound.
    cut_ = true;
    pending_.clear();
    pending_.shrink_to_fit();
    // Even while a notify is pending: the server may be stuck in a write to
    // this client and must learn of the cut now, not when it completes.
    notify_pending_ = false;
    NotifyLocked();
    return false;
  }
  pending_.append(data.data(), data.size());
  NotifyLocked();
  return true;
}

void ResponseStream::Close() {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  NotifyLocked();
}

bool ResponseStream::open() const {
  absl::MutexLock lock(&mu_);
  return !closed_ && !cut_ && !finished_;
}

void ResponseStream::OnEnd(std::function<void()> fn) {
  {
    absl::MutexLock lock(&mu_);
    if (!finished_) {
      on_end_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

namespace internal {

bool StreamControl::Attach(ResponseStream& stream,
                           std::function<void()> notify) {
  absl::MutexLock lock(&stream.mu_);
  if (stream.finished_) return false;
  stream.notify_ = std::move(notify);
  stream.notify_pending_ = false;
  return true;
}

StreamControl::State StreamControl::Take(ResponseStream& stream,
                                         std::string* out) {
  absl::MutexLock lock(&stream.mu_);
  stream.notify_pending_ = false;
  out->clear();
  if (stream.cut_ || stream.finished_) return State::kCut;
  out->swap(stream.pending_);
  stream.in_flight_ += out->size();
  return stream.closed_ && out->empty() ? State::kDone : State::kMore;
}

bool StreamControl::Cut(const ResponseStream& stream) {
  absl::MutexLock lock(&stream.mu_);
  return stream.cut_ || stream.finished_;
}

void StreamControl::Sent(ResponseStream& stream, size_t n) {
  absl::MutexLock lock(&stream.mu_);
  stream.in_flight_ -= std::min(n, stream.in_flight_);
}

void StreamControl::Finish(ResponseStream& stream) {
  std::vector<std::function<void()>> callbacks;
  {
    absl::MutexLock lock(&stream.mu_);
    if (stream.finished_) return;
    stream.finished_ = true;
    stream.notify_ = nullptr;
    stream.pending_.clear();
    stream.pending_.shrink_to_fit();
    callbacks.swap(stream.on_end_);
  }
  for (std::function<void()>& fn : callbacks) fn();
}

void StreamSet::Add(const std::shared_ptr<ResponseStream>& stream) {
  absl::MutexLock lock(&mu_);
  // Forget the streams that are gone, so the set stays as large as the
  // number of streams alive.
  std::erase_if(streams_, [](const std::weak_ptr<ResponseStream>& s) {
    return s.expired();
  });
  streams_.push_back(stream);
}

void StreamSet::FinishAll() {
  std::vector<std::shared_ptr<ResponseStream>> alive;
  {
    absl::MutexLock lock(&mu_);
    for (const std::weak_ptr<ResponseStream>& s : streams_) {
      if (std::shared_ptr<ResponseStream> stream = s.lock())
        alive.push_back(std::move(stream));
    }
    streams_.clear();
  }
  for (const std::shared_ptr<ResponseStream>& stream : alive) {
    StreamControl::Finish(*stream);
  }
}

}  // namespace internal
}  // namespace chime::http
