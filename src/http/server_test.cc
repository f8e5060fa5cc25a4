// HttpServer over real sockets on 127.0.0.1, port 0. Every wait is bounded by
// the test client's own timeouts (a few seconds at most).
#include "src/http/server.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/metrics/registry.h"
#include "testing/status_matchers.h"

namespace chime::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

using ClientResponse = bhttp::response<bhttp::string_body>;

bhttp::request<bhttp::string_body> MakeRequest(bhttp::verb method,
                                               const std::string& target,
                                               const std::string& body = "") {
  bhttp::request<bhttp::string_body> request(method, target, 11);
  request.set(bhttp::field::host, "127.0.0.1");
  request.body() = body;
  request.prepare_payload();
  return request;
}

// A blocking HTTP/1.1 client. Each call runs one asynchronous operation on a
// private io_context under a deadline, so no call waits longer than
// `timeout`.
class Client {
 public:
  explicit Client(uint16_t port, const char* address = "127.0.0.1")
      : stream_(ioc_) {
    stream_.expires_after(kTimeout);
    stream_.async_connect(tcp::endpoint(net::ip::make_address(address), port),
                          [this](beast::error_code ec) { ec_ = ec; });
    Run();
    EXPECT_FALSE(ec_) << "connect: " << ec_.message();
  }

  beast::error_code WriteRaw(const std::string& bytes) {
    stream_.expires_after(kTimeout);
    net::async_write(stream_, net::buffer(bytes),
                     [this](beast::error_code ec, size_t) { ec_ = ec; });
    return Run();
  }

  beast::error_code Send(const bhttp::request<bhttp::string_body>& request) {
    stream_.expires_after(kTimeout);
    bhttp::async_write(stream_, request,
                       [this](beast::error_code ec, size_t) { ec_ = ec; });
    return Run();
  }

  // Reads one response. `head`: the request was HEAD (no body follows).
  beast::error_code Read(ClientResponse* response, bool head = false,
                         std::chrono::seconds timeout = kTimeout) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.skip(head);
    stream_.expires_after(timeout);
    bhttp::async_read(stream_, buffer_, parser,
                      [this](beast::error_code ec, size_t) { ec_ = ec; });
    Run();
    if (!ec_) *response = parser.release();
    return ec_;
  }

  ClientResponse Call(bhttp::verb method, const std::string& target,
                      const std::string& body = "") {
    ClientResponse response;
    EXPECT_FALSE(Send(MakeRequest(method, target, body)));
    const beast::error_code ec = Read(&response, method == bhttp::verb::head);
    EXPECT_FALSE(ec) << ec.message();
    return response;
  }

  // True when the server closes the connection within `timeout`, without
  // sending anything more.
  bool ClosedByServer(std::chrono::seconds timeout = kTimeout) {
    char byte;
    stream_.expires_after(timeout);
    stream_.async_read_some(net::buffer(&byte, 1),
                            [this](beast::error_code ec, size_t) { ec_ = ec; });
    Run();
    return ec_ == net::error::eof || ec_ == net::error::connection_reset;
  }

 private:
  static constexpr std::chrono::seconds kTimeout{5};

  beast::error_code Run() {
    ioc_.restart();
    ioc_.run();
    return ec_;
  }

  net::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  beast::error_code ec_;
};

// /healthz and /echo (POST: answers "<query>|<X-Tag header>|<body>").
Router TestRouter() {
  Router router;
  router.Handle("GET", "/healthz",
                [](const Request&) { return Response{.body = "ok\n"}; });
  router.Handle("POST", "/echo", [](const Request& request) {
    return Response{
        .status = 201,
        .content_type = "application/json",
        .body = absl::StrCat(request.query, "|", request.Header("x-tag"), "|",
                             request.body),
        .headers = {{"X-Seen", request.method}, {"Bad", "a\r\nInjected: 1"}},
    };
  });
  router.Handle("GET", "/boom", [](const Request&) -> Response {
    throw std::runtime_error("handler bug");
  });
  return router;
}

// Starts a server with `options`, answering through `router`.
std::unique_ptr<HttpServer> StartServer(HttpServer::Options options = {},
                                        Router router = TestRouter()) {
  options.router = std::move(router);
  auto server = HttpServer::Start(std::move(options));
  EXPECT_THAT(server, IsOk());
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(HttpServer, ServesGetAndPost) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  ASSERT_NE(server->port(), 0);
  Client client(server->port());

  ClientResponse get = client.Call(bhttp::verb::get, "/healthz");
  EXPECT_EQ(get.result_int(), 200);
  EXPECT_EQ(get.body(), "ok\n");
  EXPECT_EQ(get[bhttp::field::content_type], "text/plain; charset=utf-8");
  EXPECT_EQ(get[bhttp::field::content_length], "3");

  auto post = MakeRequest(bhttp::verb::post, "/echo?a=1&b", "payload");
  post.set("X-Tag", "blue");
  ClientResponse echoed;
  ASSERT_FALSE(client.Send(post));
  ASSERT_FALSE(client.Read(&echoed));
  EXPECT_EQ(echoed.result_int(), 201);
  EXPECT_EQ(echoed.body(), "a=1&b|blue|payload");
  EXPECT_EQ(echoed[bhttp::field::content_type], "application/json");
  EXPECT_EQ(echoed["X-Seen"], "POST");
  // A header value with CR/LF is dropped, not sent as two lines.
  EXPECT_EQ(echoed.count("Bad"), 0u);
  EXPECT_EQ(echoed.count("Injected"), 0u);
}

TEST(HttpServer, KeepAliveServesTwoRequestsOnOneConnection) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  ClientResponse first = client.Call(bhttp::verb::get, "/healthz");
  EXPECT_TRUE(first.keep_alive());
  ClientResponse second = client.Call(bhttp::verb::post, "/echo", "two");
  EXPECT_EQ(second.body(), "||two");
}

TEST(HttpServer, HeadGetsTheLengthWithoutTheBody) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  ClientResponse head = client.Call(bhttp::verb::head, "/healthz");
  EXPECT_EQ(head.result_int(), 200);
  EXPECT_EQ(head[bhttp::field::content_length], "3");
  EXPECT_EQ(head.body(), "");
  // Nothing was sent after the headers: the next response parses cleanly.
  EXPECT_EQ(client.Call(bhttp::verb::get, "/healthz").body(), "ok\n");
}

TEST(HttpServer, AnswersUnknownPathWrongMethodAndThrowingHandler) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  EXPECT_EQ(client.Call(bhttp::verb::get, "/nope").result_int(), 404);
  ClientResponse wrong = client.Call(bhttp::verb::delete_, "/echo");
  EXPECT_EQ(wrong.result_int(), 405);
  EXPECT_EQ(wrong[bhttp::field::allow], "POST");
  EXPECT_EQ(client.Call(bhttp::verb::get, "/boom").result_int(), 500);
  // None of these ends the connection.
  EXPECT_EQ(client.Call(bhttp::verb::get, "/healthz").result_int(), 200);
}

TEST(HttpServer, MalformedRequestIs400AndClosesTheConnection) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  ASSERT_FALSE(
      client.WriteRaw("GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n"));
  ClientResponse response;
  ASSERT_FALSE(client.Read(&response));
  EXPECT_EQ(response.result_int(), 400);
  EXPECT_FALSE(response.keep_alive());
  EXPECT_TRUE(client.ClosedByServer());
}

TEST(HttpServer, BodyOverTheLimitIs413) {
  auto server = StartServer({.max_body_bytes = 1024});
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  EXPECT_EQ(client.Call(bhttp::verb::post, "/echo", std::string(1024, 'x'))
                .result_int(),
            201);
  // Refused on its Content-Length: the client sends all of it, then reads.
  EXPECT_EQ(client.Call(bhttp::verb::post, "/echo", std::string(200000, 'x'))
                .result_int(),
            413);
  EXPECT_TRUE(client.ClosedByServer());
  Client just_over(server->port());
  EXPECT_EQ(just_over.Call(bhttp::verb::post, "/echo", std::string(1025, 'x'))
                .result_int(),
            413);
}

TEST(HttpServer, HeadersOverTheLimitAre431) {
  auto server = StartServer({.max_header_bytes = 1024});
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  ASSERT_FALSE(client.WriteRaw(absl::StrCat(
      "GET /healthz HTTP/1.1\r\nX-Big: ", std::string(2000, 'h'), "\r\n\r\n")));
  ClientResponse response;
  ASSERT_FALSE(client.Read(&response));
  EXPECT_EQ(response.result_int(), 431);
}

// One pool thread: if an idle connection held it, the second client would
// wait for the read timeout.
TEST(HttpServer, IdleClientBlocksNoOneAndIsClosedAfterTheReadTimeout) {
  auto server =
      StartServer({.threads = 1, .read_timeout = absl::Milliseconds(1500)});
  ASSERT_NE(server, nullptr);
  Client idle(server->port());
  const absl::Time connected = absl::Now();
  ASSERT_FALSE(
      idle.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\n"));  // stalls

  Client other(server->port());
  EXPECT_EQ(other.Call(bhttp::verb::get, "/healthz").result_int(), 200);
  EXPECT_LT(absl::Now() - connected, absl::Milliseconds(1500));

  EXPECT_TRUE(idle.ClosedByServer());
  EXPECT_GE(absl::Now() - connected, absl::Milliseconds(1400));
}

TEST(HttpServer, ServesConcurrentClients) {
  std::atomic<int> calls{0};
  Router router;
  router.Handle("GET", "/count", [&](const Request&) {
    ++calls;
    return Response{.body = "counted"};
  });
  auto server = StartServer({}, router);
  ASSERT_NE(server, nullptr);
  constexpr int kClients = 8;
  constexpr int kRequests = 20;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      Client client(server->port());
      for (int i = 0; i < kRequests; ++i) {
        if (client.Call(bhttp::verb::get, "/count").body() == "counted") ++ok;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
  EXPECT_EQ(calls.load(), kClients * kRequests);
}

TEST(HttpServer, ConnectionsBeyondTheLimitGet503) {
  auto server = StartServer({.max_connections = 1});
  ASSERT_NE(server, nullptr);
  Client first(server->port());
  EXPECT_EQ(first.Call(bhttp::verb::get, "/healthz").result_int(), 200);
  Client second(server->port());
  ClientResponse refused;
  ASSERT_FALSE(second.Read(&refused));
  EXPECT_EQ(refused.result_int(), 503);
  EXPECT_TRUE(second.ClosedByServer());
  EXPECT_EQ(first.Call(bhttp::verb::get, "/healthz").result_int(), 200);
}

TEST(HttpServer, StopWithOpenConnectionsReturnsPromptly) {
  auto server = StartServer({.read_timeout = absl::Seconds(60)});
  ASSERT_NE(server, nullptr);
  Client kept_alive(server->port());
  EXPECT_EQ(kept_alive.Call(bhttp::verb::get, "/healthz").result_int(), 200);
  Client half_sent(server->port());
  ASSERT_FALSE(half_sent.WriteRaw("POST /echo HTTP/1.1\r\nContent-Length: 9"));
  Client silent(server->port());
  const uint16_t port = server->port();

  const absl::Time before = absl::Now();
  server->Stop();
  EXPECT_LT(absl::Now() - before, absl::Seconds(2));
  EXPECT_TRUE(kept_alive.ClosedByServer());
  EXPECT_TRUE(half_sent.ClosedByServer());
  EXPECT_TRUE(silent.ClosedByServer());
  server->Stop();  // idempotent
  // The port is free again.
  auto again = HttpServer::Start({.port = port});
  EXPECT_THAT(again, IsOk());
}

TEST(HttpServer, PortInUseFailsNamingTheAddress) {
  auto first = StartServer();
  ASSERT_NE(first, nullptr);
  auto second = HttpServer::Start({.port = first->port()});
  EXPECT_THAT(
      second,
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr(absl::StrCat("cannot bind 127.0.0.1:", first->port(),
                                      ": Address already in use"))));
}

TEST(HttpServer, RefusesAddressThatIsNotAnIpLiteral) {
  EXPECT_THAT(HttpServer::Start({.address = "localhost"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"localhost\" is not an IPv4 or IPv6")));
  EXPECT_THAT(HttpServer::Start({.threads = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(HttpServer, ListensOnIpv6Loopback) {
  auto server = HttpServer::Start({.address = "::1", .router = TestRouter()});
  if (absl::IsUnavailable(server.status())) {
    GTEST_SKIP() << "no IPv6 loopback here: " << server.status();
  }
  ASSERT_THAT(server, IsOk());
  Client client((*server)->port(), "::1");
  EXPECT_EQ(client.Call(bhttp::verb::get, "/healthz").body(), "ok\n");
}

// The daemon's /metrics: a Registry rendered on each scrape.
TEST(HttpServer, ServesMetricsWithThePrometheusContentType) {
  metrics::Registry registry;
  auto scrapes = registry.AddCounter("chime_scrapes_total", "Scrapes.");
  ASSERT_THAT(scrapes, IsOk());
  metrics::Counter& counter = (*scrapes)->With({});
  Router router;
  router.Handle("GET", "/metrics", [&](const Request&) {
    counter.Increment();
    return Response{.content_type = std::string(metrics::kContentType),
                    .body = registry.Render()};
  });
  auto server = StartServer({}, router);
  ASSERT_NE(server, nullptr);
  Client client(server->port());
  client.Call(bhttp::verb::get, "/metrics");
  ClientResponse response = client.Call(bhttp::verb::get, "/metrics");
  EXPECT_EQ(response[bhttp::field::content_type],
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(response.body(), HasSubstr("\nchime_scrapes_total 2\n"));
}

}  // namespace
}  // namespace chime::http
