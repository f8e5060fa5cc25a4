// LiveOutput (live_output.h) on its own: followers of a running attempt, of
// a run still waiting for one, and of one that ended; the kept tail; slow
// followers dropped. Streams are read with the server's side of
// ResponseStream.
#include "src/api/live_output.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chime::api {
namespace {

using Control = http::internal::StreamControl;

// What was written to `stream` since the last Read, and whether it is done.
struct Got {
  std::string text;
  bool done = false;
};
Got Read(http::ResponseStream& stream) {
  Got got;
  std::string piece;
  while (true) {
    const Control::State state = Control::Take(stream, &piece);
    Control::Sent(stream, piece.size());
    got.text += piece;
    if (state == Control::State::kDone) got.done = true;
    if (state != Control::State::kMore || piece.empty()) return got;
  }
}

RunEvent Ended(uint64_t run, const std::string& to) {
  RunEvent e;
  e.run_id = run;
  e.from = "running";
  e.to = to;
  return e;
}

TEST(LiveOutputTest, AFollowerGetsWhatIsKeptThenWhatComesThenTheEnd) {
  LiveOutput live;
  auto attempt = live.Begin(7, 1024);
  live.Append(*attempt, "first\n");
  auto stream = live.Follow(7);
  ASSERT_NE(stream, nullptr);
  Got got = Read(*stream);
  EXPECT_EQ(got.text, "first\n");
  EXPECT_FALSE(got.done);
  live.Append(*attempt, "second\n");
  EXPECT_EQ(Read(*stream).text, "second\n");
  live.End(*attempt);
  got = Read(*stream);
  EXPECT_EQ(got.text, "");
  EXPECT_TRUE(got.done);
  // Ended: the run history has it now.
  EXPECT_EQ(live.Follow(7), nullptr);
  EXPECT_FALSE(live.Snapshot(7).has_value());
}

TEST(LiveOutputTest, AFollowerOfAPendingRunWaitsForItsAttempt) {
  LiveOutput live;
  auto stream = live.Follow(8);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(Read(*stream).text, "");
  auto attempt = live.Begin(8, 1024);
  live.Append(*attempt, "hello\n");
  // An HTTP job streams nothing; its kept response comes at the end.
  live.End(*attempt, "HTTP 200\n");
  const Got got = Read(*stream);
  EXPECT_EQ(got.text, "hello\nHTTP 200\n");
  EXPECT_TRUE(got.done);
}

TEST(LiveOutputTest, ARunThatEndsWithoutAnAttemptEndsItsWaiters) {
  LiveOutput live;
  auto stream = live.Follow(9);
  live.OnRunEvent(Ended(9, "retrying"));  // not an end
  EXPECT_FALSE(Read(*stream).done);
  live.OnRunEvent(Ended(9, "cancelled"));
  EXPECT_TRUE(Read(*stream).done);
  EXPECT_EQ(live.Follow(9), nullptr);
}

TEST(LiveOutputTest, ANewAttemptIsFollowedAgain) {
  LiveOutput live;
  auto first = live.Begin(10, 1024);
  live.End(*first);
  EXPECT_EQ(live.Follow(10), nullptr);  // between attempts: the history's
  auto second = live.Begin(10, 1024);
  live.Append(*second, "again\n");
  auto stream = live.Follow(10);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(Read(*stream).text, "again\n");
}

TEST(LiveOutputTest, KeepsTheTailWithAMarker) {
  LiveOutput live;
  auto attempt = live.Begin(11, 4);
  live.Append(*attempt, "abcdef");
  EXPECT_EQ(live.Snapshot(11), "[chime: first 2 bytes dropped]\ncdef");
  auto stream = live.Follow(11);
  EXPECT_EQ(Read(*stream).text, "[chime: first 2 bytes dropped]\ncdef");
  live.Append(*attempt, "gh");
  EXPECT_EQ(Read(*stream).text, "gh");  // followers get everything that comes
}

TEST(LiveOutputTest, AFollowerThatFallsBehindIsDropped) {
  LiveOutput live;
  auto attempt = live.Begin(12, 1024);
  auto slow = live.Follow(12);
  auto fast = live.Follow(12);
  const std::string piece(64 << 10, 'x');
  for (size_t sent = 0; sent <= LiveOutput::kFollowSlack;
       sent += piece.size()) {
    live.Append(*attempt, piece);
    Read(*fast);
  }
  EXPECT_FALSE(slow->open());
  EXPECT_TRUE(fast->open());
  live.End(*attempt);
  EXPECT_TRUE(Read(*fast).done);
}

}  // namespace
}  // namespace chime::api
