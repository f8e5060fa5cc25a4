#include "src/config/yaml_writer.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace chime::config::internal {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kLineWidth = 80;
// libyaml reads an implicit key ("key: value") of at most 1024 characters;
// longer keys (counted in bytes, which is safe) are written "? key".
constexpr size_t kMaxImplicitKey = 1000;

// One character of a UTF-8 string: its code point (-1 for a byte that does
// not begin a valid sequence) and its length in bytes.
struct Char {
  int32_t code;
  size_t size;
};

Char CharAt(absl::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  if (lead < 0x80) return {lead, 1};
  size_t size;
  if ((lead & 0xE0) == 0xC0) {
    size = 2;
  } else if ((lead & 0xF0) == 0xE0) {
    size = 3;
  } else if ((lead & 0xF8) == 0xF0) {
    size = 4;
  } else {
    return {-1, 1};
  }
  // The smallest code point that needs `size` bytes.
  constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  const int32_t min = kMin[size];
  int32_t code = lead & (0x7F >> size);
  if (i + size > s.size()) return {-1, 1};
  for (size_t k = 1; k < size; ++k) {
    const auto next = static_cast<unsigned char>(s[i + k]);
    if ((next & 0xC0) != 0x80) return {-1, 1};
    code = (code << 6) | (next & 0x3F);
  }
  // Overlong forms, surrogates and values past Unicode are not UTF-8.
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return {-1, 1};
  }
  return {code, size};
}

// Whether YAML reads the character as itself outside escapes: YAML 1.1's
// printable characters without the tab, the line breaks (U+0085, U+2028,
// U+2029) and the byte-order mark U+FEFF.
bool Printable(int32_t c) {
  if (c >= 0x20 && c <= 0x7E) return true;
  if (c < 0xA0) return false;  // controls, DEL, C1, invalid
  if (c == 0x2028 || c == 0x2029 || c == 0xFEFF) return false;
  return c <= 0xFFFD || c >= 0x10000;  // surrogates are never decoded
}

// Whether every character is Printable, or one of `also`.
bool AllPrintable(absl::string_view s, absl::string_view also) {
  for (size_t i = 0; i < s.size();) {
    const Char c = CharAt(s, i);
    const bool extra = c.code >= 0 && c.code < 0x80 &&
                       absl::StrContains(also, static_cast<char>(c.code));
    if (!Printable(c.code) && !extra) return false;
    i += c.size;
  }
  return true;
}

bool EqualsAnyIgnoringCase(absl::string_view s,
                           std::initializer_list<absl::string_view> words) {
  for (absl::string_view w : words) {
    if (absl::EqualsIgnoreCase(s, w)) return true;
  }
  return false;
}

// Whether a YAML 1.1 reader that types plain scalars would read `s` as a
// null, a boolean, a number (also hex, octal, binary, sexagesimal "1:30",
// ".inf") or a date, or as the merge or value key (chime's reader does not
// type scalars, but users' other tools do).
bool LooksTyped(absl::string_view s) {
  if (EqualsAnyIgnoringCase(s, {"~", "null", "y", "n", "yes", "no", "true",
                                "false", "on", "off", "<<", "="})) {
    return true;
  }
  absl::string_view rest = s;
  if (absl::StartsWith(rest, "+") || absl::StartsWith(rest, "-")) {
    rest.remove_prefix(1);
  }
  if (EqualsAnyIgnoringCase(rest, {".inf", ".nan"})) return true;
  const auto digit = [&](size_t i) {
    return i < rest.size() && absl::ascii_isdigit(rest[i]);
  };
  if (!digit(0) && !(absl::StartsWith(rest, ".") && digit(1))) return false;
  if (rest.size() > 1 && rest[0] == '0' &&
      absl::StrContains("xXoObB", rest[1])) {
    return true;
  }
  return rest.find_first_not_of("0123456789_.:+-eE ") ==
         absl::string_view::npos;
}

bool CanBePlain(absl::string_view s, bool flow) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || s.back() == ':') {
    return false;
  }
  // ": " ends a key, " #" starts a comment; a '*' starts an alias where a
  // value begins, and quoting every one keeps cron expressions alike.
  if (absl::StrContains(s, ": ") || absl::StrContains(s, " #") ||
      absl::StrContains(s, '*')) {
    return false;
  }
  // In flow style ",[]{}" end a scalar, and libyaml refuses a ':' before
  // one of them or '?'.
  if (flow && s.find_first_of(",[]{}:") != absl::string_view::npos) {
    return false;
  }
  // Document markers, where a key starts a line.
  if (absl::StartsWith(s, "---") || absl::StartsWith(s, "...")) return false;
  // Indicators that change what a scalar is when they begin it; "-x" is
  // plain, "- x" a list item.
  const bool dash_word = s[0] == '-' && s.size() > 1 && s[1] != ' ';
  if (absl::StrContains("-?:,[]{}#&*!|>'\"%@`", s[0]) && !dash_word) {
    return false;
  }
  return !LooksTyped(s) && AllPrintable(s, "");
}

std::string DoubleQuoted(absl::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const Char c = CharAt(s, i);
    const absl::string_view bytes = s.substr(i, c.size);
    i += c.size;
    switch (c.code) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case 0:
        out += "\\0";
        continue;
    }
    if (c.code < 0 || Printable(c.code)) {
      out.append(bytes.data(), bytes.size());
    } else if (c.code <= 0xFF) {
      absl::StrAppend(&out, "\\x", absl::Hex(c.code, absl::kZeroPad2));
    } else {
      absl::StrAppend(&out, "\\u", absl::Hex(c.code, absl::kZeroPad4));
    }
  }
  out += "\"";
  return out;
}

// A string that reads better as a literal block: it spans lines, has
// something besides white space, and holds only characters that a block
// scalar keeps as they are (no carriage returns or other controls).
bool CanBeLiteral(absl::string_view s) {
  return absl::StrContains(s, '\n') &&
         s.find_first_not_of(" \t\n") != absl::string_view::npos &&
         AllPrintable(s, "\t\n");
}

std::string Scalar(const Json& v, bool flow) {
  if (v.is_string()) return YamlScalar(v.get_ref<const std::string&>(), flow);
  return v.dump();
}

// The flow form of a collection of scalars ("{ a: b, c: 1 }", "[a, b]"), or
// nullopt when a member is a collection or spans lines.
std::optional<std::string> Flow(const Json& v) {
  std::vector<std::string> members;
  for (const auto& item : v.items()) {
    const Json& child = item.value();
    if (child.is_structured() ||
        (child.is_string() &&
         absl::StrContains(child.get_ref<const std::string&>(), '\n'))) {
      return std::nullopt;
    }
    members.push_back(v.is_object() ? absl::StrCat(YamlScalar(item.key(), true),
                                                   ": ", Scalar(child, true))
                                    : Scalar(child, true));
  }
  return v.is_object() ? absl::StrCat("{ ", absl::StrJoin(members, ", "), " }")
                       : absl::StrCat("[", absl::StrJoin(members, ", "), "]");
}

class Writer {
 public:
  std::string Run(const Json& doc) && {
    for (const auto& item : doc.items()) Entry(item.key(), item.value(), 0);
    return std::move(out_);
  }

 private:
  // `key: value` at `indent`.
  void Entry(absl::string_view key, const Json& value, size_t indent) {
    const std::string k = YamlScalar(key, false);
    out_.append(indent, ' ');
    if (k.size() > kMaxImplicitKey) {
      absl::StrAppend(&out_, "? ", k, "\n");
      out_.append(indent, ' ');
      out_ += ":";
      Value(value, indent, indent + 1);
    } else {
      absl::StrAppend(&out_, k, ":");
      Value(value, indent, indent + k.size() + 1);
    }
  }

  // `- value` with the dash at `indent`.
  void Item(const Json& value, size_t indent) {
    out_.append(indent, ' ');
    out_ += "-";
    Value(value, indent, indent + 1);
  }

  // The rest of a line that so far ends in a key's ':' or a '-' at `column`,
  // and the lines below it, at `indent` + 2, that a block value needs.
  void Value(const Json& v, size_t indent, size_t column) {
    if (v.is_string() && CanBeLiteral(v.get_ref<const std::string&>())) {
      Literal(v.get_ref<const std::string&>(), indent + 2);
      return;
    }
    if (!v.is_structured()) {
      absl::StrAppend(&out_, " ", Scalar(v, false), "\n");
      return;
    }
    if (v.empty()) {
      out_ += v.is_object() ? " {}\n" : " []\n";
      return;
    }
    if (std::optional<std::string> flow = Flow(v);
        flow && column + 1 + flow->size() <= kLineWidth) {
      absl::StrAppend(&out_, " ", *flow, "\n");
      return;
    }
    out_ += "\n";
    for (const auto& item : v.items()) {
      if (v.is_object()) {
        Entry(item.key(), item.value(), indent + 2);
      } else {
        Item(item.value(), indent + 2);
      }
    }
  }

  // A literal block: "|" with the chomping that keeps the final line breaks
  // ("-" none, "" one, "+" all), then each line at `indent`. The indentation
  // is stated ("|2") when the first line starts with white space or is
  // empty, which would mislead YAML's guess; it counts from the parent
  // node, always two columns less.
  void Literal(absl::string_view s, size_t indent) {
    const size_t body = s.find_last_not_of('\n') + 1;
    const size_t breaks = s.size() - body;
    out_ += " |";
    if (absl::StrContains(" \t\n", s[0])) out_ += "2";
    out_ += breaks == 0 ? "-" : breaks == 1 ? "" : "+";
    out_ += "\n";
    for (absl::string_view line : absl::StrSplit(s.substr(0, body), '\n')) {
      if (!line.empty()) absl::StrAppend(&out_, std::string(indent, ' '), line);
      out_ += "\n";
    }
    if (breaks > 1) out_.append(breaks - 1, '\n');
  }

  std::string out_;
};

}  // namespace

std::string YamlScalar(absl::string_view s, bool flow) {
  return CanBePlain(s, flow) ? std::string(s) : DoubleQuoted(s);
}

std::string WriteYaml(const Json& doc) { return Writer().Run(doc); }

}  // namespace chime::config::internal
