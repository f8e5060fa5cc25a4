#include "src/http/server.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/asio/thread_pool.hpp"
#include "boost/beast/core.hpp"
#include "src/base/thread_name.h"
#include "src/http/server_session.h"
#include "src/http/server_tls.h"

namespace chime::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

std::string Endpoint(const std::string& address, uint16_t port) {
  return absl::StrContains(address, ':')
             ? absl::StrCat("[", address, "]:", port)
             : absl::StrCat(address, ":", port);
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
  const BlockingRunner* Blocking() const {
    return blocking_ ? &blocking_ : nullptr;
  }
  void OnAccept(beast::error_code ec, tcp::socket socket);

  const Options options_;
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  // The responses being streamed; the sessions refer to it, so it outlives
  // ioc_.
  internal::StreamSet streams_;
  // Closed at Stop, before the io_context goes: deferred answers completed
  // after that are dropped.
  const std::shared_ptr<internal::Lifeline> lifeline_ =
      std::make_shared<internal::Lifeline>();
  // Set in Listen() when the options ask for TLS; the TLS sessions refer to
  // it, so it outlives ioc_ (and with it every session).
  std::unique_ptr<net::ssl::context> tls_;
  // Created in Listen(), destroyed in Stop() after the pool has joined: the
  // pool threads are the only other users.
  std::unique_ptr<net::io_context> ioc_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::unique_ptr<net::steady_timer> accept_retry_;
  std::vector<std::thread> threads_;
  // With Options::blocking_threads: the pool for handlers that may block,
  // and what hands them to it.
  std::unique_ptr<net::thread_pool> blocking_pool_;
  BlockingRunner blocking_;
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

absl::Status HttpServer::Impl::Listen() {
  const std::string where = Endpoint(options_.address, options_.port);
  if (options_.threads < 1 || options_.blocking_threads < 0 ||
      options_.max_connections < 1 ||
      options_.read_timeout <= absl::ZeroDuration() ||
      options_.write_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http server on ", where,
        ": threads and max_connections must be >= 1, blocking_threads >= 0 "
        "and the timeouts > 0"));
  }
  if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http server on ", where, ": ",
        options_.tls_cert_file.empty() ? "tls_key_file" : "tls_cert_file",
        " is set but ",
        options_.tls_cert_file.empty() ? "tls_cert_file" : "tls_key_file",
        " is not (give both for HTTPS, neither for HTTP)"));
  }
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options_.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("http server: listen address \"", options_.address,
                     "\" is not an IPv4 or IPv6 literal (e.g. 127.0.0.1, ::1, "
                     "0.0.0.0)"));
  }
  if (!options_.tls_cert_file.empty()) {
    absl::StatusOr<std::unique_ptr<net::ssl::context>> tls =
        internal::MakeTlsContext(options_.tls_cert_file, options_.tls_key_file);
    if (!tls.ok()) {
      return absl::Status(
          tls.status().code(),
          absl::StrCat("http server on ", where, ": ", tls.status().message()));
    }
    tls_ = *std::move(tls);
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
  if (options_.blocking_threads > 0) {
    blocking_pool_ = std::make_unique<net::thread_pool>(
        static_cast<size_t>(options_.blocking_threads));
    blocking_ = [pool = blocking_pool_.get()](std::function<void()> task) {
      net::post(*pool, std::move(task));
    };
  }
  Accept();
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this] {
      base::NameThisThread("chime-http");
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
  if (tls_ != nullptr) {
    std::make_shared<internal::Session<internal::TlsStream>>(
        options_, connections_, streams_, lifeline_, Blocking(),
        std::move(socket), *tls_)
        ->Start();
  } else {
    std::make_shared<internal::Session<internal::PlainStream>>(
        options_, connections_, streams_, lifeline_, Blocking(),
        std::move(socket))
        ->Start();
  }
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
  if (blocking_pool_ != nullptr) {
    blocking_pool_->stop();  // what is queued is dropped
    blocking_pool_->join();
  }
  // Producers may still write to the streams being sent; from here on their
  // writes fail instead of posting to the io_context, and their OnEnd
  // callbacks run (on this thread).
  streams_.FinishAll();
  lifeline_->Close();
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
