// Names for chime's own threads, so that `top -H`, `ps -L`, perf and gdb
// tell the scheduler, the store and the listener apart.
#ifndef CHIME_BASE_THREAD_NAME_H_
#define CHIME_BASE_THREAD_NAME_H_

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace chime::base {

// Names the calling thread. Linux keeps at most 15 bytes of a name; a longer
// one is cut there. Failure is ignored: a name is only a label.
inline void NameThisThread(std::string_view name) {
  char buf[16];
  const size_t n = std::min(name.size(), sizeof buf - 1);
  std::memcpy(buf, name.data(), n);
  buf[n] = '\0';
  pthread_setname_np(pthread_self(), buf);
}

// A thread named `name` (as NameThisThread names it) that runs `body`:
//   thread_ = base::NamedThread("chime-store", [this] { Loop(); });
template <typename F>
std::thread NamedThread(std::string_view name, F&& body) {
  return std::thread(
      [name = std::string(name), body = std::forward<F>(body)]() mutable {
        NameThisThread(name);
        body();
      });
}

}  // namespace chime::base

#endif  // CHIME_BASE_THREAD_NAME_H_
