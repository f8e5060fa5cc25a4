// Batch mode of `chime cron next --json` (the format is documented in
// cron_command.h).
//
// Throughput matters here (100,000 cases in well under a second), so each
// line takes the cheapest path that gives the same answer:
//  - A line that is a flat object of plain values (ASCII strings without
//    escapes, integers) is read by ScanFlatCase, in one pass without
//    allocating. Anything else (escapes, UTF-8, nested values, true, false,
//    null, fractions, bad JSON) goes to nlohmann::json, which decides validity
//    and reports errors. Both paths fill the same CaseFields and one function
//    answers them, so the answer does not depend on the path (tested).
//  - Parsed schedules are cached by (zone, dialect, expression). Everything
//    else that shapes a Schedule (day matching, DST policy, hash key) is fixed
//    for the whole batch and a Schedule is immutable, so a hit returns exactly
//    what parsing again would. Failed parses are not cached.
//  - Times are written by time::AppendUtc and read by time::ParseRfc3339, not
//    by absl's general formatter and parser.
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "chime/cron.h"
#include "cli/cron_command.h"
#include "nlohmann/json.hpp"
#include "src/time/rfc3339.h"

namespace chime::cli {
namespace {

// One field of a case as read from the line.
struct CaseValue {
  enum class Kind { kAbsent, kString, kInteger, kOther };
  Kind kind = Kind::kAbsent;
  absl::string_view text;  // kString: the string's contents
  int64_t integer = 0;     // kInteger
};

struct CaseFields {
  bool has_id = false;
  absl::string_view id_json;  // the id as JSON text, ready to echo
  CaseValue expr, tz, start, n, dialect;

  CaseValue* Find(absl::string_view key) {
    if (key == "expr") return &expr;
    if (key == "tz") return &tz;
    if (key == "start") return &start;
    if (key == "n") return &n;
    if (key == "dialect") return &dialect;
    return nullptr;
  }
};

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// The fast path. Returns true and fills *f if `line` is one JSON object whose
// members are all plain strings (printable ASCII, no backslash) or integers
// without fraction or exponent (and not "-0"). Returns false for anything else,
// valid JSON or not; the caller then asks nlohmann. As in nlohmann, a repeated
// key keeps its last value.
bool ScanFlatCase(absl::string_view line, CaseFields* f) {
  size_t i = 0;
  const size_t size = line.size();
  auto skip_space = [&] {
    while (i < size && IsJsonSpace(line[i])) ++i;
  };
  // A plain string starting at the quote at i; leaves i after the closing
  // quote.
  auto plain_string = [&](absl::string_view* out) {
    const size_t start = ++i;
    while (i < size) {
      const unsigned char c = static_cast<unsigned char>(line[i]);
      if (c == '"') {
        *out = line.substr(start, i - start);
        ++i;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++i;
    }
    return false;
  };
  skip_space();
  if (i >= size || line[i] != '{') return false;
  ++i;
  skip_space();
  if (i < size && line[i] == '}') {
    ++i;
  } else {
    while (true) {
      absl::string_view key;
      if (i >= size || line[i] != '"' || !plain_string(&key)) return false;
      skip_space();
      if (i >= size || line[i] != ':') return false;
      ++i;
      skip_space();
      if (i >= size) return false;
      const size_t value_start = i;
      CaseValue value;
      if (line[i] == '"') {
        value.kind = CaseValue::Kind::kString;
        if (!plain_string(&value.text)) return false;
      } else if (line[i] == '-' ||
                 absl::ascii_isdigit(static_cast<unsigned char>(line[i]))) {
        const bool negative = line[i] == '-';
        if (negative) ++i;
        const size_t digits = i;
        int64_t v = 0;
        while (i < size &&
               absl::ascii_isdigit(static_cast<unsigned char>(line[i]))) {
          v = v * 10 + (line[i] - '0');
          ++i;
        }
        const size_t count = i - digits;
        if (count == 0 || count > 18 || (count > 1 && line[digits] == '0')) {
          return false;
        }
        // nlohmann writes "-0" back as "0": let it.
        if (negative && v == 0) return false;
        if (i < size && (line[i] == '.' || line[i] == 'e' || line[i] == 'E')) {
          return false;
        }
        value.kind = CaseValue::Kind::kInteger;
        value.integer = negative ? -v : v;
      } else {
        // Objects, arrays, true, false, null: rare, leave them to nlohmann.
        return false;
      }
      if (key == "id") {
        f->has_id = true;
        f->id_json = line.substr(value_start, i - value_start);
      } else if (CaseValue* slot = f->Find(key)) {
        *slot = value;
      }
      skip_space();
      if (i < size && line[i] == ',') {
        ++i;
        skip_space();
        continue;
      }
      if (i < size && line[i] == '}') {
        ++i;
        break;
      }
      return false;
    }
  }
  skip_space();
  return i == size;
}

class BatchAnswerer {
 public:
  BatchAnswerer(const ScheduleFlags& defaults, absl::Time default_start,
                int default_n)
      : defaults_(defaults),
        default_start_(default_start),
        default_n_(default_n) {}

  // Answers one non-blank line, appending one output line to *out.
  void Answer(const std::string& line, int64_t line_number, std::string* out) {
    out_ = out;
    CaseFields fields;
    if (!ScanFlatCase(line, &fields) &&
        !ReadWithNlohmann(line, line_number, &fields)) {
      return;
    }
    Answer(fields);
  }

 private:
  // The slow path: fills *f from nlohmann's DOM (kept in doc_ and id_json_), or
  // writes the error line and returns false.
  bool ReadWithNlohmann(const std::string& line, int64_t line_number,
                        CaseFields* f) {
    doc_ = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (doc_.is_discarded()) {
      WriteError(nullptr,
                 absl::StrCat("line ", line_number, ": ", JsonError(line)));
      return false;
    }
    if (!doc_.is_object()) {
      WriteError(nullptr, absl::StrCat("line ", line_number,
                                       ": expected a JSON object, found ",
                                       doc_.type_name()));
      return false;
    }
    for (const auto& [key, value] : doc_.items()) {
      if (key == "id") {
        f->has_id = true;
        id_json_ = value.dump(-1, ' ', false,
                              nlohmann::json::error_handler_t::replace);
        f->id_json = id_json_;
        continue;
      }
      CaseValue* slot = f->Find(key);
      if (slot == nullptr) continue;
      if (value.is_string()) {
        slot->kind = CaseValue::Kind::kString;
        slot->text = value.get_ref<const std::string&>();
      } else if (value.is_number_integer() &&
                 (value.is_number_unsigned()
                      ? value.get<uint64_t>() <= INT64_MAX
                      : true)) {
        slot->kind = CaseValue::Kind::kInteger;
        slot->integer = value.get<int64_t>();
      } else {
        slot->kind = CaseValue::Kind::kOther;
      }
    }
    return true;
  }

  void Answer(const CaseFields& f) {
    const absl::string_view* id = f.has_id ? &f.id_json : nullptr;
    if (f.expr.kind == CaseValue::Kind::kAbsent) {
      return WriteError(id, "missing \"expr\"");
    }
    if (f.expr.kind != CaseValue::Kind::kString) {
      return WriteError(id, "\"expr\" must be a string");
    }
    absl::string_view zone = defaults_.tz;
    if (f.tz.kind != CaseValue::Kind::kAbsent) {
      if (f.tz.kind != CaseValue::Kind::kString) {
        return WriteError(id,
                          "\"tz\" must be a string such as \"Europe/Berlin\"");
      }
      zone = f.tz.text;
    }
    cron::Dialect dialect = defaults_.dialect;
    if (f.dialect.kind != CaseValue::Kind::kAbsent) {
      const std::optional<cron::Dialect> d =
          f.dialect.kind == CaseValue::Kind::kString
              ? DialectFromName(f.dialect.text)
              : std::nullopt;
      if (!d.has_value()) {
        return WriteError(id,
                          "\"dialect\" must be \"vixie\", \"seconds\", "
                          "\"quartz\" or \"auto\"");
      }
      dialect = *d;
    }
    absl::Time start = default_start_;
    if (f.start.kind != CaseValue::Kind::kAbsent) {
      if (f.start.kind != CaseValue::Kind::kString) {
        return WriteError(id, "\"start\" must be an RFC 3339 string");
      }
      auto t = time::ParseRfc3339(f.start.text);
      if (!t.ok()) {
        return WriteError(id, absl::StrCat("start: ", t.status().message()));
      }
      start = *t;
    }
    int n = default_n_;
    if (f.n.kind != CaseValue::Kind::kAbsent) {
      if (f.n.kind != CaseValue::Kind::kInteger || f.n.integer < 0 ||
          f.n.integer > kMaxFireTimes) {
        return WriteError(
            id,
            absl::StrCat("\"n\" must be an integer from 0 to ", kMaxFireTimes));
      }
      n = static_cast<int>(f.n.integer);
    }

    const cron::Schedule* schedule = nullptr;
    if (absl::Status s = Lookup(f.expr.text, zone, dialect, &schedule);
        !s.ok()) {
      return WriteError(id, s.message());
    }
    Begin(id);
    out_->append("\"next\":[");
    absl::Time t = start;
    for (int i = 0; i < n; ++i) {
      t = schedule->Next(t);
      if (t == absl::InfiniteFuture()) break;
      if (i > 0) out_->push_back(',');
      out_->push_back('"');
      time::AppendUtc(t, out_);
      out_->push_back('"');
    }
    out_->append("]}\n");
  }

  // The parsed schedule, from the cache or freshly parsed.
  absl::Status Lookup(absl::string_view expr, absl::string_view zone,
                      cron::Dialect dialect, const cron::Schedule** schedule) {
    constexpr size_t kMaxCached = 1 << 14;
    key_.clear();
    absl::StrAppend(&key_, static_cast<int>(dialect), ":", zone.size(), ":",
                    zone, expr);
    if (auto it = cache_.find(key_); it != cache_.end()) {
      *schedule = &it->second;
      return absl::OkStatus();
    }
    cron::ParseOptions options = defaults_.ToParseOptions();
    options.zone = zone;
    options.dialect = dialect;
    auto parsed = cron::Schedule::Parse(expr, options);
    if (!parsed.ok()) return parsed.status();
    if (cache_.size() >= kMaxCached) cache_.clear();  // crude, bounds memory
    *schedule = &cache_.emplace(key_, *std::move(parsed)).first->second;
    return absl::OkStatus();
  }

  // Writes `{` and the id, if any.
  void Begin(const absl::string_view* id) {
    out_->push_back('{');
    if (id != nullptr) {
      out_->append("\"id\":");
      out_->append(id->data(), id->size());
      out_->push_back(',');
    }
  }

  void WriteError(const absl::string_view* id, absl::string_view message) {
    Begin(id);
    out_->append("\"error\":");
    // Engine messages may quote one byte of a multi-byte character: replace,
    // never throw.
    out_->append(
        nlohmann::json(std::string(message))
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    out_->append("}\n");
  }

  // The parser's message, without its "[json.exception.parse_error.101] " tag.
  // Only bad lines pay for the exception.
  static std::string JsonError(const std::string& line) {
    try {
      const nlohmann::json parsed = nlohmann::json::parse(line);
      (void)parsed;
    } catch (const nlohmann::json::exception& e) {
      absl::string_view what = e.what();
      if (const size_t tag_end = what.find("] ");
          absl::StartsWith(what, "[json.exception") &&
          tag_end != absl::string_view::npos) {
        what.remove_prefix(tag_end + 2);
      }
      return absl::StrCat("invalid JSON: ", what);
    }
    return "invalid JSON";
  }

  const ScheduleFlags& defaults_;
  const absl::Time default_start_;
  const int default_n_;
  std::string* out_ = nullptr;
  nlohmann::json doc_;   // the slow path's current line
  std::string id_json_;  // the slow path's id, as JSON
  std::string key_;      // scratch for cache keys
  absl::flat_hash_map<std::string, cron::Schedule> cache_;
};

bool IsBlank(absl::string_view line) {
  for (char c : line) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

int RunCronBatch(const ScheduleFlags& defaults, absl::Time default_start,
                 int default_n, std::istream& in, std::ostream& out) {
  constexpr size_t kFlushBytes = 1 << 16;
  BatchAnswerer answerer(defaults, default_start, default_n);
  std::string line;
  std::string buffer;
  buffer.reserve(2 * kFlushBytes);
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (IsBlank(line)) continue;
    answerer.Answer(line, line_number, &buffer);
    if (buffer.size() >= kFlushBytes) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  out.flush();
  return out.good() ? kExitOk : kExitFailure;
}

}  // namespace chime::cli
