// EventHub (event_hub.h) on its own: the event text, filters, the
// subscriber limit, slow subscribers dropped, Last-Event-ID replay and
// heartbeats. Streams are read with the server's side of ResponseStream.
#include "src/api/event_hub.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::api {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using Control = http::internal::StreamControl;

// What was written to `stream` since the last Drain.
std::string Drain(http::ResponseStream& stream) {
  std::string out;
  Control::Take(stream, &out);
  Control::Sent(stream, out.size());
  return out;
}

RunEvent Event(const std::string& ns, const std::string& id, uint64_t run,
               const std::string& from, const std::string& to) {
  RunEvent e;
  e.run_id = run;
  e.fire.job = JobKey{ns, id};
  e.fire_id = id + ":1:2026-11-29T02:30:00Z";
  e.from = from;
  e.to = to;
  e.attempt = 1;
  e.at = absl::FromUnixSeconds(1795919400);
  return e;
}

std::shared_ptr<http::ResponseStream> Subscribe(
    EventHub& hub, EventHub::Filter filter = {},
    std::optional<uint64_t> last = std::nullopt) {
  absl::StatusOr<std::shared_ptr<http::ResponseStream>> s =
      hub.Subscribe(filter, last);
  EXPECT_THAT(s, IsOk());
  return s.ok() ? *s : http::ResponseStream::Create();
}

TEST(EventHubTest, FormatsAnEventAsOneServerSentEvent) {
  RunEvent e = Event("ops", "report", 41, "pending", "running");
  e.detail = "line one\nline two";
  EXPECT_EQ(EventHub::Format(17, e),
            "id: 17\nevent: run\ndata: {\"job\":\"ops/report\","
            "\"fire_id\":\"report:1:2026-11-29T02:30:00Z\",\"run_id\":41,"
            "\"from\":\"pending\",\"to\":\"running\",\"attempt\":1,"
            "\"detail\":\"line one\\nline two\","
            "\"time\":\"2026-11-29T02:30:00Z\",\"fires\":1}\n\n");
  // Bytes that are not UTF-8 do not throw.
  e.detail = "\xff";
  EXPECT_THAT(EventHub::Format(1, e), HasSubstr("\"detail\":\"\xEF\xBF\xBD\""));
}

TEST(EventHubTest, SubscribersGetTheEventsTheirFilterMatches) {
  EventHub hub({});
  auto all = Subscribe(hub);
  auto ops = Subscribe(hub, {.name_space = "ops"});
  auto ops_a = Subscribe(hub, {.job = JobKey{"ops", "a"}});
  EXPECT_EQ(Drain(*all), ": chime events\n\n");
  Drain(*ops);
  Drain(*ops_a);
  hub.Publish(Event("ops", "a", 1, "pending", "running"));
  hub.Publish(Event("ops", "b", 2, "pending", "running"));
  hub.Publish(Event("default", "c", 3, "pending", "running"));
  const std::string got_all = Drain(*all);
  EXPECT_THAT(got_all, HasSubstr("id: 1\n"));
  EXPECT_THAT(got_all, HasSubstr("id: 2\n"));
  EXPECT_THAT(got_all, HasSubstr("\"job\":\"c\""));  // the default namespace
  const std::string got_ops = Drain(*ops);
  EXPECT_THAT(got_ops, HasSubstr("\"job\":\"ops/a\""));
  EXPECT_THAT(got_ops, HasSubstr("\"job\":\"ops/b\""));
  EXPECT_THAT(got_ops, Not(HasSubstr("\"job\":\"c\"")));
  const std::string got_a = Drain(*ops_a);
  EXPECT_THAT(got_a, HasSubstr("id: 1\n"));
  EXPECT_THAT(got_a, Not(HasSubstr("ops/b")));
}

TEST(EventHubTest, RefusesSubscribersBeyondTheLimitUntilOneLeaves) {
  EventHub hub({.max_subscribers = 2});
  auto first = Subscribe(hub);
  auto second = Subscribe(hub);
  EXPECT_THAT(hub.Subscribe({}, std::nullopt),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("too many event stream subscribers (2)")));
  Control::Finish(*first);  // its client went away
  EXPECT_EQ(hub.subscribers(), 1);
  EXPECT_THAT(hub.Subscribe({}, std::nullopt), IsOk());
}

TEST(EventHubTest, ASubscriberThatFallsBehindIsDroppedNotWaitedFor) {
  EventHub hub({.max_buffered = 2048});
  auto slow = Subscribe(hub);
  auto fast = Subscribe(hub);
  const absl::Time start = absl::Now();
  for (int i = 0; i < 100; ++i) {
    hub.Publish(Event("ops", "a", i + 1, "pending", "running"));
    Drain(*fast);
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_FALSE(slow->open());
  EXPECT_TRUE(fast->open());
  EXPECT_EQ(hub.subscribers(), 1);
}

TEST(EventHubTest, LastEventIdReplaysTheKeptEventsAfterIt) {
  EventHub hub({.replay_events = 3});
  for (int i = 1; i <= 5; ++i)
    hub.Publish(Event("ops", i % 2 ? "odd" : "even", i, "pending", "running"));
  // Ids 3..5 are kept.
  std::string got = Drain(*Subscribe(hub, {}, 3));
  EXPECT_THAT(got, Not(HasSubstr("id: 3\n")));
  EXPECT_THAT(got, HasSubstr("id: 4\n"));
  EXPECT_THAT(got, HasSubstr("id: 5\n"));
  got = Drain(*Subscribe(hub, {.job = JobKey{"ops", "odd"}}, 3));
  EXPECT_THAT(got, HasSubstr("id: 5\n"));
  EXPECT_THAT(got, Not(HasSubstr("id: 4\n")));
  got = Drain(*Subscribe(hub, {}, 1));
  EXPECT_THAT(got, HasSubstr(": events 2 to 2 are no longer kept"));
  EXPECT_THAT(got, HasSubstr("id: 3\n"));
  // An id from before a restart: everything kept.
  got = Drain(*Subscribe(hub, {}, 99));
  EXPECT_THAT(got, HasSubstr("is not one of this server's"));
  EXPECT_THAT(got, HasSubstr("id: 3\n"));
  // Without Last-Event-ID: only what comes.
  EXPECT_EQ(Drain(*Subscribe(hub)), ": chime events\n\n");
}

TEST(EventHubTest, SendsHeartbeats) {
  EventHub hub({.heartbeat = absl::Milliseconds(20)});
  auto s = Subscribe(hub);
  Drain(*s);
  std::string got;
  for (int i = 0; i < 200 && !absl::StrContains(got, ": heartbeat\n"); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    got += Drain(*s);
  }
  EXPECT_THAT(got, HasSubstr(": heartbeat\n\n"));
}

TEST(EventHubTest, DestroyingTheHubClosesTheStreams) {
  auto hub = std::make_unique<EventHub>(EventHub::Options{});
  auto s = Subscribe(*hub);
  hub.reset();
  EXPECT_FALSE(s->open());
  std::string out;
  Control::Take(*s, &out);  // the opening comment
  EXPECT_EQ(Control::Take(*s, &out), Control::State::kDone);
}

}  // namespace
}  // namespace chime::api
