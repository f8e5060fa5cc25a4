// "Why didn't it run?" on the real daemon: the two reasons that are decided
// away from the fire's own schedule -- a job past its end date ("ended") and a
// run that found no free execution slot within its misfire threshold
// ("quota") -- are recorded and listed by GET .../missed, and the waiting run
// ends cancelled saying what held it back.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

class WhyNotRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // `ending` fires every second until its end date, 3 s from now. `hog`
    // (priority 10) takes the only execution slot for 4 s at a time, so the
    // fires of `starved`, whose misfire policy is skip with a 1 s threshold,
    // cannot start in time.
    end_ = absl::Now() + absl::Seconds(3);
    dir_.Write("jobs/jobs.yaml",
               absl::StrCat(R"(
jobs:
  - id: ending
    schedule: "@every 1s"
    end: ")",
                            absl::FormatTime(absl::RFC3339_sec, end_,
                                             absl::UTCTimeZone()),
                            R"("
    shell: { command: "true" }
  - id: hog
    schedule: "@every 1s"
    priority: 10
    shell: { command: "sleep 4" }
  - id: starved
    schedule: "@every 1s"
    misfire: { policy: skip, threshold: 1s }
    shell: { command: "true" }
)"));
    auto d = DaemonProcess::StartIn(dir_, {"--max-concurrent-runs", "1"});
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
  }

  // Polls GET `path` (at most 20 s) until its `key` array holds an item with
  // "reason" == reason; returns that item, or null. (A 404 at first is no
  // failure: the job files' jobs reach the store behind the daemon's start.)
  Json WaitForMissed(const std::string& path, const std::string& reason) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    Json page;
    while (absl::Now() < deadline) {
      absl::StatusOr<HttpResult> r = daemon_->Get(path);
      if (r.ok() && r->status == 200) {
        page = Json::parse(r->body, nullptr, false);
        for (const Json& m : page["missed"]) {
          if (m["reason"] == reason) return m;
        }
      } else if (!r.ok() || r->status != 404) {
        ADD_FAILURE() << path << ": "
                      << (r.ok() ? absl::StrCat(r->status, " ", r->body)
                                 : r.status().ToString());
        return Json();
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    ADD_FAILURE() << "no " << reason << " record at " << path << ": "
                  << page.dump();
    return Json();
  }

  TempDir dir_;
  absl::Time end_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(WhyNotRunTest, AJobPastItsEndDateSaysItEnded) {
  const Json m = WaitForMissed("/v1/jobs/default/ending/missed", "ended");
  ASSERT_FALSE(m.is_null());
  // One record: the first fire past the end date (the end is inclusive).
  EXPECT_EQ(m["count"], 1);
  EXPECT_EQ(m["first"], m["last"]);
  absl::Time first;
  std::string error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, m["first"].get<std::string>(),
                              &first, &error))
      << error;
  EXPECT_GT(first, end_);
  EXPECT_LE(first, end_ + absl::Seconds(1));
  // It is recorded once, however long the daemon keeps going.
  absl::SleepFor(absl::Seconds(2));
  int ended = 0;
  const Json page = daemon_->GetJson("/v1/jobs/default/ending/missed");
  for (const Json& r : page["missed"]) ended += r["reason"] == "ended";
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(
      daemon_->GetJson("/v1/jobs/default/ending")["status"]["next_fire_time"],
      nullptr);
}

TEST_F(WhyNotRunTest, ARunThatFindsNoSlotInTimeIsMissedSayingWhy) {
  const Json m = WaitForMissed("/v1/jobs/default/starved/missed", "quota");
  ASSERT_FALSE(m.is_null());
  EXPECT_EQ(m["count"], 1);
  // Its run was claimed, then cancelled with what held it back.
  const Json runs =
      daemon_->GetJson("/v1/jobs/default/starved/runs?state=cancelled");
  ASSERT_FALSE(runs["runs"].empty()) << runs.dump();
  EXPECT_THAT(runs["runs"][0]["detail"].get<std::string>(),
              HasSubstr("not started within the misfire threshold (1s): the "
                        "only execution slot was taken (the global limit)"))
      << runs.dump();
}

}  // namespace
}  // namespace chime::daemon_test
