#include "src/exec/process_ledger.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

namespace chime::exec {
namespace {

// The whole file, or nullopt (errno set) when it cannot be read.
std::optional<std::string> ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      errno = error;
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, n);
  }
  close(fd);
  return text;
}

struct ProcStat {
  char state = '?';
  pid_t pgrp = 0;
  uint64_t start_time = 0;
};

// Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and
// may itself contain spaces and parentheses, so the fields are counted from
// the last ')'.
std::optional<ProcStat> ReadProcStat(pid_t pid) {
  const std::optional<std::string> text =
      ReadSmallFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!text.has_value()) return std::nullopt;
  const size_t close_paren = text->rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  const std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(*text).substr(close_paren + 1), ' ', absl::SkipEmpty());
  // fields[0] is field 3 (state), so field N is fields[N - 3].
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;
  ProcStat stat;
  stat.state = fields[0][0];
  if (!absl::SimpleAtoi(fields[5 - 3], &stat.pgrp) ||
      !absl::SimpleAtoi(fields[22 - 3], &stat.start_time)) {
    return std::nullopt;
  }
  return stat;
}

std::string EntryPath(const std::string& dir, pid_t pid) {
  return absl::StrCat(dir, "/", pid);
}

std::optional<LedgerEntry> ParseEntry(absl::string_view text) {
  LedgerEntry entry;
  int seen = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) return std::nullopt;
    const absl::string_view key = line.substr(0, space);
    const absl::string_view value = line.substr(space + 1);
    bool ok = true;
    if (key == "pid") {
      ok = absl::SimpleAtoi(value, &entry.pid);
    } else if (key == "pgid") {
      ok = absl::SimpleAtoi(value, &entry.pgid);
    } else if (key == "start_time") {
      ok = absl::SimpleAtoi(value, &entry.start_time);
    } else if (key == "attempt") {
      ok = absl::SimpleAtoi(value, &entry.attempt);
    } else if (key == "fire_id") {
      entry.fire_id = std::string(value);
    } else {
      continue;  // a field a later version added
    }
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (seen < 5 || entry.pid <= 0 || entry.pgid <= 0) return std::nullopt;
  return entry;
}

bool IsAllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// Removes files a writer left before renaming (`.<pid>.tmp`).
void RemoveTemporaryFiles(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = readdir(d)) {
    const absl::string_view name = e->d_name;
    if (name.size() > 5 && name.front() == '.' &&
        absl::EndsWith(name, ".tmp")) {
      unlink(absl::StrCat(dir, "/", name).c_str());
    }
  }
  closedir(d);
}

}  // namespace

absl::Status WriteLedgerEntry(const std::string& dir,
                              const LedgerEntry& entry) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("ledger directory \"", dir, "\""));
  }
  const std::string text =
      absl::StrCat("pid ", entry.pid, "\npgid ", entry.pgid, "\nstart_time ",
                   entry.start_time, "\nattempt ", entry.attempt, "\nfire_id ",
                   entry.fire_id, "\n");
  const std::string tmp = absl::StrCat(dir, "/.", entry.pid, ".tmp");
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("ledger entry \"", tmp, "\""));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      unlink(tmp.c_str());
      return absl::ErrnoToStatus(error,
                                 absl::StrCat("ledger entry \"", tmp, "\""));
    }
    done += n;
  }
  close(fd);
  const std::string path = EntryPath(dir, entry.pid);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(error,
                               absl::StrCat("ledger entry \"", path, "\""));
  }
  return absl::OkStatus();
}

absl::Status RemoveLedgerEntry(const std::string& dir, pid_t pid) {
  const std::string path = EntryPath(dir, pid);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("ledger entry \"", path, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LedgerEntry>> ReadLedger(const std::string& dir) {
  std::vector<LedgerEntry> entries;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return entries;
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("ledger directory \"", dir, "\""));
  }
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    if (IsAllDigits(e->d_name)) names.emplace_back(e->d_name);
  }
  closedir(d);
  for (const std::string& name : names) {
    const std::optional<std::string> text =
        ReadSmallFile(absl::StrCat(dir, "/", name));
    if (!text.has_value()) continue;  // removed meanwhile
    std::optional<LedgerEntry> entry = ParseEntry(*text);
    if (entry.has_value() && absl::StrCat(entry->pid) == name) {
      entries.push_back(*std::move(entry));
    }
  }
  std::sort(
      entries.begin(), entries.end(),
      [](const LedgerEntry& a, const LedgerEntry& b) { return a.pid < b.pid; });
  return entries;
}

absl::StatusOr<int> KillOrphans(const std::string& ledger_dir,
                                absl::Duration wait_limit) {
  absl::StatusOr<std::vector<LedgerEntry>> entries = ReadLedger(ledger_dir);
  if (!entries.ok()) return entries.status();
  RemoveTemporaryFiles(ledger_dir);
  int killed = 0;
  for (const LedgerEntry& entry : *entries) {
    // A pid names the recorded process only with the recorded start time. If
    // another process has the pid now, the recorded leader is gone *and*
    // every member of its group is gone too: Linux does not hand out a number
    // still in use as a process group id. So the group ended, and whatever
    // has that pgid now belongs to someone else.
    const std::optional<ProcStat> leader = ReadProcStat(entry.pid);
    const bool reused =
        leader.has_value() && leader->start_time != entry.start_time;
    if (!reused && !LiveGroupMembers(entry.pgid).empty()) {
      const absl::Status status = KillProcessGroup(entry.pgid, wait_limit);
      if (!status.ok()) return status;
      ++killed;
    }
    const absl::Status removed = RemoveLedgerEntry(ledger_dir, entry.pid);
    if (!removed.ok()) return removed;
  }
  return killed;
}

absl::StatusOr<uint64_t> ProcessStartTime(pid_t pid) {
  const std::optional<ProcStat> stat = ReadProcStat(pid);
  if (!stat.has_value()) {
    return absl::NotFoundError(absl::StrCat("no process ", pid));
  }
  return stat->start_time;
}

std::vector<pid_t> LiveGroupMembers(pid_t pgid) {
  std::vector<pid_t> members;
  DIR* d = opendir("/proc");
  if (d == nullptr) return members;
  while (const dirent* e = readdir(d)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    const std::optional<ProcStat> stat = ReadProcStat(pid);
    if (!stat.has_value() || stat->pgrp != pgid) continue;
    if (stat->state == 'Z' || stat->state == 'X') continue;  // nothing runs
    members.push_back(pid);
  }
  closedir(d);
  std::sort(members.begin(), members.end());
  return members;
}

// SIGKILL is sent again on every round: a member that was forking when the
// first one arrived may have left a child the first signal missed.
absl::Status KillProcessGroup(pid_t pgid, absl::Duration wait_limit) {
  const absl::Time deadline = absl::Now() + wait_limit;
  while (true) {
    if (kill(-pgid, SIGKILL) != 0 && errno != ESRCH) {
      return absl::ErrnoToStatus(errno,
                                 absl::StrCat("kill process group ", pgid));
    }
    const std::vector<pid_t> members = LiveGroupMembers(pgid);
    if (members.empty()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("process group ", pgid, " still has live members (",
                       absl::StrJoin(members, ", "), ") ",
                       absl::FormatDuration(wait_limit), " after SIGKILL"));
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
}

}  // namespace chime::exec
