// Timing and resource readings shared by the chime-bench workloads.
#ifndef CHIME_BENCH_BENCH_CLOCK_H_
#define CHIME_BENCH_BENCH_CLOCK_H_

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace chime::bench {

using SteadyClock = std::chrono::steady_clock;

inline double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// CPU time of the calling thread: on a shared machine, the figure least
// disturbed by other load.
inline double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

// User + system CPU time of the whole process (every thread).
inline double ProcessCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) +
           static_cast<double>(tv.tv_usec) * 1e-6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Peak resident set size of the process.
inline double MaxRssMb() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
}

// CPU cores busy on the whole machine (every process, this one included)
// since the previous reading of `last`, from /proc/stat; 0 if unreadable.
inline double MachineBusyCores(std::vector<int64_t>& last) {
  std::vector<int64_t> now;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;  // "cpu": the sum over every core, in clock ticks
  for (int64_t v = 0; now.size() < 8 && stat >> v;) now.push_back(v);
  if (now.size() < 8 || last.size() != now.size()) {
    last = now;
    return 0;
  }
  // user nice system idle iowait irq softirq steal
  auto busy = [](const std::vector<int64_t>& t) {
    return t[0] + t[1] + t[2] + t[5] + t[6] + t[7];
  };
  const double busy_ticks = static_cast<double>(busy(now) - busy(last));
  const double idle_ticks =
      static_cast<double>(now[3] + now[4] - last[3] - last[4]);
  last = now;
  const double cores = std::thread::hardware_concurrency();
  return busy_ticks + idle_ticks > 0
             ? cores * busy_ticks / (busy_ticks + idle_ticks)
             : 0;
}

}  // namespace chime::bench

#endif  // CHIME_BENCH_BENCH_CLOCK_H_
