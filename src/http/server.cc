#include "src/http/server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

namespace chime::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

// After a response that ends the connection the server stops sending, then
// reads and drops what the client still sends, for at most this long
// (RFC 9112 section 9.6). Closing with unread data sends a reset, and some TCP
// stacks (not Linux's) then discard the response before the client reads it:
// a 413 sent while the body is still arriving, say.
constexpr auto kMaxLinger = std::chrono::seconds(1);
constexpr size_t kMaxLingerBytes = 256 * 1024;

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

std::string Endpoint(const std::string& address, uint16_t port) {
  return absl::StrContains(address, ':')
             ? absl::StrCat("[", address, "]:", port)
             : absl::StrCat(address, ":", port);
}

bool IsToken(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           absl::StrContains("!#$%&'*+-.^_`|~", c);
  });
}

// Handler-supplied headers that would break the framing or inject lines.
bool IsAcceptableExtraHeader(const std::string& name,
                             const std::string& value) {
  for (absl::string_view own :
       {"Content-Length", "Connection", "Date", "Transfer-Encoding"}) {
    if (absl::EqualsIgnoreCase(name, own)) return false;
  }
  return IsToken(name) && value.find_first_of("\r\n\0", 0, 3) == value.npos;
}

}  // namespace

class HttpServer::Impl {
 public:
  explicit Impl(Options options) : options_(std::move(options)) {}

  absl::Status Listen();
  void Run();
  void Stop();
  uint16_t port() const { return port_; }

  const Options& options() const { return options_; }

 private:
  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);

  const Options options_;
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  // Created in Listen(), destroyed in Stop() after the pool has joined: the
  // pool threads are the only other users.
  std::unique_ptr<net::io_context> ioc_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::unique_ptr<net::steady_timer> accept_retry_;
  std::vector<std::thread> threads_;
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

namespace {

// One connection: read a request, answer it, repeat while keep-alive. Owned by
// the shared_ptrs in its pending handlers; all of them run on its strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpServer::Options& options,
          std::atomic<int>& connections)
      : stream_(std::move(socket)),
        options_(options),
        connections_(connections),
        over_limit_(++connections_ > options_.max_connections) {}
  ~Session() { --connections_; }

  void Start() {
    if (over_limit_) {
      SendError(503);
    } else {
      Read();
    }
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(options_.max_header_bytes);
    parser_->body_limit(options_.max_body_bytes);
    stream_.expires_after(ToChrono(options_.read_timeout));
    bhttp::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnRead, shared_from_this()));
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
    if (ec) return;  // timeout, reset, or Stop(): drop the connection

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

    Respond(options_.router.Route(request), message.version(),
            message.keep_alive(), request.method == "HEAD");
  }

  // Error answers close the connection: after a bad request the position of
  // the next one in the stream is unknown.
  void SendError(int status) {
    Respond(ErrorResponse(status), 11, /*keep_alive=*/false,
            /*head=*/false);
  }

  void Respond(Response answer, unsigned version, bool keep_alive, bool head) {
    if (answer.status < 200 || answer.status > 599) answer = ErrorResponse(500);
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(answer.status));
    response_.set(bhttp::field::server, "chime");
    response_.set(bhttp::field::date,
                  absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::Now(),
                                   absl::UTCTimeZone()));
    response_.set(bhttp::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) {
      if (IsAcceptableExtraHeader(name, value)) response_.insert(name, value);
    }
    // 204 and 304 carry no body and (204) no Content-Length; a HEAD answer
    // states the length of the body it leaves out.
    if (answer.status != 204 && answer.status != 304) {
      response_.content_length(answer.body.size());
      if (!head) response_.body() = std::move(answer.body);
    }
    response_.keep_alive(keep_alive);
    stream_.expires_after(ToChrono(options_.write_timeout));
    bhttp::async_write(stream_, response_,
                       beast::bind_front_handler(
                           &Session::OnWrite, shared_from_this(), keep_alive));
  }

  void OnWrite(bool keep_alive, beast::error_code ec, size_t) {
    if (ec) return;
    if (keep_alive) return Read();
    Linger();
  }

  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::min<std::chrono::steady_clock::duration>(
        kMaxLinger, ToChrono(options_.read_timeout)));
    Drain();
  }

  void Drain() {
    stream_.async_read_some(
        net::buffer(scratch_),
        [self = shared_from_this()](beast::error_code ec, size_t n) {
          self->drained_ += n;
          if (!ec && self->drained_ < kMaxLingerBytes) self->Drain();
        });
  }

  beast::tcp_stream stream_;
  const HttpServer::Options& options_;
  std::atomic<int>& connections_;
  const bool over_limit_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  char scratch_[4096];
  size_t drained_ = 0;
};

}  // namespace

absl::Status HttpServer::Impl::Listen() {
  const std::string where = Endpoint(options_.address, options_.port);
  if (options_.threads < 1 || options_.max_connections < 1 ||
      options_.read_timeout <= absl::ZeroDuration() ||
      options_.write_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http server on ", where,
        ": threads and max_connections must be >= 1 and the timeouts > 0"));
  }
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options_.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("http server: listen address \"", options_.address,
                     "\" is not an IPv4 or IPv6 literal (e.g. 127.0.0.1, ::1, "
                     "0.0.0.0)"));
  }
  ioc_ = std::make_unique<net::io_context>(options_.threads);
  acceptor_ = std::make_unique<tcp::acceptor>(net::make_strand(*ioc_));
  accept_retry_ =
      std::make_unique<net::steady_timer>(acceptor_->get_executor());
  const tcp::endpoint endpoint(address, options_.port);
  const char* step = "open";
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) {
    step = "set SO_REUSEADDR on";
    acceptor_->set_option(net::socket_base::reuse_address(true), ec);
  }
  if (!ec) {
    step = "bind";
    acceptor_->bind(endpoint, ec);
  }
  if (!ec) {
    step = "listen on";
    acceptor_->listen(net::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    const std::string message = absl::StrCat("http server: cannot ", step, " ",
                                             where, ": ", ec.message());
    if (ec == net::error::address_in_use ||
        ec == boost::system::errc::address_not_available) {
      return absl::UnavailableError(message);
    }
    if (ec == net::error::access_denied) {
      return absl::PermissionDeniedError(message);
    }
    return absl::InternalError(message);
  }
  port_ = acceptor_->local_endpoint(ec).port();
  return absl::OkStatus();
}

void HttpServer::Impl::Run() {
  Accept();
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this] {
      auto work = net::make_work_guard(*ioc_);
      // run() returns at Stop(); an exception out of a handler (allocation
      // failure) ends only that handler, and the thread goes on serving.
      for (;;) {
        try {
          ioc_->run();
          return;
        } catch (const std::exception&) {
        }
      }
    });
  }
}

void HttpServer::Impl::Accept() {
  acceptor_->async_accept(net::make_strand(*ioc_),
                          beast::bind_front_handler(&Impl::OnAccept, this));
}

void HttpServer::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted) return;
  if (ec) {
    // Out of file descriptors, say: try again shortly rather than spin.
    accept_retry_->expires_after(std::chrono::milliseconds(100));
    accept_retry_->async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec) Accept();
    });
    return;
  }
  std::make_shared<Session>(std::move(socket), options_, connections_)->Start();
  Accept();
}

void HttpServer::Impl::Stop() {
  {
    absl::MutexLock lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (ioc_ == nullptr) return;
  ioc_->stop();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  // No thread runs handlers any more. Destroying the io_context destroys the
  // handlers still pending, and with them the sessions and their sockets.
  accept_retry_.reset();
  acceptor_.reset();
  ioc_.reset();
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  try {
    if (absl::Status status = impl->Listen(); !status.ok()) return status;
    impl->Run();
  } catch (const std::exception& e) {  // thread creation, allocation
    impl->Stop();
    return absl::InternalError(
        absl::StrCat("http server on ",
                     Endpoint(impl->options().address, impl->options().port),
                     ": ", e.what()));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace chime::http
