#include "tests/crash/crash_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace chime::crash {
namespace {

// Fields are separated by single spaces; only an ack's last field (the detail)
// may contain spaces, and no field may contain a newline.
std::string OneLine(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"\n", " "}, {"\r", " "}});
}

}  // namespace

std::string FormatWitness(const AttemptContext& ctx) {
  return absl::StrCat(ctx.fire_id(), " ", ctx.run_id, " ", ctx.attempt, " ",
                      ctx.fencing_token, "\n");
}

std::optional<WitnessLine> ParseWitness(absl::string_view line) {
  std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
  WitnessLine w;
  if (f.size() != 4 || f[0].empty() || !absl::SimpleAtoi(f[1], &w.run_id) ||
      !absl::SimpleAtoi(f[2], &w.attempt) ||
      !absl::SimpleAtoi(f[3], &w.token)) {
    return std::nullopt;
  }
  w.fire_id = std::string(f[0]);
  return w;
}

std::string FormatAck(const RunEvent& e) {
  return absl::StrCat(e.run_id, " ", e.from.empty() ? "-" : e.from, " ", e.to,
                      " ", e.attempt, " ", e.fire_id, " ", OneLine(e.detail),
                      "\n");
}

std::optional<RunEvent> ParseAck(absl::string_view line) {
  std::vector<absl::string_view> f =
      absl::StrSplit(line, absl::MaxSplits(' ', 5));
  RunEvent e;
  if (f.size() != 6 || !absl::SimpleAtoi(f[0], &e.run_id) || f[1].empty() ||
      f[2].empty() || !absl::SimpleAtoi(f[3], &e.attempt) || f[4].empty()) {
    return std::nullopt;
  }
  e.from = f[1] == "-" ? "" : std::string(f[1]);
  e.to = std::string(f[2]);
  e.fire_id = std::string(f[4]);
  e.detail = std::string(f[5]);
  return e;
}

absl::StatusOr<std::unique_ptr<AppendFile>> AppendFile::Open(
    const std::string& path) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot open ", path, " for appending: ", strerror(errno)));
  }
  return std::unique_ptr<AppendFile>(new AppendFile(path, fd));
}

AppendFile::~AppendFile() { close(fd_); }

void AppendFile::Append(absl::string_view line) {
  ssize_t n;
  do {
    n = write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    std::fprintf(stderr, "crash: appending to %s: %s\n", path_.c_str(),
                 n < 0 ? strerror(errno) : "short write");
    std::abort();
  }
}

absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  if (access(path.c_str(), F_OK) != 0) return lines;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot open ", path));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) return absl::UnavailableError(absl::StrCat("reading ", path));
  if (text.empty()) return lines;
  if (text.back() != '\n') {
    return absl::DataLossError(
        absl::StrCat(path, ": the last line has no newline (a torn write: \"",
                     text.substr(text.rfind('\n') + 1), "\")"));
  }
  text.pop_back();
  lines = absl::StrSplit(text, '\n');
  return lines;
}

}  // namespace chime::crash
