// Daemons sharing one PostgreSQL store (config `store`), on a real
// PostgreSQL 15 server the test starts: one schedules, the others wait as
// standbys; when the scheduler dies a standby takes over within a few lease
// ttls, and no fire runs twice; a scheduler that cannot renew its lease
// stops (exit status 3) rather than run beside its successor; so does one
// whose clock goes off from the database's, and a node whose clock is off
// does not take the lease (its clock faked with libfaketime).
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/status_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/shared_store_fixture.h"

namespace chime::daemon_test {
namespace {

TEST_F(SharedStoreTest,
       AStandbyTakesOverWhenTheSchedulerDiesAndNoFireRunsTwice) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20))) << a->LogText();

  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  // The standby runs nothing while `a` holds the lease.
  absl::SleepFor(absl::Seconds(3));
  for (const Line& l : Witness()) EXPECT_EQ(l.node, "a") << l.fire_id;
  EXPECT_TRUE(
      b->WaitForMsg("chime serving", "", absl::Milliseconds(1)).is_null());

  a->Kill();
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(30))) << b->LogText();
  // The lease (2 s) had to expire first; then `b` recovered and ran. A
  // generous bound: the failover time itself is a benchmark's business.
  EXPECT_LT(absl::Now() - killed, absl::Seconds(20));
  EXPECT_FALSE(b->WaitForMsg("standby: took over the store").is_null());

  // Every fire ran at most once per attempt number, and `b`'s fencing token
  // is newer than every one of `a`'s.
  std::map<std::pair<std::string, int>, std::string> ran;
  int64_t a_max = 0, b_min = INT64_MAX;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " attempt " << l.attempt << " ran on "
                       << it->second << " and " << l.node;
    if (l.node == "a") a_max = std::max(a_max, l.token);
    if (l.node == "b") b_min = std::min(b_min, l.token);
  }
  EXPECT_GT(b_min, a_max);
  EXPECT_EQ(b->Terminate(), 0);
}

// A zombie: the scheduler is frozen (SIGSTOP) for longer than its lease, a
// standby takes over, then the zombie wakes up. It must start nothing -- its
// own deadline passed while it slept -- and it leaves (status 3).
TEST_F(SharedStoreTest,
       AFrozenSchedulerThatWakesUpAfterATakeoverStartsNothing) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20))) << a->LogText();
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();

  ASSERT_EQ(kill(a->pid(), SIGSTOP), 0);
  const absl::Time frozen = absl::Now();
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(30))) << b->LogText();
  ASSERT_EQ(kill(a->pid(), SIGCONT), 0);
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  absl::SleepFor(absl::Seconds(1));  // b goes on meanwhile

  // Nothing `a` ran was scheduled after it froze (an attempt running then
  // may have finished its line later), and no fire ran twice.
  std::map<std::pair<std::string, int>, std::string> ran;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " ran on " << it->second << " and "
                       << l.node;
    if (l.node != "a") continue;
    // "<job>:<generation>:<scheduled time>"
    const size_t second_colon = l.fire_id.find(':', l.fire_id.find(':') + 1);
    const std::string when = l.fire_id.substr(second_colon + 1);
    absl::Time scheduled;
    std::string error;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, when, &scheduled, &error))
        << when << ": " << error;
    EXPECT_LE(scheduled, frozen) << l.fire_id << " started by the zombie";
  }
  EXPECT_EQ(b->Terminate(), 0);
}

// Every node, standbys included, is a member while it lives; GET
// /v1/cluster and `chime status` say which nodes are and which schedules.
TEST_F(SharedStoreTest, EveryLiveNodeIsAMemberAndTheClusterSaysWhoSchedules) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  // The live members' names, as /v1/cluster on `a` gives them, once
  // `until` holds of them (at most 15 s).
  const auto members =
      [&](const std::function<bool(const std::string&)>& until) {
        std::string names;
        for (int i = 0; i < 150; ++i) {
          const Json c = a->GetJson("/v1/cluster");
          names.clear();
          for (const Json& m : c.value("members", Json::array()))
            names += m.value("node", "?") +
                     (m.value("scheduling", false) ? "*" : "") + " ";
          if (until(names)) break;
          absl::SleepFor(absl::Milliseconds(100));
        }
        return names;
      };
  EXPECT_EQ(members([](const std::string& n) { return n == "a* b "; }),
            "a* b ");
  const Json c = a->GetJson("/v1/cluster");
  EXPECT_EQ(c["node"], "a");
  EXPECT_EQ(c["shared_store"], true);
  EXPECT_EQ(c["scheduler"]["node"], "a");
  EXPECT_GT(c["scheduler"]["epoch"].get<int64_t>(), 0);
  EXPECT_TRUE(c["clock_offset_seconds"].is_number()) << c.dump();
  EXPECT_LT(std::abs(c["clock_offset_seconds"].get<double>()), 0.5);
  EXPECT_EQ(c["max_clock_skew_seconds"], 1.0);
  const CliResult status = RunChime(
      {"status", "--server", absl::StrCat("http://127.0.0.1:", a->port())},
      {cli::AddStatusCommand});
  EXPECT_EQ(status.status, 0) << status.err;
  EXPECT_THAT(status.out, ::testing::HasSubstr("members:      2 live (a, b)"));
  EXPECT_THAT(status.out,
              ::testing::HasSubstr("lease:        scheduler held by a pid "));

  // A standby killed drops out once its member lease expires (2 s); one
  // stopped leaves at once (it releases its lease).
  b->Kill();
  EXPECT_EQ(members([](const std::string& n) { return n == "a* "; }), "a* ");
  std::unique_ptr<DaemonProcess> c2 = StartNode("c", false);
  ASSERT_NE(c2, nullptr);
  ASSERT_TRUE(IsStandby(*c2)) << c2->LogText();
  EXPECT_EQ(members([](const std::string& n) { return n == "a* c "; }),
            "a* c ");
  EXPECT_EQ(c2->Terminate(), 0);
  const Json after = a->GetJson("/v1/cluster");
  ASSERT_EQ(after["members"].size(), 1u) << after.dump();
  EXPECT_EQ(a->Terminate(), 0);
}

TEST_F(SharedStoreTest, AStandbyStopsOnSigtermWhileWaiting) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  EXPECT_EQ(b->Terminate(absl::Seconds(10)), 0) << b->LogText();
  EXPECT_FALSE(b->WaitForMsg("signal received while waiting as a standby; "
                             "exiting",
                             "", absl::Milliseconds(1))
                   .is_null());
  EXPECT_EQ(a->Terminate(), 0);
}

// The scheduler's clock jumps 30 s ahead of the database's: it gives the
// lease up (status 3) and a standby whose clock agrees takes over; restarted
// with its clock still off, it does not take the lease even when it is free,
// until its clock agrees again.
TEST_F(SharedStoreTest, ANodeWhoseClockIsOffDoesNotSchedule) {
  SetClock("a", "+0");
  std::unique_ptr<DaemonProcess> a = StartNode("a", true, true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20))) << a->LogText();
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();

  SetClock("a", "+30");
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  EXPECT_FALSE(a->WaitForLog([](const Json& j) {
                  return absl::StartsWith(j.value("msg", ""),
                                          "this node's clock is off from the "
                                          "store's: giving up");
                }).is_null())
      << a->LogText();
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(20))) << b->LogText();

  // `b` stops (releasing the lease); `a`, restarted with its clock still
  // 30 s ahead, finds the lease free but does not keep it.
  EXPECT_EQ(b->Terminate(), 0);
  const size_t ran_before = Witness().size();
  a = StartNode("a", false, true);
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->WaitForLog([](const Json& j) {
                  return absl::StartsWith(j.value("msg", ""),
                                          "standby: this node's clock is off");
                }).is_null())
      << a->LogText();
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Witness().size(), ran_before);

  // Its clock agrees again: it takes the lease and runs the job.
  int ran_on_a = 0;
  for (const Line& l : Witness()) ran_on_a += l.node == "a";
  SetClock("a", "+0");
  ASSERT_TRUE(WaitForRuns("a", ran_on_a + 2, absl::Seconds(20)))
      << a->LogText();
  std::map<std::pair<std::string, int>, std::string> ran;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " ran on " << it->second << " and "
                       << l.node;
  }
  EXPECT_EQ(a->Terminate(), 0);
}

// The database restarts: the scheduler leaves (it cannot prove its lease),
// and a standby waits the outage out instead of exiting, then takes over.
TEST_F(SharedStoreTest, AStandbyWaitsOutADatabaseRestartAndTakesOver) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  ASSERT_TRUE(pg_->StopImmediately().ok());
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  EXPECT_FALSE(b->WaitForMsg("standby: the store does not answer; trying "
                             "again")
                   .is_null())
      << b->LogText();
  ASSERT_TRUE(pg_->Restart().ok());
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(30))) << b->LogText();
  EXPECT_EQ(b->Terminate(), 0);
}

TEST_F(SharedStoreTest, ASchedulerThatCannotRenewItsLeaseStops) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 1, absl::Seconds(20))) << a->LogText();
  // The database goes away: `a` cannot prove it still holds the lease, so
  // it must stop before another node could have taken it over.
  ASSERT_TRUE(pg_->StopImmediately().ok());
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  EXPECT_FALSE(a->WaitForMsg("lost the store's lease: exiting", "",
                             absl::Milliseconds(1))
                   .is_null())
      << a->LogText();

  // Back again, a node (here `a` restarted) gets the lease once it expired
  // and goes on.
  ASSERT_TRUE(pg_->Restart().ok());
  const size_t before = Witness().size();
  std::unique_ptr<DaemonProcess> again = StartNode("a", true);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(WaitForRuns("a", static_cast<int>(before) + 2, absl::Seconds(20)))
      << again->LogText();
  EXPECT_EQ(again->Terminate(), 0);
}

}  // namespace
}  // namespace chime::daemon_test
