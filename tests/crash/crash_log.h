// The two files crash_host writes beside its store, one line per record, and
// how the crash test reads them back.
//
//   witness  one line per attempt a job body began, written by the body itself
//            before it does anything else: "<fire_id> <run_id> <attempt>
//            <token>". It is what really ran, whatever the store says.
//   acks     one line per RunEvent the scheduler passed to on_run_event: the
//            scheduler emits an event only once the store has recorded it, so
//            every line is an acknowledged write: "<run_id> <from> <to>
//            <attempt> <fire_id> <detail>" (from "-" when empty).
//
// Each line goes out in one write() on a file opened with O_APPEND: concurrent
// writers never interleave within a line, and a SIGKILL leaves every completed
// write() in the file (it is in the page cache; only a machine crash could
// lose it, and the test kills processes, not machines).
//
// Thread-safety: AppendFile::Append may be called from any thread; the rest
// are pure functions.
#ifndef CHIME_TESTS_CRASH_CRASH_LOG_H_
#define CHIME_TESTS_CRASH_CRASH_LOG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/scheduler.h"

namespace chime::crash {

struct WitnessLine {
  std::string fire_id;
  uint64_t run_id = 0;
  int attempt = 0;
  int64_t token = 0;
};

// The line (with its newline) and back; nullopt for a line that is not one.
std::string FormatWitness(const AttemptContext& ctx);
std::optional<WitnessLine> ParseWitness(absl::string_view line);

// The line (with its newline) and back; nullopt for a line that is not one.
// The parsed event's `at` is not kept.
std::string FormatAck(const RunEvent& event);
std::optional<RunEvent> ParseAck(absl::string_view line);

// A file opened for appending whole lines.
class AppendFile {
 public:
  // Creates the file if absent. Unavailable names the file and the errno.
  static absl::StatusOr<std::unique_ptr<AppendFile>> Open(
      const std::string& path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Appends `line` in one write(); aborts if the write fails or is short (the
  // witness must not have a hole).
  void Append(absl::string_view line);

 private:
  AppendFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  const std::string path_;
  const int fd_;
};

// The lines of a file, without their newlines; an absent file has none.
// Unavailable if it cannot be read; DataLoss if its last line has no newline
// (a torn write: each line should have gone out whole).
absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path);

}  // namespace chime::crash

#endif  // CHIME_TESTS_CRASH_CRASH_LOG_H_
