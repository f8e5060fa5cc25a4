// ResponseStream: the body of a response that is produced over time -- an
// event stream, the output of a command as it runs.
//
// A handler creates one, hands it to whatever produces the body (a thread, a
// subscription to a feed), and answers with it:
//
//   // In a handler:
//   auto body = http::ResponseStream::Create();
//   feed.Subscribe(body);  // it calls body->Write(...) from its thread
//   return http::Response{.content_type = "text/event-stream",
//                         .stream = body};
//
// The server sends the status and headers at once, then each Write as it
// comes: HTTP/1.1 chunked transfer encoding (to an HTTP/1.0 client the body
// ends with the connection). A streamed response always closes the
// connection at its end (no keep-alive). The server's read_timeout does not
// apply while a response streams; its write_timeout applies to each write to
// the client. A HEAD request gets the headers only, and the stream ends at
// once.
//
// Writes never block: they are buffered, and the server sends them as fast as
// the client reads. The stream *ends* -- every later Write returns false and
// drops its data, so producers stop -- when:
//   - the producer calls Close (what is buffered is still sent, then the
//     final chunk);
//   - more than `max_buffered` bytes are written and not yet sent: the client
//     reads too slowly, and is disconnected (also a single Write larger than
//     max_buffered);
//   - the client closes the connection (noticed at once: the server watches
//     the connection while it streams), or a write to it does not complete
//     within write_timeout;
//   - the server stops (HttpServer::Stop ends every stream).
//
// OnEnd callbacks run once the stream has ended, whatever the reason (after a
// Close, once the last byte went out or the connection failed): on a server
// thread, or on the thread calling HttpServer::Stop -- never inside Write or
// Close, so a producer may hold its own lock while it writes and take it in
// the callback.
//
// Thread-safety: every method may be called from any thread, concurrently.
#ifndef CHIME_SRC_HTTP_RESPONSE_STREAM_H_
#define CHIME_SRC_HTTP_RESPONSE_STREAM_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace chime::http {

namespace internal {
class StreamControl;
}  // namespace internal

class ResponseStream {
 public:
  static constexpr size_t kDefaultMaxBuffered = 1 << 20;

  // A stream that accepts up to `max_buffered` bytes not yet sent.
  static std::shared_ptr<ResponseStream> Create(
      size_t max_buffered = kDefaultMaxBuffered);

  ResponseStream(const ResponseStream&) = delete;
  ResponseStream& operator=(const ResponseStream&) = delete;

  // Queues `data` (which may be empty) to be sent. True if it was queued;
  // false once the stream has ended or been closed (see the file comment):
  // the data is dropped and the producer should stop writing. Never blocks.
  bool Write(absl::string_view data);

  // Ends the body after what has been written. Idempotent.
  void Close();

  // Whether Write would still queue data: neither closed nor ended.
  bool open() const;

  // Runs `fn` once when the stream has ended (see the file comment), or at
  // once, on this thread, if it already has. `fn` must be quick.
  void OnEnd(std::function<void()> fn);

 private:
  friend class internal::StreamControl;
  explicit ResponseStream(size_t max_buffered) : max_buffered_(max_buffered) {}

  // Calls notify_ unless a call is already pending.
  void NotifyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_buffered_;
  mutable absl::Mutex mu_;
  std::string pending_ ABSL_GUARDED_BY(mu_);    // written, not yet taken
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;   // taken, not yet sent
  bool closed_ ABSL_GUARDED_BY(mu_) = false;    // Close() was called
  bool cut_ ABSL_GUARDED_BY(mu_) = false;       // too much buffered
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // ended; callbacks ran
  // Set by the server while it sends the stream: wakes the connection.
  std::function<void()> notify_ ABSL_GUARDED_BY(mu_);
  bool notify_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::function<void()>> on_end_ ABSL_GUARDED_BY(mu_);
};

namespace internal {

// The server's side of a ResponseStream (server_session.h, server.cc).
class StreamControl {
 public:
  // What Take found.
  enum class State {
    kMore,  // `out` holds the next bytes (maybe none: wait for a notify)
    kDone,  // closed and everything taken: send the final chunk
    kCut,   // ended early (too much buffered, or Finish): drop the client
  };

  // Starts sending `stream`: `notify` is called (under the stream's lock, so
  // it must only post work) whenever there is something new to Take. False
  // if the stream has already finished.
  static bool Attach(ResponseStream& stream, std::function<void()> notify);
  // Moves the queued bytes to `out` (replacing its contents); they count as
  // buffered until Sent(n).
  static State Take(ResponseStream& stream, std::string* out);
  // Whether Take would say kCut (without taking anything).
  static bool Cut(const ResponseStream& stream);
  static void Sent(ResponseStream& stream, size_t n);
  // Ends the stream (idempotent): detaches the notify, drops what is queued
  // and runs the OnEnd callbacks on this thread.
  static void Finish(ResponseStream& stream);
};

// The streams a server is sending, so that Stop can end them.
class StreamSet {
 public:
  void Add(const std::shared_ptr<ResponseStream>& stream);
  // Finishes every stream added (and not yet destroyed).
  void FinishAll();

 private:
  absl::Mutex mu_;
  std::vector<std::weak_ptr<ResponseStream>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace chime::http

#endif  // CHIME_SRC_HTTP_RESPONSE_STREAM_H_
