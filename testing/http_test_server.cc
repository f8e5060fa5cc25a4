#include "testing/http_test_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace chime::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

std::string ToString(beast::string_view s) {
  return std::string(s.data(), s.size());
}

}  // namespace

std::optional<std::string> RecordedRequest::Header(
    absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

int RecordedRequest::HeaderCount(absl::string_view name) const {
  int count = 0;
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) ++count;
  }
  return count;
}

// Everything runs on `io_`, driven by `thread_`: one accept loop, and per
// connection a read, a timer for the delay, a write. Stopping the io_context
// abandons whatever is in flight; its destructor then frees the connections.
class HttpTestServer::Impl {
 public:
  ~Impl() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Listen() {
    boost::system::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) port_ = acceptor_.local_endpoint(ec).port();
    if (ec) {
      return absl::InternalError(absl::StrCat(
          "HttpTestServer: listening on 127.0.0.1:0: ", ec.message()));
    }
    Accept();
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  int port() const { return port_; }

  void SetResponse(CannedResponse response) {
    absl::MutexLock lock(&mu_);
    response_ = std::move(response);
  }

  std::vector<RecordedRequest> Requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

  bool WaitForRequests(size_t count, absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return requests_.size() >= count;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }

 private:
  // One connection: read a request, wait, answer, close.
  struct Connection : std::enable_shared_from_this<Connection> {
    Connection(tcp::socket s, Impl* server)
        : socket(std::move(s)), timer(socket.get_executor()), server(server) {}
    tcp::socket socket;
    asio::steady_timer timer;
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::response<http::string_body> response;
    Impl* server;
  };

  void Run() {
    // Handlers report errors through error_code; only allocation or a bad
    // canned status throws. Keep serving after those: a test server that
    // dies silently would turn the failure into a timeout elsewhere.
    while (true) {
      try {
        io_.run();
        return;
      } catch (const std::exception&) {
      }
    }
  }

  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec,
                                  tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        auto connection = std::make_shared<Connection>(std::move(socket), this);
        Read(connection);
      }
      Accept();
    });
  }

  void Read(const std::shared_ptr<Connection>& c) {
    http::async_read(c->socket, c->buffer, c->request,
                     [this, c](boost::system::error_code ec, size_t) {
                       if (ec) return;  // not HTTP, or gone: drop it
                       Respond(c);
                     });
  }

  void Respond(const std::shared_ptr<Connection>& c) {
    RecordedRequest recorded;
    recorded.method = ToString(c->request.method_string());
    recorded.target = ToString(c->request.target());
    for (const auto& field : c->request) {
      recorded.headers.emplace_back(ToString(field.name_string()),
                                    ToString(field.value()));
    }
    recorded.body = c->request.body();
    CannedResponse canned;
    {
      absl::MutexLock lock(&mu_);
      canned = response_;
      requests_.push_back(std::move(recorded));
    }
    http::response<http::string_body>& res = c->response;
    res.version(11);
    res.result(static_cast<unsigned>(canned.status));
    for (const auto& [name, value] : canned.headers) res.set(name, value);
    res.body() = std::move(canned.body);
    res.keep_alive(false);
    res.prepare_payload();
    c->timer.expires_after(
        std::chrono::nanoseconds(absl::ToInt64Nanoseconds(canned.delay)));
    c->timer.async_wait([c](boost::system::error_code ec) {
      if (ec) return;
      http::async_write(
          c->socket, c->response, [c](boost::system::error_code, size_t) {
            boost::system::error_code ignored;
            c->socket.shutdown(tcp::socket::shutdown_send, ignored);
            c->socket.close(ignored);
          });
    });
  }

  asio::io_context io_;  // first: it outlives the sockets that use it
  tcp::acceptor acceptor_{io_};
  int port_ = 0;
  std::thread thread_;

  mutable absl::Mutex mu_;
  CannedResponse response_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<HttpTestServer>> HttpTestServer::Start() {
  auto impl = std::make_unique<Impl>();
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  return std::unique_ptr<HttpTestServer>(new HttpTestServer(std::move(impl)));
}

HttpTestServer::HttpTestServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

HttpTestServer::~HttpTestServer() = default;

int HttpTestServer::port() const { return impl_->port(); }

std::string HttpTestServer::Url(absl::string_view path) const {
  return absl::StrCat("http://127.0.0.1:", impl_->port(), path);
}

void HttpTestServer::SetResponse(CannedResponse response) {
  impl_->SetResponse(std::move(response));
}

std::vector<RecordedRequest> HttpTestServer::Requests() const {
  return impl_->Requests();
}

bool HttpTestServer::WaitForRequests(size_t count,
                                     absl::Duration timeout) const {
  return impl_->WaitForRequests(count, timeout);
}

}  // namespace chime::testing
