// Internal to HttpServer (server.cc): one connection, over plain TCP or over
// TLS on TCP. The HTTP handling is the same code for both; only the start (a
// TLS handshake) and the end (a TLS close_notify) differ.
//
// A streamed response (Response::stream, response_stream.h): the head is
// written, then the session attaches to the ResponseStream -- whose notify
// posts a Pump onto the session's strand -- and keeps one read pending on the
// connection (no deadline) to notice a client that goes away. Each Pump takes
// what the producer wrote and sends it as one chunk, under write_timeout;
// after the final chunk the watch read is cancelled and the connection
// lingers closed. A cut (too much buffered), a failed write, the client's EOF
// or Stop end the stream and close the connection at once.
#ifndef CHIME_SRC_HTTP_SERVER_SESSION_H_
#define CHIME_SRC_HTTP_SERVER_SESSION_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl.hpp"
#include "src/http/deferred_response.h"
#include "src/http/response_head.h"
#include "src/http/response_stream.h"
#include "src/http/router.h"
#include "src/http/server.h"

namespace chime::http::internal {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// After a response that ends the connection the server stops sending, then
// reads and drops what the client still sends, for at most this long
// (RFC 9112 section 9.6). Closing with unread data sends a reset, and some TCP
// stacks (not Linux's) then discard the response before the client reads it:
// a 413 sent while the body is still arriving, say.
inline constexpr auto kMaxLinger = std::chrono::seconds(1);
inline constexpr size_t kMaxLingerBytes = 256 * 1024;

inline std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

// One connection: (TLS: handshake,) read a request, answer it, repeat while
// keep-alive. Owned by the shared_ptrs in its pending handlers; all of them
// run on its strand (the socket's executor). `Stream` is PlainStream or
// TlsStream. `options`, `connections` and `streams` (and, for TLS, the
// ssl::context) outlive the session.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `stream_args` construct the Stream: a tcp::socket, and for TLS the
  // ssl::context.
  template <class... StreamArgs>
  Session(const HttpServer::Options& options, std::atomic<int>& connections,
          StreamSet& streams, std::shared_ptr<Lifeline> lifeline,
          const BlockingRunner* blocking, StreamArgs&&... stream_args)
      : stream_(std::forward<StreamArgs>(stream_args)...),
        options_(options),
        connections_(connections),
        streams_(streams),
        lifeline_(std::move(lifeline)),
        blocking_(blocking),
        over_limit_(++connections_ > options_.max_connections) {}
  ~Session() {
    if (body_ != nullptr) StreamControl::Finish(*body_);
    --connections_;
  }

  void Start() {
    if constexpr (kTls) {
      // The handshake is a read like any other: bounded by read_timeout. A
      // client that does not speak TLS (plain HTTP) fails it at its first
      // bytes and is closed.
      Tcp().expires_after(ToChrono(options_.read_timeout));
      stream_.async_handshake(
          net::ssl::stream_base::server,
          beast::bind_front_handler(&Session::OnHandshake,
                                    this->shared_from_this()));
    } else {
      Serve();
    }
  }

 private:
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  void OnHandshake(beast::error_code ec) {
    if (ec) return;  // not TLS, no common version or cipher, timeout: drop
    Serve();
  }

  void Serve() {
    if (over_limit_) {
      SendError(503);
    } else {
      Read();
    }
  }

  void Read() {
    parser_.emplace();
    parser_->header_limit(options_.max_header_bytes);
    parser_->body_limit(options_.max_body_bytes);
    Tcp().expires_after(ToChrono(options_.read_timeout));
    bhttp::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnRead, this->shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec == bhttp::error::body_limit) return SendError(413);
    if (ec == bhttp::error::header_limit) return SendError(431);
    if (ec == bhttp::error::end_of_stream) return Linger();
    if (ec.category() ==
        bhttp::make_error_code(bhttp::error::bad_method).category()) {
      // Malformed; partial_message is a client that left mid-request.
      if (ec != bhttp::error::partial_message) return SendError(400);
    }
    // Timeout, reset, a TLS error or a TLS peer that closed without
    // close_notify, or Stop(): drop the connection.
    if (ec) return;

    bhttp::request<bhttp::string_body> message = parser_->release();
    Request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    const size_t question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) {
      request.query = request.target.substr(question + 1);
    }
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()),
                                   std::string(field.value()));
    }
    request.body = std::move(message.body());

    const bool head = request.method == "HEAD";
    Respond(options_.router.Route(std::move(request), blocking_),
            message.version(), message.keep_alive(), head);
  }

  // Error answers close the connection: after a bad request the position of
  // the next one in the stream is unknown.
  void SendError(int status) {
    Respond(ErrorResponse(status), 11, /*keep_alive=*/false,
            /*head=*/false);
  }

  // The status line and the headers every answer has, and the handler's.
  template <class Body>
  static void SetHead(bhttp::response<Body>& head, const Response& answer,
                      unsigned version) {
    head.version(version);
    head.result(static_cast<unsigned>(answer.status));
    head.set(bhttp::field::server, "chime");
    head.set(bhttp::field::date,
             absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::Now(),
                              absl::UTCTimeZone()));
    head.set(bhttp::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) {
      if (IsAcceptableExtraHeader(name, value)) head.insert(name, value);
    }
  }

  void Respond(Response answer, unsigned version, bool keep_alive, bool head) {
    if (answer.deferred != nullptr) {
      return AwaitDeferred(std::move(answer.deferred), version, keep_alive,
                           head);
    }
    const bool bodiless = answer.status == 204 || answer.status == 304;
    if (answer.stream != nullptr) {
      if (answer.status >= 200 && answer.status <= 599 && !bodiless) {
        return RespondStream(std::move(answer), version, head);
      }
      StreamControl::Finish(*answer.stream);  // it will not be sent
    }
    if (answer.status < 200 || answer.status > 599) answer = ErrorResponse(500);
    // The head by hand (response_head.h), the body as the handler made it:
    // one gathered write.
    const bool bodiless_or_head =
        answer.status == 204 || answer.status == 304 || head;
    head_out_ = FormatResponseHead(answer, version % 10, keep_alive,
                                   answer.body.size(), absl::Now());
    body_out_ = bodiless_or_head ? std::string() : std::move(answer.body);
    Tcp().expires_after(ToChrono(options_.write_timeout));
    const std::array<net::const_buffer, 2> out = {net::buffer(head_out_),
                                                  net::buffer(body_out_)};
    net::async_write(
        stream_, out,
        beast::bind_front_handler(&Session::OnWrite, this->shared_from_this(),
                                  keep_alive));
  }

  // An answer that comes later (deferred_response.h). Nothing is pending on
  // the connection meanwhile but a timer, which keeps the session alive and
  // bounds the wait by write_timeout; the answer is posted to the strand.
  void AwaitDeferred(std::shared_ptr<DeferredResponse> later, unsigned version,
                     bool keep_alive, bool head) {
    // Which wait this is: a handler of an earlier one (a timer that expired
    // as the answer came, an answer after the 503) must not touch this one.
    const uint64_t wait = ++awaiting_;
    deferred_timer_.expires_after(ToChrono(options_.write_timeout));
    deferred_timer_.async_wait([self = this->shared_from_this(), version, head,
                                wait](beast::error_code ec) {
      if (ec || self->awaiting_ != wait) return;  // the answer came first
      ++self->awaiting_;
      // Whether the request took effect is unknown: start afresh.
      self->Respond(ErrorResponse(503), version, /*keep_alive=*/false, head);
    });
    // The callback may outlive the server: it holds nothing of the
    // io_context's (a session, an executor) but while the lifeline is open.
    const std::weak_ptr<Session> weak = this->weak_from_this();
    DeferredControl::Attach(*later, [weak, lifeline = lifeline_, version,
                                     keep_alive, head,
                                     wait](Response answer) mutable {
      lifeline->RunIfOpen([&] {
        const std::shared_ptr<Session> session = weak.lock();
        if (session == nullptr) return;
        net::post(session->stream_.get_executor(),
                  [weak, answer = std::move(answer), version, keep_alive, head,
                   wait]() mutable {
                    const std::shared_ptr<Session> self = weak.lock();
                    if (self == nullptr || self->awaiting_ != wait) return;
                    ++self->awaiting_;
                    self->deferred_timer_.cancel();
                    if (answer.deferred != nullptr) answer = ErrorResponse(500);
                    self->Respond(std::move(answer), version, keep_alive, head);
                  });
      });
    });
  }

  void OnWrite(bool keep_alive, beast::error_code ec, size_t) {
    if (ec) return;
    if (keep_alive) return Read();
    Linger();
  }

  // A streamed answer (see the file comment). The connection closes after
  // it; HTTP/1.1 gets chunks, HTTP/1.0 a body that ends with the connection,
  // HEAD the head only.
  void RespondStream(Response answer, unsigned version, bool head) {
    body_ = std::move(answer.stream);
    streams_.Add(body_);
    stream_head_.emplace();
    SetHead(*stream_head_, answer, version);
    chunked_ = version >= 11 && !head;
    if (chunked_) stream_head_->chunked(true);
    stream_head_->keep_alive(false);
    if (head) StreamControl::Finish(*body_);
    stream_serializer_.emplace(*stream_head_);
    Tcp().expires_after(ToChrono(options_.write_timeout));
    bhttp::async_write_header(
        stream_, *stream_serializer_,
        beast::bind_front_handler(&Session::OnStreamHead,
                                  this->shared_from_this(), head));
  }

  void OnStreamHead(bool head, beast::error_code ec, size_t) {
    stream_serializer_.reset();
    stream_head_.reset();
    if (ec) return AbortStream();
    if (head) return Linger();
    Tcp().expires_never();  // no read deadline while streaming
    const std::weak_ptr<Session> weak = this->weak_from_this();
    const auto executor = stream_.get_executor();
    const bool attached = StreamControl::Attach(*body_, [weak, executor] {
      net::post(executor, [weak] {
        if (std::shared_ptr<Session> self = weak.lock()) self->Pump();
      });
    });
    if (!attached) return AbortStream();  // ended meanwhile (Stop)
    WatchClient();
    Pump();
  }

  // One read always pending while streaming: the client sends nothing more
  // (a pipelined request is dropped), so it completes when the client goes
  // away -- or when the final chunk is out and it is cancelled.
  void WatchClient() {
    stream_.async_read_some(
        net::buffer(scratch_),
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (self->stream_done_) return self->Linger();
          if (ec) return self->AbortStream();
          self->WatchClient();
        });
  }

  // Sends what the producer wrote, one chunk at a time.
  void Pump() {
    if (stream_done_ || stream_aborted_) return;
    if (writing_) {
      // A write to a client that does not read may take until write_timeout;
      // a cut must not wait for it.
      if (StreamControl::Cut(*body_)) AbortStream();
      return;
    }
    switch (StreamControl::Take(*body_, &chunk_)) {
      case StreamControl::State::kCut:
        return AbortStream();
      case StreamControl::State::kDone:
        if (!chunked_) return EndStream();
        chunk_prefix_.clear();
        return WriteChunk(/*last=*/true);
      case StreamControl::State::kMore:
        if (chunk_.empty()) return;  // a notify raced with an earlier Take
        chunk_prefix_ = absl::StrCat(absl::Hex(chunk_.size()), "\r\n");
        return WriteChunk(/*last=*/false);
    }
  }

  // chunk_ (with its framing when chunked); the last chunk is "0\r\n\r\n".
  void WriteChunk(bool last) {
    static constexpr absl::string_view kCrlf = "\r\n";
    static constexpr absl::string_view kLast = "0\r\n\r\n";
    std::array<net::const_buffer, 3> buffers;
    if (last) {
      buffers = {net::buffer(kLast.data(), kLast.size()), net::const_buffer(),
                 net::const_buffer()};
    } else if (chunked_) {
      buffers = {net::buffer(chunk_prefix_), net::buffer(chunk_),
                 net::buffer(kCrlf.data(), kCrlf.size())};
    } else {
      buffers = {net::buffer(chunk_), net::const_buffer(), net::const_buffer()};
    }
    writing_ = true;
    Tcp().expires_after(ToChrono(options_.write_timeout));
    net::async_write(stream_, buffers,
                     beast::bind_front_handler(&Session::OnChunkWritten,
                                               this->shared_from_this(), last,
                                               last ? 0 : chunk_.size()));
  }

  void OnChunkWritten(bool last, size_t data_bytes, beast::error_code ec,
                      size_t) {
    writing_ = false;
    StreamControl::Sent(*body_, data_bytes);
    if (stream_aborted_) return;
    if (ec) return AbortStream();  // write_timeout, reset, Stop
    if (last) return EndStream();
    Pump();
  }

  // The whole body is out: end the stream, then cancel the watch read, whose
  // handler lingers the connection closed.
  void EndStream() {
    stream_done_ = true;
    StreamControl::Finish(*body_);
    beast::error_code ignored;
    Tcp().socket().cancel(ignored);
  }

  // Ends the stream early and drops the connection. Idempotent.
  void AbortStream() {
    if (stream_aborted_) return;
    stream_aborted_ = true;
    StreamControl::Finish(*body_);
    beast::error_code ignored;
    Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    Tcp().close();
  }

  // Ends the connection: (TLS: close_notify, waiting for the peer's,) then
  // the TCP half-close and Drain(), all within one deadline.
  void Linger() {
    Tcp().expires_after(std::min<std::chrono::steady_clock::duration>(
        kMaxLinger, ToChrono(options_.read_timeout)));
    if constexpr (kTls) {
      // Whatever the outcome (the peer's close_notify, its EOF, data it
      // still sends, the deadline), the drain below takes over: it reads the
      // raw TCP bytes, so what the client sends after our close_notify
      // cannot fail it.
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) {
            self->ShutdownSendAndDrain();
          });
    } else {
      ShutdownSendAndDrain();
    }
  }

  void ShutdownSendAndDrain() {
    beast::error_code ignored;
    Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    Drain();
  }

  void Drain() {
    Tcp().async_read_some(
        net::buffer(scratch_),
        [self = this->shared_from_this()](beast::error_code ec, size_t n) {
          self->drained_ += n;
          if (!ec && self->drained_ < kMaxLingerBytes) self->Drain();
        });
  }

  Stream stream_;
  const HttpServer::Options& options_;
  std::atomic<int>& connections_;
  StreamSet& streams_;
  const std::shared_ptr<Lifeline> lifeline_;
  const BlockingRunner* const blocking_;  // null: handlers run here
  const bool over_limit_;
  // Deferred answers: the timer bounds the wait; awaiting_ is odd while one
  // is awaited, and tells the waits apart.
  net::steady_timer deferred_timer_{stream_.get_executor()};
  uint64_t awaiting_ = 0;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  // A whole response while it is written.
  std::string head_out_;
  std::string body_out_;
  char scratch_[4096];
  size_t drained_ = 0;
  // A streamed response: its body, the head while it is written, the chunk
  // being written.
  std::shared_ptr<ResponseStream> body_;
  std::optional<bhttp::response<bhttp::empty_body>> stream_head_;
  std::optional<bhttp::response_serializer<bhttp::empty_body>>
      stream_serializer_;
  std::string chunk_;
  std::string chunk_prefix_;
  bool chunked_ = false;
  bool writing_ = false;
  bool stream_done_ = false;     // the last byte is out
  bool stream_aborted_ = false;  // ended early; the connection is closed
};

}  // namespace chime::http::internal

#endif  // CHIME_SRC_HTTP_SERVER_SESSION_H_
