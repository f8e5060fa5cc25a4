// SharedStoreTest: daemons sharing one PostgreSQL store (config `store`) on a
// real PostgreSQL 15 server the fixture starts, each a real `chime serve`
// process; the job file's job appends a witness line per attempt outside the
// store. Shared by shared_store_test.cc (leases, failover, clocks) and
// standby_api_test.cc (the API on a standby).
#ifndef CHIME_TESTS_DAEMON_SHARED_STORE_FIXTURE_H_
#define CHIME_TESTS_DAEMON_SHARED_STORE_FIXTURE_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "testing/postgres_server.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {

using Json = nlohmann::json;

inline constexpr char kFakeTime[] =
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// Every second, the job appends "<fire id> <attempt> <fencing token> <node>"
// to the witness file, outside the store.
inline constexpr char kJobs[] = R"(
jobs:
  - id: tick
    schedule: "@every 1s"
    shell: { command: "echo \"$CHIME_FIRE_ID $CHIME_ATTEMPT $CHIME_FENCING_TOKEN $NODE\" >> $WITNESS" }
)";

inline std::vector<std::string> Concat(std::vector<std::string> a,
                                       std::vector<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A port on 127.0.0.1 that was free a moment ago (the kernel's pick).
inline int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

struct Line {
  std::string fire_id;
  int attempt = 0;
  int64_t token = 0;
  std::string node;
};

class SharedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::PostgresServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    pg_ = *std::move(server);
    witness_ = dir_.path() + "/witness";
    dir_.Write("jobs/jobs.yaml", kJobs);
  }

  // A daemon named `node` on the shared store, with its own data directory.
  // With `faked_clock`, its wall clock is off by what the file
  // <dir>/<node>.faketime says ("+30", "-90", "+0": seconds), read anew at
  // every reading of the clock (libfaketime, Debian package libfaketime; its
  // monotonic clock is the real one).
  std::unique_ptr<DaemonProcess> StartNode(const std::string& node,
                                           bool wait_until_serving,
                                           bool faked_clock = false,
                                           std::vector<std::string> more = {}) {
    std::map<std::string, std::string> env = {{"NODE", node},
                                              {"WITNESS", witness_}};
    if (faked_clock) {
      EXPECT_TRUE(std::filesystem::exists(kFakeTime))
          << kFakeTime << " is missing: run scripts/install-deps.sh";
      env["LD_PRELOAD"] = kFakeTime;
      env["FAKETIME_TIMESTAMP_FILE"] = ClockFile(node);
      env["FAKETIME_NO_CACHE"] = "1";
      env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
      // The sanitizer's runtime wants to be loaded first; here it is second.
      env["ASAN_OPTIONS"] = "verify_asan_link_order=0";
    }
    // One scheduler and standbys unless the test asks for shards.
    if (std::find(more.begin(), more.end(), "--shards") == more.end())
      more.insert(more.end(), {"--shards", "0"});
    auto d = DaemonProcess::Start(
        {.data_dir = absl::StrCat(dir_.path(), "/data-", node),
         .jobs_dir = dir_.path() + "/jobs",
         .args = Concat(
             {"--store", pg_->Url(), "--lease-ttl", "2s", "--node-name", node},
             std::move(more)),
         .env = std::move(env),
         .wait_until_serving = wait_until_serving});
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *std::move(d) : nullptr;
  }

  std::string ClockFile(const std::string& node) const {
    return absl::StrCat(dir_.path(), "/", node, ".faketime");
  }
  // Sets the offset of `node`'s faked clock (see StartNode).
  void SetClock(const std::string& node, const std::string& offset) {
    std::ofstream(ClockFile(node)) << offset << "\n";
  }

  std::vector<Line> Witness() const {
    std::vector<Line> lines;
    std::ifstream in(witness_);
    for (std::string text; std::getline(in, text);) {
      std::vector<std::string> f = absl::StrSplit(text, ' ');
      Line l;
      if (f.size() != 4 || !absl::SimpleAtoi(f[1], &l.attempt) ||
          !absl::SimpleAtoi(f[2], &l.token)) {
        ADD_FAILURE() << "not a witness line: " << text;
        continue;
      }
      l.fire_id = f[0];
      l.node = f[3];
      lines.push_back(std::move(l));
    }
    return lines;
  }

  // Waits (at most 20 s) until `d` logs that it stands by.
  static bool IsStandby(const DaemonProcess& d) {
    return !d.WaitForLog([](const Json& j) {
               return absl::StartsWith(j.value("msg", ""),
                                       "standby: another node");
             }).is_null();
  }

  // Waits (at most 20 s) until standby `d` serves HTTP; its port (0 if it
  // does not).
  static int StandbyPort(const DaemonProcess& d) {
    const Json serving =
        d.WaitForMsg("standby serving health, metrics, the API and the UI");
    return serving.is_object() ? serving.value("port", 0) : 0;
  }

  // Node "a" scheduling (with `more_a` flags) and node "b" standing by,
  // serving HTTP on *b_port. Fails the test (fatally) if either does not come
  // up: call it in ASSERT_NO_FATAL_FAILURE.
  void StartSchedulerAndStandby(std::unique_ptr<DaemonProcess>* a,
                                std::unique_ptr<DaemonProcess>* b, int* b_port,
                                std::vector<std::string> more_a = {}) {
    *a = StartNode("a", true, false, std::move(more_a));
    ASSERT_NE(*a, nullptr);
    *b = StartNode("b", false);
    ASSERT_NE(*b, nullptr);
    *b_port = StandbyPort(**b);
    ASSERT_GT(*b_port, 0) << (*b)->LogText();
  }

  // Waits (at most `limit`) until `node` has run `n` attempts.
  bool WaitForRuns(const std::string& node, int n, absl::Duration limit) {
    const absl::Time deadline = absl::Now() + limit;
    while (absl::Now() < deadline) {
      int seen = 0;
      for (const Line& l : Witness()) seen += l.node == node;
      if (seen >= n) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  }

  TempDir dir_;
  std::unique_ptr<testing::PostgresServer> pg_;
  std::string witness_;
};

}  // namespace chime::daemon_test

#endif  // CHIME_TESTS_DAEMON_SHARED_STORE_FIXTURE_H_
