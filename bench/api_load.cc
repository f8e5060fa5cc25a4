// api_load: concurrent clients against a running daemon's REST API, for
// bench/api_bench.py (which starts the daemon and records the figures).
//
//   api_load --server http://127.0.0.1:8712 --mode create --clients 32
//            --requests 20000
//       POST /v1/jobs, each a new HTTP job (acknowledged once durable);
//   api_load ... --mode trigger --job bench/seed --requests 10000
//       POST .../trigger (to give a job a run history);
//   api_load ... --mode get --path '/v1/jobs/bench/seed/runs?limit=100'
//            --warmup 10
//       GET the path;
//
// Each client is one keep-alive connection sending its share of the requests
// one after another (the next once the answer to the last is in). The
// clients are driven by --threads event loops (Boost.Asio, default 1): the
// load generator shares the machine with the daemon, and a thread per client
// with a blocking HTTP library cost it ~4x the CPU per request, which the
// daemon then lacked. With --warmup N each client first sends N requests
// more (opening its connection, warming the daemon's caches), and all
// clients then start the measured requests together; the warm-up is
// reported apart (warmup_per_client, warmup_failed, warmup_p99_ms,
// warmup_max_ms). --prefix names the created jobs (<prefix><client>-<i>), so
// that several runs can create jobs in one daemon. Prints one JSON line:
// requests, ok (2xx), failed, seconds, per_s and latency percentiles in ms
// (p50, p90, p99, max) of the measured requests, and the first error (with
// the start of the answer's body for an HTTP error). Exits 1 if any request
// failed, warm-up included.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bench_args.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/http.hpp"

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Target {
  std::string host;
  std::string port;
};

// "http://host:port" (IPv6 hosts in brackets); TLS is not spoken.
bool ParseServer(const std::string& url, Target* out) {
  std::string rest = url;
  if (rest.rfind("http://", 0) != 0) return false;
  rest = rest.substr(7);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon + 1 == rest.size()) return false;
  out->host = rest.substr(0, colon);
  out->port = rest.substr(colon + 1);
  if (out->host.size() > 2 && out->host.front() == '[')
    out->host = out->host.substr(1, out->host.size() - 2);
  return true;
}

struct Config {
  Target target;
  std::string mode;
  std::string path;  // mode get
  std::string job;   // mode trigger
  std::string prefix;
  int64_t warmup = 0;
};

struct ClientResult {
  std::vector<double> latencies_ms;
  std::vector<double> warmup_ms;
  int64_t failed = 0;
  int64_t warmup_failed = 0;
  std::string first_error;
};

// Starts the measured requests of every client once the last one has
// finished its warm-up.
class StartLine {
 public:
  explicit StartLine(int clients) : waiting_(clients) {}
  // `go` runs (on its client's loop) when every client has arrived.
  void Arrive(asio::io_context& ioc, std::function<void()> go);
  Clock::time_point start() const { return start_; }
  // Runs `done` once each of `clients` has called Finished.
  void OnAllDone(int clients, std::function<void()> done) {
    std::lock_guard<std::mutex> lock(mu_);
    unfinished_ = clients;
    all_done_ = std::move(done);
  }
  // A client has answered or given up every request of its share.
  void Finished() {
    std::function<void()> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--unfinished_ == 0) done = std::move(all_done_);
    }
    if (done) done();
  }

 private:
  std::mutex mu_;
  int waiting_;
  int unfinished_ = 0;
  std::function<void()> all_done_;
  std::vector<std::pair<asio::io_context*, std::function<void()>>> parked_;
  Clock::time_point start_;
};

void StartLine::Arrive(asio::io_context& ioc, std::function<void()> go) {
  std::vector<std::pair<asio::io_context*, std::function<void()>>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    parked_.emplace_back(&ioc, std::move(go));
    if (--waiting_ > 0) return;
    all.swap(parked_);
    start_ = Clock::now();
  }
  for (auto& [loop, fn] : all) asio::post(*loop, std::move(fn));
}

// One connection sending its requests in turn, on one event loop.
class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(asio::io_context& ioc, const Config& config, int number,
         int64_t requests, StartLine* start, ClientResult* out)
      : ioc_(ioc),
        config_(config),
        socket_(ioc),
        name_prefix_(config.prefix + std::to_string(number) + "-"),
        requests_(requests),
        start_(start),
        out_(out) {
    out_->latencies_ms.reserve(static_cast<size_t>(requests));
    // Beast reads at most the buffer's free capacity (at least 512 bytes)
    // at a time, and a string body takes the bytes out of it: without room
    // a 42 KB run page took ~84 recv(2) calls, a third of the CPU of the
    // daemon's listing on the same cores.
    buffer_.reserve(64 * 1024);
    request_.version(11);
    request_.keep_alive(true);
    request_.set(http::field::host, config.target.host);
    if (config.mode == "get") {
      request_.method(http::verb::get);
      request_.target(config.path);
    } else {
      request_.method(http::verb::post);
      request_.target(config.mode == "create"
                          ? std::string("/v1/jobs")
                          : "/v1/jobs/" + config.job + "/trigger");
      request_.set(http::field::content_type, "application/json");
    }
  }

  void Begin(const tcp::resolver::results_type& endpoints) {
    asio::async_connect(
        socket_, endpoints,
        [self = shared_from_this()](boost::system::error_code ec,
                                    const tcp::endpoint&) {
          if (ec) return self->Abandon(ec.message());
          self->socket_.set_option(tcp::no_delay(true));
          self->Next();
        });
  }

 private:
  bool warming() const { return sent_ < config_.warmup; }

  void Next() {
    if (sent_ == config_.warmup && !arrived_) {
      arrived_ = true;
      start_->Arrive(ioc_, [self = shared_from_this()] { self->Next(); });
      return;
    }
    if (sent_ >= config_.warmup + requests_) return Finish();
    if (config_.mode == "create") {
      const std::string name =
          warming() ? name_prefix_ + "w" + std::to_string(sent_)
                    : name_prefix_ + std::to_string(sent_ - config_.warmup);
      request_.body() = "{\"id\":\"" + name +
                        "\",\"namespace\":\"bench\",\"schedule\":\"0 0 1 1 "
                        "*\",\"http\":{\"url\":\"http://127.0.0.1:9/hook\"}}";
    }
    request_.prepare_payload();
    began_ = Clock::now();
    http::async_write(
        socket_, request_,
        [self = shared_from_this()](boost::system::error_code ec, size_t) {
          if (ec) return self->Abandon(ec.message());
          self->Read();
        });
  }

  void Read() {
    response_ = {};
    http::async_read(
        socket_, buffer_, response_,
        [self = shared_from_this()](boost::system::error_code ec, size_t) {
          if (ec) return self->Abandon(ec.message());
          self->Answered();
        });
  }

  void Answered() {
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - began_)
            .count();
    const unsigned status = response_.result_int();
    const bool warm = warming();
    ++sent_;
    if (status >= 200 && status < 300) {
      (warm ? out_->warmup_ms : out_->latencies_ms).push_back(ms);
    } else {
      ++(warm ? out_->warmup_failed : out_->failed);
      if (out_->first_error.empty())
        out_->first_error = "HTTP " + std::to_string(status) + ": " +
                            response_.body().substr(0, 300);
    }
    if (!response_.keep_alive() && sent_ < config_.warmup + requests_)
      return Abandon("the server closed the connection");
    Next();
  }

  // The connection failed: every request not answered counts as failed.
  void Abandon(const std::string& why) {
    if (out_->first_error.empty()) out_->first_error = why;
    if (!arrived_) {
      out_->warmup_failed += config_.warmup - sent_;
      sent_ = config_.warmup;
      arrived_ = true;
      // The others wait for everyone at the start line.
      start_->Arrive(ioc_, [self = shared_from_this()] { self->GiveUp(); });
      return;
    }
    GiveUp();
  }
  void GiveUp() {
    out_->failed += config_.warmup + requests_ - sent_;
    sent_ = config_.warmup + requests_;
    Finish();
  }
  void Finish() {
    if (std::exchange(finished_, true)) return;
    boost::system::error_code ignored;
    socket_.close(ignored);
    start_->Finished();
  }

  asio::io_context& ioc_;
  const Config& config_;
  tcp::socket socket_;
  const std::string name_prefix_;
  const int64_t requests_;
  StartLine* const start_;
  ClientResult* const out_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  boost::beast::flat_buffer buffer_;
  int64_t sent_ = 0;  // answered or given up, warm-up included
  bool arrived_ = false;
  bool finished_ = false;
  Clock::time_point began_;
};

// `text` as the inside of a JSON string literal (an error message may hold
// the server's problem+json answer, quotes and all).
std::string JsonEscaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (const auto u = static_cast<unsigned char>(c);
               u < 0x20 || u >= 0x80) {
      // A body cut at 300 bytes may end inside a UTF-8 sequence: bytes past
      // ASCII are shown by value, so that the line stays valid JSON.
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(u));
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * v.size()));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  chime::bench::Args args;
  if (!chime::bench::Args::Parse(
          "api_load", std::vector<std::string>(argv + 1, argv + argc),
          {{"server", "http://127.0.0.1:8712"},
           {"mode", "create"},
           {"clients", "32"},
           {"threads", "1"},
           {"requests", "10000"},
           {"job", "bench/seed"},
           {"path", "/v1/jobs"},
           {"prefix", "c"},
           {"warmup", "0"}},
          &args)) {
    return 2;
  }
  Config config;
  config.mode = args.String("mode");
  if (config.mode != "create" && config.mode != "trigger" &&
      config.mode != "get") {
    std::cerr << "api_load: --mode is create, trigger or get\n";
    return 2;
  }
  if (!ParseServer(args.String("server"), &config.target)) {
    std::cerr << "api_load: --server is http://host:port\n";
    return 2;
  }
  config.path = args.String("path");
  config.job = args.String("job");
  config.prefix = args.String("prefix");
  config.warmup = args.Int("warmup");
  const int clients = static_cast<int>(args.Int("clients"));
  if (clients < 1) {
    std::cerr << "api_load: --clients is at least 1\n";
    return 2;
  }
  const int threads =
      std::max(1, std::min(clients, static_cast<int>(args.Int("threads"))));
  const int64_t requests = args.Int("requests");

  std::vector<std::unique_ptr<asio::io_context>> loops;
  for (int t = 0; t < threads; ++t)
    loops.push_back(std::make_unique<asio::io_context>(1));
  boost::system::error_code ec;
  const tcp::resolver::results_type endpoints =
      tcp::resolver(*loops[0]).resolve(config.target.host, config.target.port,
                                       ec);
  if (ec) {
    std::cerr << "api_load: " << config.target.host << ": " << ec.message()
              << "\n";
    return 2;
  }
  std::vector<ClientResult> results(static_cast<size_t>(clients));
  StartLine start(clients);
  for (int c = 0; c < clients; ++c) {
    const int64_t share = requests / clients + (c < requests % clients);
    std::make_shared<Client>(*loops[c % threads], config, c, share, &start,
                             &results[c])
        ->Begin(endpoints);
  }
  // A client waiting at the start line has nothing pending on its loop:
  // the loops run until every client is done.
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>>
      guards;
  for (auto& loop : loops) guards.push_back(asio::make_work_guard(*loop));
  start.OnAllDone(clients, [&guards] {
    for (auto& g : guards) g.reset();
  });
  std::vector<std::thread> running;
  for (int t = 1; t < threads; ++t)
    running.emplace_back([&loops, t] { loops[t]->run(); });
  loops[0]->run();
  for (std::thread& t : running) t.join();
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start.start()).count();

  std::vector<double> all, warm;
  int64_t failed = 0, warmup_failed = 0;
  std::string error;
  for (ClientResult& r : results) {
    all.insert(all.end(), r.latencies_ms.begin(), r.latencies_ms.end());
    warm.insert(warm.end(), r.warmup_ms.begin(), r.warmup_ms.end());
    failed += r.failed;
    warmup_failed += r.warmup_failed;
    if (error.empty()) error = r.first_error;
  }
  const auto ok = static_cast<int64_t>(all.size());
  // Every request is answered or counted failed.
  if (ok + failed != requests) {
    failed = requests - ok;
    if (error.empty()) error = "requests neither answered nor failed";
  }
  std::printf(
      "{\"mode\":\"%s\",\"clients\":%d,\"threads\":%d,\"requests\":%lld,"
      "\"ok\":%lld,\"failed\":%lld,\"seconds\":%.3f,\"per_s\":%.0f,"
      "\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
      "\"warmup_per_client\":%lld,\"warmup_failed\":%lld,"
      "\"warmup_p99_ms\":%.3f,\"warmup_max_ms\":%.3f,\"first_error\":\"%s\"}"
      "\n",
      config.mode.c_str(), clients, threads, static_cast<long long>(requests),
      static_cast<long long>(ok), static_cast<long long>(failed), seconds,
      static_cast<double>(ok) / seconds, Percentile(all, 0.50),
      Percentile(all, 0.90), Percentile(all, 0.99),
      all.empty() ? 0.0 : *std::max_element(all.begin(), all.end()),
      static_cast<long long>(config.warmup),
      static_cast<long long>(warmup_failed), Percentile(warm, 0.99),
      warm.empty() ? 0.0 : *std::max_element(warm.begin(), warm.end()),
      JsonEscaped(error).c_str());
  return failed == 0 && warmup_failed == 0 ? 0 : 1;
}
