// The streaming routes (src/api/stream_routes.h) on the real daemon:
// following a running command's output, the event stream of run
// transitions with its filters and replay, and the CLI's `run logs
// --follow` and `events --count`. Every wait is bounded.
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cli/app.h"
#include "cli/job_command.h"
#include "cli/stream_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// `slow` prints a line, sleeps a second, prints another.
constexpr char kJobs[] = R"(
jobs:
  - id: slow
    namespace: ops
    schedule: "0 0 1 1 *"
    shell: { command: "echo first; sleep 1; echo second" }
  - id: quick
    schedule: "0 0 1 1 *"
    shell: { command: "echo quick" }
)";

// The (from, to) transitions of run `run` in an event stream's text, in
// order; also checks that ids increase.
std::vector<std::pair<std::string, std::string>> Transitions(
    const std::string& stream, int64_t run) {
  std::vector<std::pair<std::string, std::string>> out;
  int64_t last_id = 0;
  for (absl::string_view event : absl::StrSplit(stream, "\n\n")) {
    int64_t id = 0;
    for (absl::string_view line : absl::StrSplit(event, '\n')) {
      if (absl::ConsumePrefix(&line, "id: ")) {
        EXPECT_TRUE(absl::SimpleAtoi(line, &id));
        EXPECT_GT(id, last_id);
        last_id = id;
      }
      if (!absl::ConsumePrefix(&line, "data: ")) continue;
      const nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
      EXPECT_TRUE(e.is_object()) << line;
      if (e.is_object() && e["run_id"] == run) {
        out.emplace_back(e["from"].get<std::string>(),
                         e["to"].get<std::string>());
      }
    }
  }
  return out;
}

class ApiStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", kJobs);
    auto d = DaemonProcess::StartIn(dir_);
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
    // The jobs reach the store behind the load.
    for (int i = 0; i < 200; ++i) {
      absl::StatusOr<HttpResult> r = daemon_->Get("/v1/jobs/default/quick");
      if (r.ok() && r->status == 200) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  // The status of GET `path` (0 if there was no answer).
  long Code(const std::string& path) {
    absl::StatusOr<HttpResult> r = daemon_->Get(path);
    return r.ok() ? r->status : 0;
  }

  int64_t Trigger(const std::string& ns, const std::string& id) {
    absl::StatusOr<HttpResult> r =
        HttpDo(daemon_->port(), "POST",
               absl::StrCat("/v1/jobs/", ns, "/", id, "/trigger"), {});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 0;
    EXPECT_EQ(r->status, 201) << r->body;
    const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    return j.is_object() ? j["run_id"].get<int64_t>() : 0;
  }

  // `chime <args> --server <daemon>` on a thread of its own, calling
  // `on_wait` every 50 ms meanwhile. If it has not returned within `limit`
  // the daemon is killed, which ends its stream.
  CliResult Chime(
      std::vector<std::string> args,
      const std::function<void()>& on_wait = [] {},
      absl::Duration limit = absl::Seconds(30)) {
    args.push_back("--server");
    args.push_back(absl::StrCat("http://127.0.0.1:", daemon_->port()));
    auto result = std::make_shared<CliResult>();
    std::atomic<bool> done{false};
    std::thread cli([args, result, &done] {
      *result = RunChime(args, {cli::AddJobCommand, cli::AddRunCommand,
                                cli::AddEventsCommand});
      done = true;
    });
    const absl::Time deadline = absl::Now() + limit;
    while (!done && absl::Now() < deadline) {
      on_wait();
      absl::SleepFor(absl::Milliseconds(50));
    }
    if (!done) {
      ADD_FAILURE() << "chime " << args[1] << " did not return in time";
      daemon_->Kill();
    }
    cli.join();
    return *result;
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(ApiStreamTest, FollowingOutputGetsEachLineAsItComesAndEndsWithTheRun) {
  const int64_t run = Trigger("ops", "slow");
  ASSERT_GT(run, 0);
  const std::string path =
      absl::StrCat("/v1/jobs/ops/slow/runs/", run, "/output");
  absl::Time first_seen = absl::InfiniteFuture();
  absl::StatusOr<StreamedResult> followed = HttpStream(
      daemon_->port(), path + "?follow=true", {},
      [&](const HttpResult& so_far) {
        if (first_seen == absl::InfiniteFuture() &&
            absl::StrContains(so_far.body, "first\n")) {
          first_seen = absl::Now();
        }
        return false;  // read to the end
      },
      absl::Seconds(20));
  const absl::Time ended = absl::Now();
  ASSERT_TRUE(followed.ok()) << followed.status();
  EXPECT_TRUE(followed->ended);
  EXPECT_EQ(followed->http.status, 200);
  EXPECT_THAT(followed->http.Header("Content-Type"), HasSubstr("text/plain"));
  EXPECT_EQ(followed->http.body, "first\nsecond\n");
  // The first line came while the command slept, a second before the end.
  EXPECT_GE(ended - first_seen, absl::Milliseconds(500));

  // Once the run has ended, its output is the history's; following it just
  // sends that.
  nlohmann::json detail;
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<HttpResult> r =
        daemon_->Get(absl::StrCat("/v1/jobs/ops/slow/runs/", run));
    if (r.ok()) detail = nlohmann::json::parse(r->body, nullptr, false);
    if (detail.is_object() && detail["state"] == "succeeded") break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(detail.is_object());
  EXPECT_EQ(detail["state"], "succeeded");
  absl::StatusOr<HttpResult> plain = daemon_->Get(path);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->body, "first\nsecond\n");
  followed = HttpStream(daemon_->port(), path + "?follow=true", {},
                        [](const HttpResult&) { return false; });
  ASSERT_TRUE(followed.ok()) << followed.status();
  EXPECT_EQ(followed->http.body, "first\nsecond\n");

  EXPECT_EQ(Code(path + "?follow=maybe"), 400);
  EXPECT_EQ(Code("/v1/jobs/ops/slow/runs/99999/output"), 404);
  // Another job's run.
  EXPECT_EQ(Code(absl::StrCat("/v1/jobs/default/quick/runs/", run, "/output")),
            404);
}

TEST_F(ApiStreamTest, EventStreamsGetTheTransitionsTheirFiltersMatch) {
  // Three subscribers, each reading until its job's run has succeeded.
  struct Subscriber {
    std::string query;
    std::string job;  // whose success ends the read
    std::atomic<bool> open{false};
    absl::StatusOr<StreamedResult> result = absl::UnknownError("not read");
  };
  Subscriber subs[3] = {{.query = "?job=ops/slow", .job = "ops/slow"},
                        {.query = "?namespace=ops", .job = "ops/slow"},
                        {.query = "?job=quick", .job = "quick"}};
  std::vector<std::thread> readers;
  for (Subscriber& s : subs) {
    readers.emplace_back([this, &s] {
      s.result = HttpStream(
          daemon_->port(), "/v1/events" + s.query, {},
          [&s](const HttpResult& so_far) {
            if (absl::StrContains(so_far.body, ": chime events")) s.open = true;
            return absl::StrContains(so_far.body,
                                     absl::StrCat("\"job\":\"", s.job, "\"")) &&
                   absl::StrContains(so_far.body, "\"to\":\"succeeded\"");
          },
          absl::Seconds(20));
    });
  }
  for (int i = 0; i < 200 && !(subs[0].open && subs[1].open && subs[2].open);
       ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const int64_t quick = Trigger("default", "quick");
  const int64_t slow = Trigger("ops", "slow");
  for (std::thread& t : readers) t.join();
  for (Subscriber& s : subs) {
    ASSERT_TRUE(s.result.ok()) << s.query << ": " << s.result.status();
    EXPECT_THAT(s.result->http.Header("Content-Type"),
                HasSubstr("text/event-stream"));
  }
  const std::string& slow_only = subs[0].result->http.body;
  const std::string& ops = subs[1].result->http.body;
  const std::string& quick_only = subs[2].result->http.body;
  using T = std::pair<std::string, std::string>;
  for (const std::string* body : {&slow_only, &ops}) {
    const std::vector<T> seen = Transitions(*body, slow);
    const auto running =
        std::find(seen.begin(), seen.end(), T{"pending", "running"});
    ASSERT_NE(running, seen.end()) << *body;
    EXPECT_NE(std::find(running, seen.end(), T{"running", "succeeded"}),
              seen.end())
        << *body;
    EXPECT_THAT(*body, Not(HasSubstr("\"job\":\"quick\"")));
  }
  EXPECT_THAT(Transitions(quick_only, quick),
              ::testing::Contains(T{"running", "succeeded"}));
  EXPECT_THAT(quick_only, Not(HasSubstr("ops/slow")));

  // Last-Event-ID 0: the kept events are replayed at once.
  absl::StatusOr<StreamedResult> replay = HttpStream(
      daemon_->port(), "/v1/events?job=ops/slow", {"Last-Event-ID: 0"},
      [](const HttpResult& so_far) {
        return absl::StrContains(so_far.body, "\"to\":\"succeeded\"");
      });
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_THAT(Transitions(replay->http.body, slow),
              ::testing::Contains(T{"pending", "running"}));
  EXPECT_EQ(Code("/v1/events?job=a/b/c"), 400);
}

TEST_F(ApiStreamTest, CliFollowsOutputAndPrintsEvents) {
  const int64_t run = Trigger("ops", "slow");
  ASSERT_GT(run, 0);
  const CliResult logs =
      Chime({"run", "logs", "ops/slow", absl::StrCat(run), "--follow"});
  EXPECT_EQ(logs.status, 0) << logs.err;
  EXPECT_EQ(logs.out, "first\nsecond\n");

  // `events` asks for no replay: trigger `quick` again and again until it
  // has seen three events of it (a trigger while a run is going is refused:
  // no matter).
  const CliResult events =
      Chime({"events", "--job", "quick", "--count", "3"},
            [this, last = absl::InfinitePast()]() mutable {
              if (absl::Now() - last < absl::Milliseconds(300)) return;
              last = absl::Now();
              (void)HttpDo(daemon_->port(), "POST",
                           "/v1/jobs/default/quick/trigger", {});
            });
  EXPECT_EQ(events.status, 0) << events.err;
  const std::vector<std::string> lines =
      absl::StrSplit(events.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << events.out;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, HasSubstr("  quick  run ")) << line;
    EXPECT_THAT(line, HasSubstr(" -> ")) << line;
  }
  const CliResult bad = Chime({"events", "--job", "a/b/c"});
  EXPECT_EQ(bad.status, 2) << bad.err;
}

}  // namespace
}  // namespace chime::daemon_test
