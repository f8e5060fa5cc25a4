// DeferredResponse: an answer a handler gives after it has returned -- once
// a durable write it queued has committed, say -- so that no server thread
// waits for it.
//
//   // In a handler:
//   auto later = http::DeferredResponse::Create();
//   writer.Enqueue(change, [later](absl::Status s) {  // on the writer's thread
//     later->Complete(s.ok() ? Created() : Problem(s));
//   });
//   return later->Response();
//
// The server sends the answer given to Complete as it would have sent one
// the handler returned; Complete only hands it over (it never writes to the
// connection itself). Until then the connection holds no thread. An answer
// that has not come within the server's write_timeout is answered 503 (the
// change may still happen), and a Complete after that is ignored. Only the
// first Complete counts. An answer that is itself deferred is answered 500.
//
// Outside a server -- a test calling Router::Route, a handler that needs
// another handler's answer before it returns -- Wait() blocks until the
// answer is there.
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_SRC_HTTP_DEFERRED_RESPONSE_H_
#define CHIME_SRC_HTTP_DEFERRED_RESPONSE_H_

#include <functional>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "src/http/router.h"

namespace chime::http {

namespace internal {
class DeferredControl;
}  // namespace internal

class DeferredResponse : public std::enable_shared_from_this<DeferredResponse> {
 public:
  static std::shared_ptr<DeferredResponse> Create();

  DeferredResponse(const DeferredResponse&) = delete;
  DeferredResponse& operator=(const DeferredResponse&) = delete;

  // What the handler returns: a Response that says "the answer comes later,
  // from this".
  http::Response Response();

  // Gives the answer. The first call counts; later ones are ignored. Never
  // blocks on the connection.
  void Complete(http::Response answer);

  // Blocks until Complete and returns the answer. For callers outside a
  // server; once (the answer is moved out).
  http::Response Wait();

 private:
  friend class internal::DeferredControl;
  DeferredResponse() = default;

  absl::Mutex mu_;
  std::optional<http::Response> answer_ ABSL_GUARDED_BY(mu_);
  bool completed_ ABSL_GUARDED_BY(mu_) = false;
  // Set by the server while its connection waits: takes the answer.
  std::function<void(http::Response)> deliver_ ABSL_GUARDED_BY(mu_);
};

namespace internal {

// The server's side of a DeferredResponse (server_session.h).
class DeferredControl {
 public:
  // Has `deliver` take the answer: at once, on this thread, if it is there;
  // otherwise on the thread that calls Complete, under the response's lock
  // (so `deliver` must only post work). Once per response.
  static void Attach(DeferredResponse& response,
                     std::function<void(Response)> deliver);
};

// Whether a server still takes work posted from other threads: its Stop
// closes it before the io_context goes, so that an answer completed later
// is dropped instead of posted to an io_context that no longer exists.
class Lifeline {
 public:
  // Runs `post` if the server is still open; false if it was not.
  bool RunIfOpen(const std::function<void()>& post) {
    absl::MutexLock lock(&mu_);
    if (!open_) return false;
    post();
    return true;
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace internal
}  // namespace chime::http

#endif  // CHIME_SRC_HTTP_DEFERRED_RESPONSE_H_
