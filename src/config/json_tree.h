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

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "src/config/yaml_tree.h"

namespace chime::config::internal {

// One document whose root is `json`. InvalidArgument "a string is not valid
// UTF-8" for such a string (key or value); "a value is not JSON text" for a
// binary value. Every character valid UTF-8 can hold is taken, as a job file
// takes it escaped ("\x7f", "\uFFFE"). REQUIRES:
// `json` nested no deeper than the stack allows (the API bounds it at 64).
absl::StatusOr<YamlStream> TreeFromJson(const nlohmann::ordered_json& json);

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_JSON_TREE_H_
