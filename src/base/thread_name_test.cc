#include "src/base/thread_name.h"

#include <pthread.h>

#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace chime::base {
namespace {

std::string NameOfThisThread() {
  char buf[64] = {};
  pthread_getname_np(pthread_self(), buf, sizeof buf);
  return buf;
}

TEST(NameThisThread, NamesTheCallingThreadOnly) {
  const std::string before = NameOfThisThread();
  std::string seen;
  std::thread t([&seen] {
    NameThisThread("chime-store");
    seen = NameOfThisThread();
  });
  t.join();
  EXPECT_EQ(seen, "chime-store");
  EXPECT_EQ(NameOfThisThread(), before);
}

TEST(NamedThread, RunsItsBodyUnderANameCutAtTheFifteenBytesLinuxKeeps) {
  std::string seen;
  std::thread t = NamedThread("chime-housekeeping-thread",
                              [&seen] { seen = NameOfThisThread(); });
  t.join();
  EXPECT_EQ(seen, "chime-housekeep");
}

}  // namespace
}  // namespace chime::base
