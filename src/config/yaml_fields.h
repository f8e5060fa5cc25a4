// Typed reading of YAML values for the job files, with messages that say
// where a value is and what would be accepted.
//
// Every reader takes a `Value` -- a node of a parsed YAML tree (yaml_tree.h),
// the path of keys and indexes that leads to it ("jobs[1].retry.max_attempts")
// and the position to report -- and returns the typed value or
// InvalidArgument with the message
//   "<line>:<column>: <path>: <what is wrong>"
// (1-based). The caller prefixes the file name. Scalars mean what these
// readers make of them: YAML's own typing is not applied.
//
//   auto retry = Mapping::Read(v, "the retry policy", {"max_attempts", ...});
//   if (auto n = retry->Get("max_attempts")) {
//     ASSIGN_OR_RETURN(int64_t attempts, ReadInt(*n));
//   }
//
// Internal to src/config. Thread-safety: pure functions; a Mapping is a value
// that, like a Value, refers into the parsed tree and must not outlive it.
#ifndef CHIME_SRC_CONFIG_YAML_FIELDS_H_
#define CHIME_SRC_CONFIG_YAML_FIELDS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "src/config/yaml_tree.h"

namespace chime::config::internal {

// A YAML value and how to refer to it in a message.
struct Value {
  // Never null; the node (and the YamlStream holding it) outlives the Value.
  const Node* node = nullptr;
  std::string path;  // "jobs[1].retry"; "" for a file's top level
  // Where to point: the node itself, or the key that names it when the value
  // is empty (the parser places an empty value at the next token).
  Mark mark;
};

// `path` joined with a key ("retry" + "max_attempts" -> "retry.max_attempts")
// or an index ("jobs" + 1 -> "jobs[1]").
std::string ChildPath(absl::string_view path, absl::string_view key);
std::string IndexPath(absl::string_view path, size_t index);

// The top-level value of a parsed document.
Value RootValue(const Node& node);

// InvalidArgument "<line>:<column>: <path>: <message>" (line and column
// 1-based; without "<path>: " when `path` is empty).
absl::Status ErrorAt(const Mark& mark, absl::string_view path,
                     absl::string_view message);
absl::Status ErrorAt(const Value& v, absl::string_view message);

// What a node is, for "got ..." in messages: "a list", "a mapping",
// "nothing", or the scalar's text in quotes.
std::string Describe(const Node& node);

// The entries of one YAML mapping, checked against the keys it may have.
class Mapping {
 public:
  // Fails when `v` is not a mapping ("expected <what>, got a list"), or when a
  // key is not a plain string, appears twice, or is not in `allowed` (the
  // message lists the allowed keys and suggests the nearest one).
  static absl::StatusOr<Mapping> Read(
      const Value& v, absl::string_view what,
      absl::Span<const absl::string_view> allowed);

  // The value under `key`, or nullopt when the mapping has no such key.
  std::optional<Value> Get(absl::string_view key) const;

 private:
  // Points into the parsed tree, which outlives the Mapping; the Value and
  // its path are made when asked for.
  struct Entry {
    absl::string_view key;
    Mark key_mark;
    const Node* value;
    Mark value_mark;
  };

  std::string path_;            // of the mapping itself
  std::vector<Entry> entries_;  // in file order; keys are unique
};

// A scalar's text. Numbers and booleans are accepted as their text.
absl::StatusOr<std::string> ReadString(const Value& v);

// `true` or `false` (also `True`, `TRUE`, ...; not `yes`/`no`).
absl::StatusOr<bool> ReadBool(const Value& v);

// A whole number in [min, max].
absl::StatusOr<int64_t> ReadInt(const Value& v,
                                int64_t min = std::numeric_limits<int>::min(),
                                int64_t max = std::numeric_limits<int>::max());

// A finite decimal number ("2", "1.5").
absl::StatusOr<double> ReadNumber(const Value& v);

// A duration written as cron's `@every` writes one: one or more
// <number><unit> parts with units d, h, m, s, ms ("500ms", "30s", "1h30m",
// "1d"); milliseconds are the finest unit. "0" or "0s" (any unit) is zero.
// With `allow_unlimited`, the word "unlimited" is absl::InfiniteDuration().
absl::StatusOr<absl::Duration> ReadDuration(const Value& v,
                                            bool allow_unlimited = false);

// Bytes: a whole number, optionally followed by B, KiB, MiB or GiB ("65536",
// "64KiB", "1 MiB").
absl::StatusOr<int64_t> ReadSize(const Value& v);

// An RFC 3339 time with a UTC offset ("2026-12-24T18:00:00Z").
absl::StatusOr<absl::Time> ReadTime(const Value& v);

// A list of strings; a single string is not a list.
absl::StatusOr<std::vector<std::string>> ReadStringList(const Value& v);

// A mapping of strings to strings (any keys; values must be scalars).
absl::StatusOr<std::map<std::string, std::string>> ReadStringMap(
    const Value& v);

// HTTP statuses: a list of statuses (200) and inclusive ranges ("200-299").
absl::StatusOr<std::vector<std::pair<int, int>>> ReadStatusRanges(
    const Value& v);

// The index in `names` of the scalar's text; otherwise the error
// "\"skp\" is not one of allow, skip, ...".
absl::StatusOr<size_t> ReadChoice(const Value& v,
                                  absl::Span<const absl::string_view> names);

// A name and the enumerator it stands for.
template <typename E>
struct EnumName {
  absl::string_view name;
  E value;
};

// One of the enumerators in `names`, by name (ReadChoice).
template <typename E>
absl::StatusOr<E> ReadEnum(const Value& v,
                           absl::Span<const EnumName<E>> names) {
  std::vector<absl::string_view> plain;
  for (const EnumName<E>& n : names) plain.push_back(n.name);
  absl::StatusOr<size_t> index = ReadChoice(v, plain);
  if (!index.ok()) return index.status();
  return names[*index].value;
}

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_YAML_FIELDS_H_
