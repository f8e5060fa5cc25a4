// The schedule-expression parser: text -> a small syntax tree, with precise
// errors.
//
// Internal to the cron module. `Schedule::Parse` compiles the tree into bit
// sets; `Describe()` walks it to write English. Errors name the field, the
// offending text, what would be accepted and the 1-based column in the original
// expression:
//   "day-of-month: 32 is outside 1-31 (field 3, column 7)"
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_CRON_PARSER_H_
#define CHIME_SRC_CRON_PARSER_H_

#include <array>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/cron.h"

namespace chime::cron::internal {

enum class FieldId {
  kSecond,
  kMinute,
  kHour,
  kDayOfMonth,
  kMonth,
  kDayOfWeek,
  kYear
};
inline constexpr int kNumFields = 7;

// "day-of-month", ...
absl::string_view FieldName(FieldId id);
// The numeric domain of a field after normalization (day-of-week is 0-7, 0 and
// 7 = Sunday, in every dialect: Quartz numbers are converted).
int FieldMin(FieldId id);
int FieldMax(FieldId id);

struct Item {
  enum class Kind {
    kRange,    // lo-hi/step; `*` is the full range, a single value has lo == hi
    kLastDay,  // day-of-month `L-n` (n = 0 for `L`)
    kLastWeekday,     // day-of-month `LW`
    kNearestWeekday,  // day-of-month `dW`: lo = d
    kLastOfWeekday,   // day-of-week `dL`: lo = weekday
    kNthOfWeekday,    // day-of-week `d#k`: lo = weekday, n = k
  };
  Kind kind = Kind::kRange;
  int lo = 0;
  int hi = 0;  // may be < lo: the range wraps (cyclic fields only)
  int step = 1;
  int n = 0;
  bool star = false;    // written as `*` or `?` (possibly with a step)
  bool hashed = false;  // written with `H`
  bool single = false;  // written as one value (no range, no step)
};

struct Field {
  FieldId id = FieldId::kSecond;
  absl::string_view text;  // as written; empty when the field was implied (no
                           // seconds, no year)
  int column =
      0;  // 1-based column of the field's first character in the expression
  // Most fields are one item: kept inline (a parse allocates nothing for
  // them).
  absl::InlinedVector<Item, 1> items;
  // True if the field is unrestricted by its text (starts with `*` or is `?`,
  // or was implied).
  bool star() const { return text.empty() || text[0] == '*' || text[0] == '?'; }
};

struct ParsedExpression {
  absl::string_view
      zone;  // from a CRON_TZ=/TZ= prefix, else ParseOptions::zone
  Dialect dialect = Dialect::kVixie;
  absl::string_view macro;  // "@daily" etc., or empty
  int64_t every_ms = 0;     // > 0 for `@every`
  std::array<Field, kNumFields>
      fields;  // indexed by FieldId; unused for `@every`
};

// Parses `expr`. The result's string_views point into `expr`.
absl::StatusOr<ParsedExpression> ParseExpression(absl::string_view expr,
                                                 const ParseOptions& options);
// ParseExpression into *out, which must be default-constructed (a
// ParsedExpression is ~0.5 KB: no moves of it). On error *out is unspecified.
absl::Status ParseExpressionInto(absl::string_view expr,
                                 const ParseOptions& options,
                                 ParsedExpression* out);

// Parses a duration such as "90s", "1h30m", "1d", "500ms". Returns milliseconds
// (> 0).
absl::StatusOr<int64_t> ParseDurationMs(absl::string_view text);

}  // namespace chime::cron::internal

#endif  // CHIME_SRC_CRON_PARSER_H_
