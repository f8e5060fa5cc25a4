#include "daemon/logger.h"

#include <cstdio>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/simulated_clock.h"

namespace chime::daemon {
namespace {

using ::testing::HasSubstr;

// Runs `log` against a Logger writing to a memory stream; returns the text.
template <typename F>
std::string Capture(LogFormat format, LogLevel min, F log) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  SimulatedClock clock;
  {
    Logger logger(out, format, min, clock);
    log(logger);
  }
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

TEST(LoggerTest, JsonLinesCarryTimeLevelMessageAndFields) {
  const std::string text =
      Capture(LogFormat::kJson, LogLevel::kInfo, [](Logger& log) {
        log.Info("job added",
                 {{"job", std::string("ops/backup")}, {"n", int64_t{3}}});
        log.Log(LogLevel::kDebug, "not shown");
      });
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["ts"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["msg"], "job added");
  EXPECT_EQ(j["job"], "ops/backup");
  EXPECT_EQ(j["n"], 3);
}

TEST(LoggerTest, TextQuotesValuesThatAreNotOneWord) {
  const std::string text =
      Capture(LogFormat::kText, LogLevel::kDebug, [](Logger& log) {
        log.Warn("job file not loaded",
                 {{"file", std::string("jobs/a.yaml")},
                  {"error", std::string("a.yaml:3:5: id: \"x y\" bad")}});
      });
  EXPECT_EQ(
      text,
      "2026-01-01T00:00:00.000Z WARN job file not loaded file=jobs/a.yaml "
      "error=\"a.yaml:3:5: id: \\\"x y\\\" bad\"\n");
}

TEST(LoggerTest, RunEventsCarryTheFireId) {
  RunEvent failed{.run_id = 7,
                  .fire_id = "backup:1:2026-01-01T02:30:00Z",
                  .from = "running",
                  .to = "failed",
                  .attempt = 2,
                  .detail = "exit status 3"};
  RunEvent missed{.fire_id = "backup:1:2026-01-01T03:30:00Z",
                  .to = "missed",
                  .detail = "paused: 2 fires from ...",
                  .fires = 2};
  const std::string text =
      Capture(LogFormat::kJson, LogLevel::kInfo, [&](Logger& log) {
        log.LogRunEvent(failed);
        log.LogRunEvent(missed);
      });
  const size_t nl = text.find('\n');
  const nlohmann::json a = nlohmann::json::parse(text.substr(0, nl));
  const nlohmann::json b = nlohmann::json::parse(text.substr(nl + 1));
  EXPECT_EQ(a["level"], "warn");
  EXPECT_EQ(a["msg"], "run failed");
  EXPECT_EQ(a["fire_id"], failed.fire_id);
  EXPECT_EQ(a["run_id"], 7);
  EXPECT_EQ(a["attempt"], 2);
  EXPECT_EQ(a["detail"], "exit status 3");
  EXPECT_EQ(b["msg"], "fire missed");
  EXPECT_EQ(b["fire_id"], missed.fire_id);
  EXPECT_EQ(b["fires"], 2);
}

// A batch's records are written together when it ends, in the order they
// were made; another thread's record meanwhile is written at once, and a
// nested batch's records go with the outer one's.
TEST(LoggerTest, ABatchWritesItsThreadsRecordsTogetherWhenItEnds) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  SimulatedClock clock;
  std::string during, after;
  {
    Logger log(out, LogFormat::kText, LogLevel::kInfo, clock);
    {
      Logger::Batch batch(log);
      log.Info("first");
      {
        Logger::Batch inner(log);
        log.Info("second");
      }
      log.Log(LogLevel::kDebug, "dropped");
      std::thread other([&] { log.Info("other thread"); });
      other.join();
      log.Info("third");
      during = std::string(buf, size);  // flushed after every write
    }
    after = std::string(buf, size);
    log.Info("fourth");
  }
  std::fclose(out);
  const std::string text(buf, size);
  std::free(buf);
  const std::string ts = "2026-01-01T00:00:00.000Z INFO ";
  EXPECT_EQ(during, ts + "other thread\n");
  EXPECT_EQ(after, ts + "other thread\n" + ts + "first\n" + ts + "second\n" +
                       ts + "third\n");
  EXPECT_EQ(text, after + ts + "fourth\n");
}

}  // namespace
}  // namespace chime::daemon
