// Timing and resource readings shared by the chime-bench workloads.
#ifndef CHIME_BENCH_BENCH_CLOCK_H_
#define CHIME_BENCH_BENCH_CLOCK_H_

#include <sys/resource.h>
#include <time.h>

#include <chrono>

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

}  // namespace chime::bench

#endif  // CHIME_BENCH_BENCH_CLOCK_H_
