#include "src/cron/parser.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/base/status_macros.h"

namespace chime::cron::internal {
namespace {

constexpr absl::string_view kMonthNames[] = {"JAN", "FEB", "MAR", "APR",
                                             "MAY", "JUN", "JUL", "AUG",
                                             "SEP", "OCT", "NOV", "DEC"};
constexpr absl::string_view kDayNames[] = {"SUN", "MON", "TUE", "WED",
                                           "THU", "FRI", "SAT"};

bool IsCyclic(FieldId id) {
  return id != FieldId::kDayOfMonth && id != FieldId::kYear;
}

// FNV-1a over the key, then a SplitMix64 finalizer with the field mixed in, so
// that the minute and the hour of one job get unrelated values. Stable across
// platforms and releases: changing it would move every hashed job.
uint64_t HashFor(absl::string_view key, FieldId id) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h += 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(id) + 1);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

// Parses the items of one field. Positions are byte offsets into the field's
// text; errors report the column in the whole expression.
class FieldParser {
 public:
  FieldParser(Field* field, int field_number, Dialect dialect,
              absl::string_view hash_key)
      : field_(field),
        text_(field->text),
        field_number_(field_number),
        dialect_(dialect),
        hash_key_(hash_key) {}

  absl::Status Parse() {
    while (true) {
      const size_t item_start = pos_;
      if (AtEnd() || Peek() == ',') {
        return Error(item_start, absl::StrCat("empty list item", Expected()));
      }
      RETURN_IF_ERROR(ParseItem());
      if (AtEnd()) return absl::OkStatus();
      if (Peek() != ',') {
        return Error(pos_, absl::StrCat("unexpected \"", text_.substr(pos_, 1),
                                        "\"", Expected()));
      }
      ++pos_;
    }
  }

 private:
  FieldId id() const { return field_->id; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  char PeekUpper() const {
    return absl::ascii_toupper(static_cast<unsigned char>(Peek()));
  }
  bool quartz() const { return dialect_ == Dialect::kQuartz; }

  absl::Status Error(size_t at, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(FieldName(id()), ": ", what, " (field ", field_number_,
                     ", column ", field_->column + static_cast<int>(at), ")"));
  }

  // The written domain, for messages.
  std::string Domain() const {
    if (id() == FieldId::kDayOfWeek)
      return quartz() ? "1-7 or SUN-SAT" : "0-7 or SUN-SAT";
    if (id() == FieldId::kMonth) return "1-12 or JAN-DEC";
    return absl::StrCat(FieldMin(id()), "-", FieldMax(id()));
  }

  std::string Expected() const {
    std::string forms =
        "a value, a range a-b, a step */n or a-b/n, a list a,b, * or H";
    if (id() == FieldId::kDayOfMonth)
      absl::StrAppend(&forms, ", ?, L, L-n, LW or nW");
    if (id() == FieldId::kDayOfWeek) absl::StrAppend(&forms, ", ?, dL or d#k");
    return absl::StrCat(" (expected ", forms, "; values ", Domain(), ")");
  }

  // Reads digits; returns false (without consuming) if there are none.
  bool ReadNumber(int* out) {
    size_t p = pos_;
    int64_t v = 0;
    while (p < text_.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(text_[p]))) {
      v = v * 10 + (text_[p] - '0');
      if (v > 1000000)
        v = 1000000;  // clamp: reported as out of range, never overflows
      ++p;
    }
    if (p == pos_) return false;
    pos_ = p;
    *out = static_cast<int>(v);
    return true;
  }

  // A value in the field's written domain, converted to the normalized domain
  // (Quartz weekdays 1-7 become 0-6). Names are accepted for months and
  // weekdays.
  absl::Status ReadValue(int* out) {
    const size_t start = pos_;
    int v = 0;
    if (ReadNumber(&v)) {
      const int lo =
          (id() == FieldId::kDayOfWeek && quartz()) ? 1 : FieldMin(id());
      const int hi =
          (id() == FieldId::kDayOfWeek && quartz()) ? 7 : FieldMax(id());
      if (v < lo || v > hi) {
        std::string extra;
        if (id() == FieldId::kDayOfWeek && quartz())
          extra = " (Quartz dialect: 1 = Sunday)";
        return Error(start, absl::StrCat(text_.substr(start, pos_ - start),
                                         " is outside ", lo, "-", hi, extra));
      }
      *out = (id() == FieldId::kDayOfWeek && quartz()) ? v - 1 : v;
      return absl::OkStatus();
    }
    size_t p = pos_;
    while (p < text_.size() &&
           absl::ascii_isalpha(static_cast<unsigned char>(text_[p])))
      ++p;
    // A weekday name may be followed by `L` (`FRIL`); names are three letters.
    if (p - pos_ > 3 && id() == FieldId::kDayOfWeek) p = pos_ + 3;
    const std::string word =
        absl::AsciiStrToUpper(text_.substr(pos_, p - pos_));
    if (word.empty()) {
      if (AtEnd())
        return Error(start, absl::StrCat("missing value", Expected()));
      return Error(start, absl::StrCat("unexpected \"", text_.substr(start, 1),
                                       "\"", Expected()));
    }
    if (id() == FieldId::kMonth || id() == FieldId::kDayOfWeek) {
      const bool month = id() == FieldId::kMonth;
      const int count = month ? 12 : 7;
      for (int i = 0; i < count; ++i) {
        if (word == (month ? kMonthNames[i] : kDayNames[i])) {
          pos_ = p;
          *out = month ? i + 1 : i;
          return absl::OkStatus();
        }
      }
      return Error(
          start, absl::StrCat("\"", text_.substr(start, p - start),
                              "\" is not a ", month ? "month name" : "day name",
                              " (expected ", Domain(), ")"));
    }
    return Error(start, absl::StrCat("\"", text_.substr(start, p - start),
                                     "\" is not a number", Expected()));
  }

  // Optional `/step`; validates it against the field's range.
  absl::Status ReadStep(Item* item) {
    if (Peek() != '/') return absl::OkStatus();
    ++pos_;
    const size_t start = pos_;
    int step = 0;
    const int size = FieldMax(id()) - FieldMin(id()) + 1;
    if (!ReadNumber(&step)) {
      return Error(
          start,
          absl::StrCat("missing step after \"/\" (expected a number from 1 to ",
                       size, ")"));
    }
    if (step == 0)
      return Error(start, "step 0 is not allowed (expected 1 or more)");
    if (step > size) {
      std::string hint;
      if (id() == FieldId::kMinute || id() == FieldId::kSecond ||
          id() == FieldId::kHour) {
        hint =
            "; steps never carry into the next field, for a fixed interval use "
            "@every";
      }
      return Error(
          start,
          absl::StrCat("step ", step, " is larger than the field's range ",
                       FieldMin(id()), "-", FieldMax(id()), hint));
    }
    item->step = step;
    item->single = false;
    return absl::OkStatus();
  }

  absl::Status ParseItem() {
    const size_t start = pos_;
    Item item;
    const char c = PeekUpper();
    if (c == '*' || c == '?') {
      if (c == '?' && id() != FieldId::kDayOfMonth &&
          id() != FieldId::kDayOfWeek) {
        return Error(start,
                     "\"?\" is only allowed in day-of-month and day-of-week");
      }
      ++pos_;
      item.star = true;
      item.lo = FieldMin(id());
      item.hi = FieldMax(id());
      if (c == '*') {
        RETURN_IF_ERROR(ReadStep(&item));
      } else if (Peek() == '/') {
        return Error(pos_, "\"?\" cannot take a step");
      }
      return Add(item);
    }
    if (c == 'H') return ParseHash();
    if (c == 'L' && id() == FieldId::kDayOfMonth) return ParseLastDay();
    if (c == 'L' && id() == FieldId::kDayOfWeek && !LetterFollows()) {
      ++pos_;  // `L` alone: the last day of the week, Saturday.
      item.lo = item.hi = 6;
      item.single = true;
      return Add(item);
    }
    int lo = 0;
    RETURN_IF_ERROR(ReadValue(&lo));
    item.lo = item.hi = lo;
    item.single = true;
    const char next = PeekUpper();
    if (id() == FieldId::kDayOfMonth && next == 'W') {
      ++pos_;
      item.kind = Item::Kind::kNearestWeekday;
      return Add(item);
    }
    if (id() == FieldId::kDayOfWeek && next == 'L') {
      ++pos_;
      item.kind = Item::Kind::kLastOfWeekday;
      item.lo = item.hi = lo % 7;
      return Add(item);
    }
    if (id() == FieldId::kDayOfWeek && next == '#') {
      ++pos_;
      const size_t kpos = pos_;
      int k = 0;
      if (!ReadNumber(&k))
        return Error(kpos, "missing k after \"#\" (expected 1-5)");
      if (k < 1 || k > 5) {
        return Error(
            kpos, absl::StrCat("#", k,
                               " is outside 1-5 (a month has at most five of "
                               "each weekday)"));
      }
      item.kind = Item::Kind::kNthOfWeekday;
      item.lo = item.hi = lo % 7;
      item.n = k;
      return Add(item);
    }
    if (next == '-') {
      ++pos_;
      int hi = 0;
      RETURN_IF_ERROR(ReadValue(&hi));
      item.hi = hi;
      item.single = false;
      if (hi < lo && !IsCyclic(id())) {
        return Error(
            start,
            absl::StrCat("range ", text_.substr(start, pos_ - start),
                         " goes backwards (", FieldName(id()),
                         " ranges cannot wrap; write it as two ranges)"));
      }
      if (id() == FieldId::kDayOfWeek && hi < lo) {
        item.lo %=
            7;  // a wrapping weekday range counts Sunday once: SAT-SUN is 6,0
        item.hi %= 7;
      }
      RETURN_IF_ERROR(ReadStep(&item));
      return Add(item);
    }
    if (next == '/') {  // `a/s` is `a-max/s`
      item.hi = FieldMax(id());
      if (id() == FieldId::kDayOfWeek) item.hi = 6;
      RETURN_IF_ERROR(ReadStep(&item));
      return Add(item);
    }
    return Add(item);
  }

  bool LetterFollows() const {
    return pos_ + 1 < text_.size() &&
           absl::ascii_isalpha(static_cast<unsigned char>(text_[pos_ + 1]));
  }

  // `L`, `L-n`, `LW` in day-of-month.
  absl::Status ParseLastDay() {
    const size_t start = pos_;
    ++pos_;
    Item item;
    if (PeekUpper() == 'W') {
      ++pos_;
      item.kind = Item::Kind::kLastWeekday;
      return Add(item);
    }
    item.kind = Item::Kind::kLastDay;
    if (Peek() == '-') {
      ++pos_;
      const size_t npos = pos_;
      int n = 0;
      if (!ReadNumber(&n))
        return Error(npos, "missing n after \"L-\" (expected 0-30)");
      if (n > 30)
        return Error(npos, absl::StrCat("L-", n, " is outside L-0 to L-30"));
      item.n = n;
    }
    if (Peek() == '/') return Error(start, "\"L\" cannot take a step");
    return Add(item);
  }

  // `H`, `H/s`, `H(a-b)`, `H(a-b)/s`: a value (or a phase) chosen from the hash
  // key.
  absl::Status ParseHash() {
    const size_t start = pos_;
    if (id() == FieldId::kYear) return Error(start, "H is not allowed in year");
    ++pos_;
    int lo = FieldMin(id()), hi = FieldMax(id());
    if (id() == FieldId::kDayOfMonth) hi = 28;  // every month has days 1-28
    if (id() == FieldId::kDayOfWeek) hi = 6;
    if (Peek() == '(') {
      ++pos_;
      RETURN_IF_ERROR(ReadValue(&lo));
      if (Peek() != '-') return Error(pos_, "expected \"-\" in H(a-b)");
      ++pos_;
      RETURN_IF_ERROR(ReadValue(&hi));
      if (Peek() != ')') return Error(pos_, "expected \")\" to close H(a-b)");
      ++pos_;
      if (hi < lo) return Error(start, "H(a-b) needs a <= b");
    }
    Item item;
    item.hashed = true;
    const uint64_t h = HashFor(hash_key_, id());
    if (Peek() == '/') {
      RETURN_IF_ERROR(ReadStep(&item));
      item.lo = lo + static_cast<int>(h % static_cast<uint64_t>(item.step));
      item.hi = hi;
      if (item.lo > hi) item.lo = lo;
    } else {
      item.lo = item.hi =
          lo + static_cast<int>(h % static_cast<uint64_t>(hi - lo + 1));
      item.single = true;
    }
    return Add(item);
  }

  absl::Status Add(const Item& item) {
    field_->items.push_back(item);
    return absl::OkStatus();
  }

  Field* field_;
  absl::string_view text_;
  int field_number_;
  Dialect dialect_;
  absl::string_view hash_key_;
  size_t pos_ = 0;
};

struct Token {
  absl::string_view text;
  int column;  // 1-based
};

// The whitespace-separated tokens of an expression, all counted and the
// first kMax kept: a zone prefix and 7 fields, and one more for a message
// about the text after a macro.
struct Tokens {
  static constexpr size_t kMax = 9;
  std::array<Token, kMax> items;
  size_t size = 0;
  bool empty() const { return size == 0; }
  // REQUIRES: i < min(size, kMax).
  const Token& operator[](size_t i) const { return items[i]; }
};

void Tokenize(absl::string_view expr, Tokens* tokens) {
  size_t i = 0;
  while (i < expr.size()) {
    while (i < expr.size() &&
           absl::ascii_isspace(static_cast<unsigned char>(expr[i])))
      ++i;
    const size_t start = i;
    while (i < expr.size() &&
           !absl::ascii_isspace(static_cast<unsigned char>(expr[i])))
      ++i;
    if (i == start) continue;
    if (tokens->size < Tokens::kMax) {
      tokens->items[tokens->size] = {expr.substr(start, i - start),
                                     static_cast<int>(start) + 1};
    }
    ++tokens->size;
  }
}

// Fields implied when they are not written: second 0, year *.
void SetImplied(Field* f, FieldId id) {
  f->id = id;
  Item item;
  if (id == FieldId::kSecond) {
    item.single = true;
  } else {
    item.star = true;
    item.lo = FieldMin(id);
    item.hi = FieldMax(id);
  }
  f->items = {item};
}

struct Macro {
  absl::string_view name;
  absl::string_view fields;
};
constexpr Macro kMacros[] = {
    {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"},
    {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

absl::Status MacroError(const Token& t, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, " (column ", t.column,
      "; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight, "
      "@hourly or @every <duration>)"));
}

}  // namespace

absl::string_view FieldName(FieldId id) {
  static constexpr absl::string_view kNames[] = {
      "second", "minute",      "hour", "day-of-month",
      "month",  "day-of-week", "year"};
  return kNames[static_cast<int>(id)];
}

int FieldMin(FieldId id) {
  static constexpr int kMin[] = {0, 0, 0, 1, 1, 0, kMinYear};
  return kMin[static_cast<int>(id)];
}

int FieldMax(FieldId id) {
  static constexpr int kMax[] = {59, 59, 23, 31, 12, 7, kMaxYear};
  return kMax[static_cast<int>(id)];
}

absl::StatusOr<int64_t> ParseDurationMs(absl::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("empty duration");
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    int64_t v = 0;
    while (i < text.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) {
      v = v * 10 + (text[i] - '0');
      if (v > 1'000'000'000'000) {
        return absl::InvalidArgumentError(
            absl::StrCat("duration \"", text, "\" is too long"));
      }
      ++i;
    }
    if (i == start) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected a number at offset ", start, " of duration \"",
                       text, "\""));
    }
    int64_t unit = 0;
    if (absl::StartsWith(text.substr(i), "ms")) {
      unit = 1;
      i += 2;
    } else if (i < text.size()) {
      switch (text[i]) {
        case 'd':
          unit = 86'400'000;
          break;
        case 'h':
          unit = 3'600'000;
          break;
        case 'm':
          unit = 60'000;
          break;
        case 's':
          unit = 1'000;
          break;
        default:
          break;
      }
      if (unit != 0) ++i;
    }
    if (unit == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("duration \"", text, "\" needs a unit after ",
                       text.substr(start, i - start),
                       " (expected d, h, m, s or ms, e.g. 90s or 1h30m)"));
    }
    // Every @every period fits in the supported years with room to spare; the
    // bound also keeps the arithmetic far from overflow.
    constexpr int64_t kMaxMs = 1'000'000'000'000'000;
    if (v > (kMaxMs - total) / unit) {
      return absl::InvalidArgumentError(
          absl::StrCat("duration \"", text, "\" is too long"));
    }
    total += v * unit;
    if (total > kMaxMs) {
      return absl::InvalidArgumentError(
          absl::StrCat("duration \"", text, "\" is too long"));
    }
  }
  if (total <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration \"", text, "\" must be positive"));
  }
  return total;
}

absl::StatusOr<ParsedExpression> ParseExpression(absl::string_view expr,
                                                 const ParseOptions& options) {
  ParsedExpression out;
  RETURN_IF_ERROR(ParseExpressionInto(expr, options, &out));
  return out;
}

absl::Status ParseExpressionInto(absl::string_view expr,
                                 const ParseOptions& options,
                                 ParsedExpression* out_ptr) {
  ParsedExpression& out = *out_ptr;
  out.zone = options.zone;
  Tokens tokens;
  Tokenize(expr, &tokens);
  size_t first = 0;
  if (!tokens.empty()) {
    const absl::string_view t = tokens[0].text;
    for (absl::string_view prefix : {"CRON_TZ=", "TZ="}) {
      if (absl::StartsWithIgnoreCase(t, prefix)) {
        out.zone = t.substr(prefix.size());
        if (out.zone.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(prefix, " needs a zone name, e.g. ", prefix,
                           "Europe/Berlin (column ", tokens[0].column, ")"));
        }
        first = 1;
        break;
      }
    }
  }
  const size_t count = tokens.size - first;
  if (count == 0) {
    return absl::InvalidArgumentError(
        "empty schedule (expected 5, 6 or 7 fields, or a macro such as "
        "@daily)");
  }
  const Token& head = tokens[first];
  if (head.text[0] == '@') {
    out.macro = head.text;
    if (absl::EqualsIgnoreCase(head.text, "@every")) {
      if (count != 2)
        return MacroError(head, "@every takes one duration, e.g. @every 90s");
      auto ms = ParseDurationMs(tokens[first + 1].text);
      if (!ms.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("@every: ", ms.status().message(), " (column ",
                         tokens[first + 1].column, ")"));
      }
      out.every_ms = *ms;
      out.dialect = Dialect::kVixie;
      return absl::OkStatus();
    }
    for (const Macro& m : kMacros) {
      if (absl::EqualsIgnoreCase(head.text, m.name)) {
        if (count != 1) {
          return MacroError(tokens[first + 1],
                            absl::StrCat("unexpected text after ", head.text));
        }
        // The macro's fields are parsed like a 5-field expression; columns
        // point at the macro.
        ParseOptions vixie = options;
        vixie.dialect = Dialect::kVixie;
        const absl::string_view zone = out.zone;
        RETURN_IF_ERROR(ParseExpressionInto(m.fields, vixie, &out));
        for (Field& f : out.fields) {
          f.column = head.column;
          if (!f.text.empty())
            f.text = f.text == "*" ? absl::string_view("*") : head.text;
        }
        out.zone = zone;
        out.macro = head.text;
        return absl::OkStatus();
      }
    }
    return MacroError(head, absl::StrCat("unknown macro \"", head.text, "\""));
  }

  Dialect dialect = options.dialect;
  const bool five = count == 5, six_or_seven = count == 6 || count == 7;
  absl::string_view wanted;
  switch (dialect) {
    case Dialect::kAuto:
      if (!five && !six_or_seven) wanted = "5, 6 or 7 fields";
      dialect = five ? Dialect::kVixie : Dialect::kSeconds;
      break;
    case Dialect::kVixie:
      if (!five)
        wanted = "5 fields (minute hour day-of-month month day-of-week)";
      break;
    case Dialect::kSeconds:
    case Dialect::kQuartz:
      if (!six_or_seven)
        wanted =
            "6 or 7 fields (second minute hour day-of-month month "
            "day-of-week [year])";
      break;
  }
  if (!wanted.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", wanted, ", found ", count, " in \"", expr, "\""));
  }
  out.dialect = dialect;
  static constexpr FieldId kFive[] = {FieldId::kMinute, FieldId::kHour,
                                      FieldId::kDayOfMonth, FieldId::kMonth,
                                      FieldId::kDayOfWeek};
  static constexpr FieldId kSeven[] = {FieldId::kSecond, FieldId::kMinute,
                                       FieldId::kHour,   FieldId::kDayOfMonth,
                                       FieldId::kMonth,  FieldId::kDayOfWeek,
                                       FieldId::kYear};
  SetImplied(&out.fields[static_cast<int>(FieldId::kSecond)], FieldId::kSecond);
  SetImplied(&out.fields[static_cast<int>(FieldId::kYear)], FieldId::kYear);
  for (size_t i = 0; i < count; ++i) {
    const FieldId id = five ? kFive[i] : kSeven[i];
    Field& f = out.fields[static_cast<int>(id)];
    f.id = id;
    f.text = tokens[first + i].text;
    f.column = tokens[first + i].column;
    f.items.clear();
    FieldParser parser(&f, static_cast<int>(i) + 1, dialect, options.hash_key);
    RETURN_IF_ERROR(parser.Parse());
  }
  return absl::OkStatus();
}

}  // namespace chime::cron::internal
