#include "daemon/logger.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "src/api/json_writer.h"
#include "src/time/rfc3339.h"

namespace chime::daemon {
namespace {

// Text values are quoted when they would not read back as one word.
void AppendTextValue(const Logger::Value& value, std::string* out) {
  if (const int64_t* n = std::get_if<int64_t>(&value)) {
    absl::StrAppend(out, *n);
    return;
  }
  const std::string& s = std::get<std::string>(value);
  const bool plain =
      !s.empty() && s.find_first_of(" \t\n\"=") == std::string::npos;
  if (plain) {
    out->append(s);
  } else {
    out->append(nlohmann::json(s).dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

// The innermost Logger::Batch of this thread, if any.
thread_local Logger::Batch* current_batch = nullptr;

std::string Upper(absl::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return out;
}

}  // namespace

absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

Logger::Logger(std::FILE* out, LogFormat format, LogLevel min_level,
               Clock& clock)
    : out_(out), format_(format), min_level_(min_level), clock_(clock) {}

std::string Logger::Render(LogLevel level, absl::string_view msg,
                           std::initializer_list<Field> fields) const {
  // Milliseconds, always three digits: lines line up.
  const absl::Time now = clock_.Now();
  const absl::Time second = absl::FromUnixSeconds(absl::ToUnixSeconds(now));
  std::string ts;
  time::AppendUtc(second, &ts);  // "...:SSZ"
  ts.pop_back();
  const int64_t ms = absl::ToInt64Milliseconds(now - second);
  absl::StrAppend(&ts, ".", ms < 100 ? (ms < 10 ? "00" : "0") : "", ms, "Z");
  std::string line;
  if (format_ == LogFormat::kJson) {
    // As nlohmann would print the object, invalid UTF-8 replaced.
    api::JsonWriter j(&line);
    j.BeginObject()
        .Key("ts")
        .String(ts)
        .Key("level")
        .String(LogLevelName(level))
        .Key("msg")
        .String(msg);
    for (const auto& [key, value] : fields) {
      j.Key(key);
      if (const int64_t* n = std::get_if<int64_t>(&value)) {
        j.Int(*n);
      } else {
        j.String(std::get<std::string>(value));
      }
    }
    j.EndObject();
    line += "\n";
    return line;
  }
  line = absl::StrCat(ts, " ", Upper(LogLevelName(level)), " ", msg);
  for (const auto& [key, value] : fields) {
    absl::StrAppend(&line, " ", key, "=");
    AppendTextValue(value, &line);
  }
  line += "\n";
  return line;
}

void Logger::Log(LogLevel level, absl::string_view msg,
                 std::initializer_list<Field> fields) {
  if (level < min_level_.load()) return;
  const std::string line = Render(level, msg, fields);
  for (Batch* b = current_batch; b != nullptr; b = b->outer_) {
    if (&b->logger_ != this) continue;
    b->lines_ += line;
    return;
  }
  Write(line);
}

void Logger::Write(absl::string_view lines) {
  if (lines.empty()) return;
  absl::MutexLock lock(&mu_);
  std::fwrite(lines.data(), 1, lines.size(), out_);
  std::fflush(out_);
}

Logger::Batch::Batch(Logger& logger) : logger_(logger), outer_(current_batch) {
  current_batch = this;
}

Logger::Batch::~Batch() {
  current_batch = outer_;
  for (Batch* b = outer_; b != nullptr; b = b->outer_) {
    if (&b->logger_ != &logger_) continue;
    b->lines_ += lines_;
    return;
  }
  logger_.Write(lines_);
}

void Logger::LogRunEvent(const RunEvent& e) {
  const bool bad = e.to == "failed" || e.to == "lost" || e.to == "missed";
  const std::string msg =
      e.run_id == 0 ? absl::StrCat("fire ", e.to) : absl::StrCat("run ", e.to);
  if (e.run_id == 0) {
    Log(bad ? LogLevel::kWarn : LogLevel::kInfo, msg,
        {{"fire_id", e.fire_id}, {"fires", e.fires}, {"detail", e.detail}});
    return;
  }
  // The claim (claiming -> pending) is bookkeeping; the start and the end
  // of each attempt are what an operator reads.
  const LogLevel level = bad                    ? LogLevel::kWarn
                         : e.from == "claiming" ? LogLevel::kDebug
                                                : LogLevel::kInfo;
  Log(level, msg,
      {{"fire_id", e.fire_id},
       {"run_id", static_cast<int64_t>(e.run_id)},
       {"from", e.from},
       {"attempt", int64_t{e.attempt}},
       {"detail", e.detail}});
}

}  // namespace chime::daemon
