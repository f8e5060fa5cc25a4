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
// Each client is a thread with one keep-alive connection (a libcurl easy
// handle) sending its share of the requests one after another. With
// --warmup N each client first sends N requests more (opening its
// connection, warming the daemon's caches), and all clients then start the
// measured requests together; the warm-up is reported apart
// (warmup_per_client, warmup_failed, warmup_p99_ms, warmup_max_ms). Prints
// one JSON line: requests, ok (2xx), failed, seconds, per_s and latency
// percentiles in ms (p50, p90, p99, max) of the measured requests. Exits 1
// if any request failed, warm-up included.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_args.h"

namespace {

using Clock = std::chrono::steady_clock;

size_t Discard(char*, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->clear();
  return size * n;
}

struct ClientResult {
  std::vector<double> latencies_ms;
  std::vector<double> warmup_ms;
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t warmup_failed = 0;
  std::string first_error;
};

// Sets the start of the measured requests when every client has finished
// its warm-up.
struct StartClock {
  Clock::time_point* at;
  void operator()() noexcept { *at = Clock::now(); }
};
using StartBarrier = std::barrier<StartClock>;

void Client(const std::string& server, const std::string& mode,
            const std::string& path, const std::string& job, int client,
            int64_t warmup, int64_t requests, StartBarrier* measure,
            ClientResult* out) {
  CURL* curl = curl_easy_init();
  std::string sink;
  curl_slist* headers =
      curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  out->latencies_ms.reserve(static_cast<size_t>(requests));
  std::string url, body;
  // Request `name` (its job's id in mode create); its latency goes to
  // `latencies` if it succeeds, else `failed` counts it.
  const auto send_one = [&](const std::string& name,
                            std::vector<double>& latencies, int64_t& failed) {
    if (mode == "create") {
      url = server + "/v1/jobs";
      body = "{\"id\":\"" + name +
             "\",\"namespace\":\"bench\",\"schedule\":\"0 0 1 1 *\","
             "\"http\":{\"url\":\"http://127.0.0.1:9/hook\"}}";
    } else if (mode == "trigger") {
      url = server + "/v1/jobs/" + job + "/trigger";
      body.clear();
    } else {
      url = server + path;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (mode == "get") {
      curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                       static_cast<long>(body.size()));
    }
    const auto start = Clock::now();
    const CURLcode rc = curl_easy_perform(curl);
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && status >= 200 && status < 300) {
      latencies.push_back(ms);
    } else {
      ++failed;
      if (out->first_error.empty()) {
        out->first_error = rc != CURLE_OK ? curl_easy_strerror(rc)
                                          : "HTTP " + std::to_string(status);
      }
    }
  };
  std::string prefix = "c";
  prefix.append(std::to_string(client)).append("-");
  for (int64_t i = 0; i < warmup; ++i)
    send_one(prefix + "w" + std::to_string(i), out->warmup_ms,
             out->warmup_failed);
  measure->arrive_and_wait();
  for (int64_t i = 0; i < requests; ++i)
    send_one(prefix + std::to_string(i), out->latencies_ms, out->failed);
  out->ok = static_cast<int64_t>(out->latencies_ms.size());
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
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
           {"requests", "10000"},
           {"job", "bench/seed"},
           {"path", "/v1/jobs"},
           {"warmup", "0"}},
          &args)) {
    return 2;
  }
  const std::string mode = args.String("mode");
  if (mode != "create" && mode != "trigger" && mode != "get") {
    std::cerr << "api_load: --mode is create, trigger or get\n";
    return 2;
  }
  const int clients = static_cast<int>(args.Int("clients"));
  const int64_t requests = args.Int("requests");
  const int64_t warmup = args.Int("warmup");
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::vector<ClientResult> results(static_cast<size_t>(clients));
  std::vector<std::thread> threads;
  Clock::time_point start;
  StartBarrier measure(clients, StartClock{&start});
  for (int c = 0; c < clients; ++c) {
    const int64_t share = requests / clients + (c < requests % clients);
    threads.emplace_back(Client, args.String("server"), mode,
                         args.String("path"), args.String("job"), c, warmup,
                         share, &measure, &results[c]);
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all, warm;
  int64_t ok = 0, failed = 0, warmup_failed = 0;
  std::string error;
  for (ClientResult& r : results) {
    all.insert(all.end(), r.latencies_ms.begin(), r.latencies_ms.end());
    warm.insert(warm.end(), r.warmup_ms.begin(), r.warmup_ms.end());
    ok += r.ok;
    failed += r.failed;
    warmup_failed += r.warmup_failed;
    if (error.empty()) error = r.first_error;
  }
  std::printf(
      "{\"mode\":\"%s\",\"clients\":%d,\"requests\":%lld,\"ok\":%lld,"
      "\"failed\":%lld,\"seconds\":%.3f,\"per_s\":%.0f,\"p50_ms\":%.3f,"
      "\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
      "\"warmup_per_client\":%lld,\"warmup_failed\":%lld,"
      "\"warmup_p99_ms\":%.3f,\"warmup_max_ms\":%.3f,\"first_error\":\"%s\"}"
      "\n",
      mode.c_str(), clients, static_cast<long long>(requests),
      static_cast<long long>(ok), static_cast<long long>(failed), seconds,
      static_cast<double>(ok) / seconds, Percentile(all, 0.50),
      Percentile(all, 0.90), Percentile(all, 0.99),
      all.empty() ? 0.0 : *std::max_element(all.begin(), all.end()),
      static_cast<long long>(warmup), static_cast<long long>(warmup_failed),
      Percentile(warm, 0.99),
      warm.empty() ? 0.0 : *std::max_element(warm.begin(), warm.end()),
      error.c_str());
  curl_global_cleanup();
  return failed == 0 && warmup_failed == 0 ? 0 : 1;
}
