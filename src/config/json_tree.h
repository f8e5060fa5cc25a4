// A JSON value as the YAML tree (yaml_tree.h) that its text would parse to --
// without printing and parsing the text: the REST API reads job bodies with
// the job-file reader, and the round trip through text was a fifth of a job
// creation's CPU on the listener.
//
// JSON is YAML: a string is a quoted scalar, a number or boolean a plain
// scalar spelled as nlohmann prints it, null a null, an array a sequence, an
// object a mapping with its keys (quoted scalars) in order. Every node is at
// mark 0:0.
//
// Internal to src/config. Thread-safety: a pure function.
#ifndef CHIME_SRC_CONFIG_JSON_TREE_H_
#define CHIME_SRC_CONFIG_JSON_TREE_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "src/config/yaml_tree.h"

namespace chime::config::internal {

// One document whose root is `json`. InvalidArgument "a string is not valid
// UTF-8" for such a string (key or value); "a value is not JSON text" for a
// binary value. Every character valid UTF-8 can hold is taken, as a job file
// takes it escaped ("\x7f", "\uFFFE"). REQUIRES:
// `json` nested no deeper than the stack allows (the API bounds it at 64).
absl::StatusOr<YamlStream> TreeFromJson(const nlohmann::ordered_json& json);

// TreeFromJson of the value `text` parses to, read from the text by events
// (no nlohmann value is built), when `text` is one JSON object, nested at
// most `max_depth` deep (an object or array opened at depth `max_depth`, the
// root at 0, is too deep), with no key twice in an object and every string
// valid UTF-8. nullopt otherwise: the caller then parses the value itself,
// which says where the text is wrong -- or, for a key given twice, keeps its
// last value at its first place, as nlohmann does.
std::optional<YamlStream> TreeFromJsonText(absl::string_view text,
                                           int max_depth);

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_JSON_TREE_H_
