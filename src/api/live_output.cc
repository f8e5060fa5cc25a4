#include "src/api/live_output.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace chime::api {

// One running attempt: its kept output and its followers.
class LiveOutput::Attempt {
 public:
  Attempt(uint64_t run, int64_t limit)
      : run_(run), limit_(static_cast<size_t>(std::max<int64_t>(limit, 0))) {}

  uint64_t run() const { return run_; }

  // Keeps the tail; memory stays below about twice the limit plus a piece.
  void Keep(absl::string_view bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    kept.append(bytes.data(), bytes.size());
    if (kept.size() > 2 * limit_ + (64 << 10)) Trim();
  }

  // The kept tail as the run history shows it: a marker when the head was
  // dropped, and never starting inside a UTF-8 sequence.
  std::string Text() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Trim();
    if (dropped == 0) return kept;
    size_t skip = 0;
    while (skip < 3 && skip < kept.size() &&
           (static_cast<unsigned char>(kept[skip]) & 0xC0) == 0x80) {
      ++skip;
    }
    return absl::StrCat("[chime: first ", dropped + skip, " bytes dropped]\n",
                        absl::string_view(kept).substr(skip));
  }

  // Writes `bytes` to every follower, dropping those whose stream ended.
  void WriteAll(absl::string_view bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::erase_if(followers,
                  [bytes](const std::shared_ptr<http::ResponseStream>& s) {
                    return !s->Write(bytes);
                  });
  }

  // Ends the attempt for its followers: `trailer`, then the end.
  void Finish(absl::string_view trailer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (ended) return;
    ended = true;
    if (!trailer.empty()) WriteAll(trailer);
    for (const auto& s : followers) s->Close();
    followers.clear();
    kept.clear();
    kept.shrink_to_fit();
  }

  absl::Mutex mu;
  std::string kept ABSL_GUARDED_BY(mu);
  uint64_t dropped ABSL_GUARDED_BY(mu) = 0;
  bool ended ABSL_GUARDED_BY(mu) = false;
  std::vector<std::shared_ptr<http::ResponseStream>> followers
      ABSL_GUARDED_BY(mu);

 private:
  void Trim() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (kept.size() <= limit_) return;
    const size_t cut = kept.size() - limit_;
    kept.erase(0, cut);
    dropped += cut;
  }

  const uint64_t run_;
  const size_t limit_;
};

LiveOutput::~LiveOutput() {
  absl::MutexLock lock(&mu_);
  for (auto& [run, attempt] : running_) {
    absl::MutexLock attempt_lock(&attempt->mu);
    attempt->Finish("");
  }
  for (auto& [run, streams] : waiting_) {
    for (const auto& s : streams) s->Close();
  }
}

std::shared_ptr<LiveOutput::Attempt> LiveOutput::Begin(uint64_t run,
                                                       int64_t limit) {
  auto attempt = std::make_shared<Attempt>(run, limit);
  std::shared_ptr<Attempt> replaced;
  {
    absl::MutexLock lock(&mu_);
    ended_.erase(run);
    std::shared_ptr<Attempt>& slot = running_[run];
    replaced = std::move(slot);
    slot = attempt;
    if (auto it = waiting_.find(run); it != waiting_.end()) {
      absl::MutexLock attempt_lock(&attempt->mu);
      for (auto& s : it->second) {
        if (s->open()) attempt->followers.push_back(std::move(s));
      }
      waiting_.erase(it);
    }
  }
  if (replaced != nullptr) {
    absl::MutexLock lock(&replaced->mu);
    replaced->Finish("");
  }
  return attempt;
}

void LiveOutput::Append(Attempt& attempt, absl::string_view bytes) {
  absl::MutexLock lock(&attempt.mu);
  if (attempt.ended || bytes.empty()) return;
  attempt.Keep(bytes);
  attempt.WriteAll(bytes);
}

void LiveOutput::End(Attempt& attempt, absl::string_view trailer) {
  {
    absl::MutexLock lock(&mu_);
    auto it = running_.find(attempt.run());
    if (it != running_.end() && it->second.get() == &attempt) {
      running_.erase(it);
      RememberEnded(attempt.run());
    }
  }
  absl::MutexLock lock(&attempt.mu);
  attempt.Finish(trailer);
}

void LiveOutput::OnRunEvent(const RunEvent& event) {
  if (event.run_id == 0) return;
  if (event.to != "succeeded" && event.to != "failed" &&
      event.to != "cancelled" && event.to != "lost") {
    return;
  }
  std::vector<std::shared_ptr<http::ResponseStream>> waiting;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = waiting_.find(event.run_id); it != waiting_.end()) {
      waiting = std::move(it->second);
      waiting_.erase(it);
    }
    RememberEnded(event.run_id);
  }
  for (const auto& s : waiting) s->Close();
}

std::optional<std::string> LiveOutput::Snapshot(uint64_t run) const {
  absl::MutexLock lock(&mu_);
  auto it = running_.find(run);
  if (it == running_.end()) return std::nullopt;
  absl::MutexLock attempt_lock(&it->second->mu);
  return it->second->Text();
}

std::shared_ptr<http::ResponseStream> LiveOutput::Follow(uint64_t run) {
  absl::MutexLock lock(&mu_);
  if (auto it = running_.find(run); it != running_.end()) {
    Attempt& attempt = *it->second;
    absl::MutexLock attempt_lock(&attempt.mu);
    const std::string text = attempt.Text();
    auto stream = http::ResponseStream::Create(text.size() + kFollowSlack);
    stream->Write(text);
    attempt.followers.push_back(stream);
    return stream;
  }
  if (ended_.contains(run)) return nullptr;
  std::vector<std::shared_ptr<http::ResponseStream>>& waiting = waiting_[run];
  std::erase_if(waiting, [](const std::shared_ptr<http::ResponseStream>& s) {
    return !s->open();
  });
  auto stream = http::ResponseStream::Create(kFollowSlack);
  waiting.push_back(stream);
  return stream;
}

void LiveOutput::RememberEnded(uint64_t run) {
  ended_[run] = ++ended_count_;
  ended_order_.emplace_back(run, ended_count_);
  while (ended_order_.size() > ended_runs_kept_) {
    const auto [old_run, seq] = ended_order_.front();
    ended_order_.pop_front();
    if (auto it = ended_.find(old_run); it != ended_.end() && it->second == seq)
      ended_.erase(it);
  }
}

}  // namespace chime::api
