// Logger: the daemon's structured log. One line per record, on one stream:
// a JSON object ({"ts":"2026-11-29T15:30:00.123Z","level":"info",
// "msg":"run succeeded","fire_id":"backup:1:...",...}) or, for a person at a
// terminal, text ("2026-11-29T15:30:00.123Z INFO run succeeded fire_id=...").
// Every record about a run carries its fire_id.
//
// Thread-safety: Log may be called from any thread; records never interleave.
#ifndef CHIME_DAEMON_LOGGER_H_
#define CHIME_DAEMON_LOGGER_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "chime/clock.h"
#include "chime/scheduler.h"

namespace chime::daemon {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kJson, kText };

// "debug", "info", "warn", "error".
absl::string_view LogLevelName(LogLevel level);

class Logger {
 public:
  using Value = std::variant<std::string, int64_t>;
  using Field = std::pair<absl::string_view, Value>;

  // Writes to `out` (not owned; flushed after every record) records at
  // `min_level` or above, stamped with `clock`'s wall time.
  Logger(std::FILE* out, LogFormat format, LogLevel min_level, Clock& clock);

  // Field names are distinct, and none is ts, level or msg.
  void Log(LogLevel level, absl::string_view msg,
           std::initializer_list<Field> fields = {});
  void Info(absl::string_view msg, std::initializer_list<Field> fields = {}) {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(absl::string_view msg, std::initializer_list<Field> fields = {}) {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(absl::string_view msg, std::initializer_list<Field> fields = {}) {
    Log(LogLevel::kError, msg, fields);
  }

  // From now on, records below `level` are dropped (a reload may change it).
  void SetLevel(LogLevel level) { min_level_.store(level); }

  // While a Batch lives, the records its thread logs through `logger` are
  // kept and written together when it ends, in order, with one write(2):
  // for records made at one moment anyway (the answers to a batch of job
  // changes; a write per record was ~2% of the daemon's CPU in a burst of
  // creations). Other threads' records are written as they come. A Batch
  // inside another of the same thread keeps its records in the outer one.
  class Batch {
   public:
    explicit Batch(Logger& logger);
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    friend class Logger;
    Logger& logger_;
    Batch* const outer_;  // the thread's batch before this one
    std::string lines_;
  };

  // A run transition or a fire that did not run, at info (warn for failed,
  // lost, missed), with fire_id, run_id, from, to, attempt and detail.
  void LogRunEvent(const RunEvent& event);

 private:
  std::string Render(LogLevel level, absl::string_view msg,
                     std::initializer_list<Field> fields) const;
  void Write(absl::string_view lines);

  std::FILE* const out_;
  const LogFormat format_;
  std::atomic<LogLevel> min_level_;
  Clock& clock_;
  absl::Mutex mu_;
};

}  // namespace chime::daemon

#endif  // CHIME_DAEMON_LOGGER_H_
