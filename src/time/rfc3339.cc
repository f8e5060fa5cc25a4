#include "src/time/rfc3339.h"

#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "src/time/civil.h"

namespace chime::time {
namespace {

// Instants whose UTC year is 0000-9999, the years RFC 3339 can write:
// 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z in Unix seconds (the tests
// format both sides of both bounds).
constexpr int64_t kFirstFastSecond = -62167219200;
constexpr int64_t kEndFastSecond = 253402300800;

constexpr char kExample[] = "2026-03-29T00:30:00Z or 2026-03-29T02:30:00+02:00";

// Writes `v` (0 <= v < 10^width) as exactly `width` digits ending just before
// `end`.
void PutDigits(uint32_t v, int width, char* end) {
  for (int i = 0; i < width; ++i) {
    *--end = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Rfc3339Parser {
 public:
  explicit Rfc3339Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<absl::Time> Parse() {
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!Number(0, 4, "year", &year) || !Literal(4, '-') ||
        !Number(5, 2, "month", &month) || !Literal(7, '-') ||
        !Number(8, 2, "day", &day)) {
      return error_;
    }
    if (month < 1 || month > 12) {
      return Fail(5, absl::StrCat("month ", month, " is outside 01-12"));
    }
    if (day < 1 || day > DaysInMonth(year, month)) {
      return Fail(8, absl::StrCat("day ", day, " is outside 01-",
                                  DaysInMonth(year, month), " for ",
                                  text_.substr(0, 7)));
    }
    if (text_.size() <= 10) {
      return Fail(10, "missing time (expected \"T\" then hh:mm:ss)");
    }
    const char sep = text_[10];
    if (sep != 'T' && sep != 't' && sep != ' ') {
      return Fail(10, "expected \"T\" between the date and the time");
    }
    if (!Number(11, 2, "hour", &hour) || !Literal(13, ':') ||
        !Number(14, 2, "minute", &minute) || !Literal(16, ':') ||
        !Number(17, 2, "second", &second)) {
      return error_;
    }
    if (hour > 23) {
      return Fail(11, absl::StrCat("hour ", hour, " is outside 00-23"));
    }
    if (minute > 59) {
      return Fail(14, absl::StrCat("minute ", minute, " is outside 00-59"));
    }
    if (second > 60) {
      return Fail(17, absl::StrCat("second ", second, " is outside 00-60"));
    }

    size_t pos = 19;
    int64_t nanos = 0;
    if (pos < text_.size() && text_[pos] == '.') {
      ++pos;
      const size_t first_digit = pos;
      int64_t scale = 100'000'000;
      // Digits past the ninth meet scale 0: truncation.
      while (pos < text_.size() && IsDigit(text_[pos])) {
        nanos += (text_[pos] - '0') * scale;
        scale /= 10;
        ++pos;
      }
      if (pos == first_digit) return Fail(pos, "expected digits after \".\"");
    }
    // A leap second becomes :00 of the next minute, its fraction dropped, as
    // in absl.
    if (second == 60) nanos = 0;

    int offset_seconds = 0;
    if (pos >= text_.size()) {
      return Fail(pos, "missing UTC offset \"Z\" or +hh:mm / -hh:mm");
    }
    const char zone = text_[pos];
    if (zone == 'Z' || zone == 'z') {
      ++pos;
    } else if (zone == '+' || zone == '-') {
      int oh = 0, om = 0;
      if (!Number(pos + 1, 2, "offset hours", &oh) || !Literal(pos + 3, ':') ||
          !Number(pos + 4, 2, "offset minutes", &om)) {
        return error_;
      }
      if (oh > 23) {
        return Fail(pos + 1,
                    absl::StrCat("offset hours ", oh, " are outside 00-23"));
      }
      if (om > 59) {
        return Fail(pos + 4,
                    absl::StrCat("offset minutes ", om, " are outside 00-59"));
      }
      offset_seconds = (zone == '-' ? -1 : 1) * (oh * 3600 + om * 60);
      pos += 6;
    } else {
      return Fail(pos, "expected \"Z\" or a UTC offset +hh:mm / -hh:mm");
    }
    if (pos != text_.size()) {
      return Fail(pos, "unexpected text after the UTC offset");
    }

    const int64_t seconds = DaysFromCivil(year, month, day) * 86400 +
                            hour * 3600 + minute * 60 + second - offset_seconds;
    return absl::FromUnixSeconds(seconds) + absl::Nanoseconds(nanos);
  }

 private:
  // Reads exactly `width` digits at `pos`.
  bool Number(size_t pos, int width, absl::string_view what, int* out) {
    int v = 0;
    for (int i = 0; i < width; ++i) {
      if (pos + i >= text_.size() || !IsDigit(text_[pos + i])) {
        error_ =
            Fail(pos, absl::StrCat("expected ", width, " digits of ", what));
        return false;
      }
      v = v * 10 + (text_[pos + i] - '0');
    }
    *out = v;
    return true;
  }

  bool Literal(size_t pos, char c) {
    if (pos < text_.size() && text_[pos] == c) return true;
    error_ =
        Fail(pos, absl::StrCat("expected \"", absl::string_view(&c, 1), "\""));
    return false;
  }

  absl::Status Fail(size_t pos, absl::string_view what) const {
    constexpr size_t kMaxShown = 64;
    const std::string shown = absl::CHexEscape(text_.substr(0, kMaxShown));
    return absl::InvalidArgumentError(absl::StrCat(
        "time \"", shown, text_.size() > kMaxShown ? "...\"" : "\"", ": ", what,
        " (column ", pos + 1, "); expected RFC 3339 such as ", kExample));
  }

  absl::string_view text_;
  absl::Status error_;
};

}  // namespace

void AppendUtc(absl::Time t, std::string* out) {
  const int64_t seconds =
      absl::ToUnixSeconds(t);  // floor; saturates for the infinite times
  if (seconds < kFirstFastSecond || seconds >= kEndFastSecond) {
    absl::StrAppend(out, absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t,
                                          absl::UTCTimeZone()));
    return;
  }
  const CivilFields c = CivilFromSeconds(seconds);
  // ToUnixSeconds floors, so the remainder is non-negative and
  // ToInt64Nanoseconds truncates it downward. Whole seconds skip the division.
  const absl::Time whole = absl::FromUnixSeconds(seconds);
  uint32_t nanos =
      whole == t ? 0
                 : static_cast<uint32_t>(absl::ToInt64Nanoseconds(t - whole));
  char buf[32] = "0000-00-00T00:00:00";
  PutDigits(static_cast<uint32_t>(c.year), 4, buf + 4);
  PutDigits(c.month, 2, buf + 7);
  PutDigits(c.day, 2, buf + 10);
  PutDigits(c.hour, 2, buf + 13);
  PutDigits(c.minute, 2, buf + 16);
  PutDigits(c.second, 2, buf + 19);
  char* end = buf + 19;
  if (nanos != 0) {
    int digits = 9;
    while (nanos % 10 == 0) {
      nanos /= 10;
      --digits;
    }
    *end++ = '.';
    end += digits;
    PutDigits(nanos, digits, end);
  }
  *end++ = 'Z';
  out->append(buf, end);
}

std::string FormatUtc(absl::Time t) {
  std::string out;
  AppendUtc(t, &out);
  return out;
}

absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text) {
  return Rfc3339Parser(text).Parse();
}

}  // namespace chime::time
