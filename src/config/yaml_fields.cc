#include "src/config/yaml_fields.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/cron/parser.h"
#include "src/time/rfc3339.h"

namespace chime::config::internal {
namespace {

// Edit distance, for "did you mean" on unknown keys.
size_t Distance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The mark of a mapping's value: the key's when the value is empty.
const Mark& ValueMark(const Node& key, const Node& value) {
  return value.IsNull() ? key.mark() : value.mark();
}

// A scalar's text, or the "expected <what>, got ..." error.
absl::StatusOr<std::string> Scalar(const Value& v, absl::string_view what) {
  if (!v.node->IsScalar()) {
    return ErrorAt(
        v, absl::StrCat("expected ", what, ", got ", Describe(*v.node)));
  }
  return std::string(v.node->text());
}

// "0", "0s", "00m": zero, which cron's duration grammar (periods are
// positive) does not accept.
bool IsZeroDuration(absl::string_view text) {
  const size_t digits = text.find_first_not_of('0');
  if (digits == 0) return false;
  if (digits == absl::string_view::npos) return true;
  const absl::string_view unit = text.substr(digits);
  return unit == "ms" || unit == "s" || unit == "m" || unit == "h" ||
         unit == "d";
}

}  // namespace

std::string ChildPath(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

std::string IndexPath(absl::string_view path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

Value RootValue(const Node& node) {
  return {.node = &node, .path = "", .mark = node.mark()};
}

absl::Status ErrorAt(const Mark& mark, absl::string_view path,
                     absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(mark.line + 1, ":", mark.column + 1, ": ", path,
                   path.empty() ? "" : ": ", message));
}

absl::Status ErrorAt(const Value& v, absl::string_view message) {
  return ErrorAt(v.mark, v.path, message);
}

std::string Describe(const Node& node) {
  switch (node.kind()) {
    case Node::Kind::kSequence:
      return "a list";
    case Node::Kind::kMapping:
      return "a mapping";
    case Node::Kind::kScalar: {
      const absl::string_view s = node.text();
      if (s.size() > 40) {
        return absl::StrCat("\"", absl::CHexEscape(s.substr(0, 37)), "...\"");
      }
      return absl::StrCat("\"", absl::CHexEscape(s), "\"");
    }
    case Node::Kind::kNull:
      break;
  }
  return "nothing";
}

absl::StatusOr<Mapping> Mapping::Read(
    const Value& v, absl::string_view what,
    absl::Span<const absl::string_view> allowed) {
  if (!v.node->IsMapping()) {
    return ErrorAt(
        v, absl::StrCat("expected ", what, ", got ", Describe(*v.node)));
  }
  Mapping m;
  m.entries_.reserve(v.node->size());
  for (size_t i = 0; i < v.node->size(); ++i) {
    const Node& key = v.node->key(i);
    const Node& value = v.node->value(i);
    if (!key.IsScalar()) {
      return ErrorAt(key.mark(), v.path,
                     absl::StrCat("expected a key name, got ", Describe(key)));
    }
    const absl::string_view name = key.text();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string message = absl::StrCat("unknown key \"", name, "\"");
      const absl::string_view* nearest = nullptr;
      size_t best = 3;  // suggest only names at most two edits away
      for (const absl::string_view& a : allowed) {
        const size_t d = Distance(name, a);
        if (d < best) {
          best = d;
          nearest = &a;
        }
      }
      if (nearest != nullptr) {
        absl::StrAppend(&message, " (did you mean \"", *nearest, "\"?)");
      }
      absl::StrAppend(&message, "; expected one of ",
                      absl::StrJoin(allowed, ", "));
      return ErrorAt(key.mark(), v.path, message);
    }
    for (const Entry& seen : m.entries_) {
      if (seen.key == name) {
        return ErrorAt(
            key.mark(), v.path,
            absl::StrCat("key \"", name, "\" appears twice (first at ",
                         seen.key_mark.line + 1, ":", seen.key_mark.column + 1,
                         ")"));
      }
    }
    m.entries_.push_back({.key = name,
                          .key_mark = key.mark(),
                          .value = &value,
                          .value_mark = ValueMark(key, value)});
  }
  m.path_ = v.path;
  return m;
}

std::optional<Value> Mapping::Get(absl::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) {
      return Value{.node = entry.value,
                   .path = ChildPath(path_, entry.key),
                   .mark = entry.value_mark};
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ReadString(const Value& v) {
  return Scalar(v, "a string");
}

absl::StatusOr<bool> ReadBool(const Value& v) {
  absl::StatusOr<std::string> s = Scalar(v, "true or false");
  if (!s.ok()) return s.status();
  if (*s == "true" || *s == "True" || *s == "TRUE") return true;
  if (*s == "false" || *s == "False" || *s == "FALSE") return false;
  return ErrorAt(
      v, absl::StrCat("expected true or false, got ", Describe(*v.node)));
}

absl::StatusOr<int64_t> ReadInt(const Value& v, int64_t min, int64_t max) {
  absl::StatusOr<std::string> s = Scalar(v, "a whole number");
  if (!s.ok()) return s.status();
  int64_t n;
  if (!absl::SimpleAtoi(*s, &n)) {
    return ErrorAt(
        v, absl::StrCat("expected a whole number, got ", Describe(*v.node)));
  }
  if (n < min || n > max) {
    return ErrorAt(v, absl::StrCat(n, " is outside ", min, "..", max));
  }
  return n;
}

absl::StatusOr<double> ReadNumber(const Value& v) {
  absl::StatusOr<std::string> s = Scalar(v, "a number");
  if (!s.ok()) return s.status();
  double d;
  if (!absl::SimpleAtod(*s, &d) || !std::isfinite(d)) {
    return ErrorAt(v, absl::StrCat("expected a number such as 2 or 1.5, got ",
                                   Describe(*v.node)));
  }
  return d;
}

absl::StatusOr<absl::Duration> ReadDuration(const Value& v,
                                            bool allow_unlimited) {
  absl::StatusOr<std::string> s =
      Scalar(v, allow_unlimited ? "a duration such as 30s, or unlimited"
                                : "a duration such as 30s");
  if (!s.ok()) return s.status();
  if (allow_unlimited && *s == "unlimited") return absl::InfiniteDuration();
  if (absl::StartsWith(*s, "-")) return ErrorAt(v, "must not be negative");
  if (IsZeroDuration(*s)) return absl::ZeroDuration();
  // One grammar for every duration chime reads, shared with `@every`.
  absl::StatusOr<int64_t> ms = cron::internal::ParseDurationMs(*s);
  if (!ms.ok()) return ErrorAt(v, ms.status().message());
  return absl::Milliseconds(*ms);
}

absl::StatusOr<int64_t> ReadSize(const Value& v) {
  constexpr absl::string_view kExpected =
      "a size in bytes such as 65536, 64KiB or 1MiB";
  absl::StatusOr<std::string> s = Scalar(v, kExpected);
  if (!s.ok()) return s.status();
  absl::string_view text = *s;
  const size_t digits = text.find_first_not_of("0123456789");
  absl::string_view number = text.substr(0, digits);
  absl::string_view unit =
      digits == absl::string_view::npos
          ? absl::string_view()
          : absl::StripLeadingAsciiWhitespace(text.substr(digits));
  int64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "KiB") scale = int64_t{1} << 10;
  if (unit == "MiB") scale = int64_t{1} << 20;
  if (unit == "GiB") scale = int64_t{1} << 30;
  int64_t n;
  if (scale == 0 || number.empty() || !absl::SimpleAtoi(number, &n)) {
    return ErrorAt(
        v, absl::StrCat("expected ", kExpected, ", got ", Describe(*v.node)));
  }
  if (n > std::numeric_limits<int64_t>::max() / scale) {
    return ErrorAt(v, absl::StrCat(text, " is too large"));
  }
  return n * scale;
}

absl::StatusOr<absl::Time> ReadTime(const Value& v) {
  absl::StatusOr<std::string> s =
      Scalar(v, "an RFC 3339 time such as 2026-12-24T18:00:00Z");
  if (!s.ok()) return s.status();
  absl::StatusOr<absl::Time> t = time::ParseRfc3339(*s);
  if (!t.ok()) return ErrorAt(v, t.status().message());
  return *t;
}

absl::StatusOr<std::vector<std::string>> ReadStringList(const Value& v) {
  if (!v.node->IsSequence()) {
    return ErrorAt(
        v, absl::StrCat("expected a list of strings, got ", Describe(*v.node)));
  }
  std::vector<std::string> out;
  out.reserve(v.node->size());
  for (size_t i = 0; i < v.node->size(); ++i) {
    const Node& item = v.node->item(i);
    absl::StatusOr<std::string> s = ReadString(
        {.node = &item, .path = IndexPath(v.path, i), .mark = item.mark()});
    if (!s.ok()) return s.status();
    out.push_back(*std::move(s));
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> ReadStringMap(
    const Value& v) {
  if (!v.node->IsMapping()) {
    return ErrorAt(v,
                   absl::StrCat("expected a mapping of names to strings, got ",
                                Describe(*v.node)));
  }
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < v.node->size(); ++i) {
    const Node& key = v.node->key(i);
    const Node& value = v.node->value(i);
    if (!key.IsScalar()) {
      return ErrorAt(key.mark(), v.path,
                     absl::StrCat("expected a name, got ", Describe(key)));
    }
    absl::StatusOr<std::string> text =
        ReadString({.node = &value,
                    .path = ChildPath(v.path, key.text()),
                    .mark = ValueMark(key, value)});
    if (!text.ok()) return text.status();
    if (!out.emplace(key.text(), *std::move(text)).second) {
      return ErrorAt(key.mark(), v.path,
                     absl::StrCat("\"", key.text(), "\" appears twice"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<int, int>>> ReadStatusRanges(
    const Value& v) {
  if (!v.node->IsSequence()) {
    return ErrorAt(v, absl::StrCat("expected a list of statuses such as "
                                   "[200-299, 409], got ",
                                   Describe(*v.node)));
  }
  std::vector<std::pair<int, int>> out;
  for (size_t i = 0; i < v.node->size(); ++i) {
    const Value item{.node = &v.node->item(i),
                     .path = IndexPath(v.path, i),
                     .mark = v.node->item(i).mark()};
    absl::StatusOr<std::string> s = Scalar(item, "a status such as 200");
    if (!s.ok()) return s.status();
    const absl::string_view text = *s;
    const size_t dash = text.find('-');
    const absl::string_view first = text.substr(0, dash);
    const absl::string_view last =
        dash == absl::string_view::npos ? first : text.substr(dash + 1);
    int lo, hi;
    if (!absl::SimpleAtoi(first, &lo) || !absl::SimpleAtoi(last, &hi)) {
      return ErrorAt(item, absl::StrCat("expected a status such as 200 or a "
                                        "range such as 200-299, got ",
                                        Describe(*item.node)));
    }
    out.emplace_back(lo, hi);
  }
  return out;
}

absl::StatusOr<size_t> ReadChoice(const Value& v,
                                  absl::Span<const absl::string_view> names) {
  const std::string choices = absl::StrJoin(names, ", ");
  absl::StatusOr<std::string> s = Scalar(v, absl::StrCat("one of ", choices));
  if (!s.ok()) return s.status();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *s) return i;
  }
  return ErrorAt(v,
                 absl::StrCat(Describe(*v.node), " is not one of ", choices));
}

}  // namespace chime::config::internal
