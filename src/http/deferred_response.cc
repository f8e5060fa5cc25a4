#include "src/http/deferred_response.h"

#include <utility>

namespace chime::http {

std::shared_ptr<DeferredResponse> DeferredResponse::Create() {
  return std::shared_ptr<DeferredResponse>(new DeferredResponse());
}

http::Response DeferredResponse::Response() {
  http::Response response;
  response.deferred = shared_from_this();
  return response;
}

void DeferredResponse::Complete(http::Response answer) {
  absl::MutexLock lock(&mu_);
  if (completed_) return;
  completed_ = true;
  if (deliver_) {
    deliver_(std::move(answer));
    deliver_ = nullptr;
  } else {
    answer_ = std::move(answer);
  }
}

http::Response DeferredResponse::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::optional<http::Response>* a) { return a->has_value(); },
      &answer_));
  http::Response answer = *std::move(answer_);
  answer_.reset();
  return answer;
}

void internal::DeferredControl::Attach(DeferredResponse& response,
                                       std::function<void(Response)> deliver) {
  absl::MutexLock lock(&response.mu_);
  if (response.answer_.has_value()) {
    Response answer = *std::move(response.answer_);
    response.answer_.reset();
    deliver(std::move(answer));
    return;
  }
  response.deliver_ = std::move(deliver);
}

}  // namespace chime::http
