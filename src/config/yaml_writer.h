// JSON values written as block-style YAML text that libyaml (and so
// ParseYaml, yaml_tree.h) reads back to the same strings, numbers and
// structure. The writing half of the job-file format (job_writer.h); the
// reading half is yaml_tree.h and yaml_fields.h.
//
//   {"id": "nightly", "schedule": "*/5 * * * *", "labels": {"team": "data"},
//    "body": "line 1\nline 2\n"}
// is written
//   id: nightly
//   schedule: "*/5 * * * *"
//   labels: { team: data }
//   body: |
//     line 1
//     line 2
//
// Internal to src/config. Thread-safety: pure functions.
#ifndef CHIME_SRC_CONFIG_YAML_WRITER_H_
#define CHIME_SRC_CONFIG_YAML_WRITER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace chime::config::internal {

// Writes the object `doc` as a YAML block mapping, one key a line, ending in
// a newline ("" for an empty object). A nested mapping or list whose members
// are all scalars (no line breaks in them) is written in flow style when its
// line fits in 80 columns; other collections are written in block style, two
// spaces deeper. Numbers and booleans are written as nlohmann dumps them (a
// NaN or infinity as `null`). Strings are written by YamlScalar, or as a
// literal block (`|`) when they span lines and hold only printable
// characters and tabs. A key longer than libyaml's limit for implicit keys
// (1024 characters) is written as an explicit key (`? key`).
// REQUIRES: doc.is_object().
std::string WriteYaml(const nlohmann::ordered_json& doc);

// `s` as one YAML scalar on one line: plain when YAML reads it as itself and
// a YAML 1.1 reader would not take it for a null, a boolean, a number or a
// date (`yes`, `~`, `1.5`, `2026-01-01`), and it holds no `*` (so cron
// expressions always look alike); otherwise double-quoted, with the
// characters YAML would not read as themselves escaped (controls, line
// breaks, DEL, U+FEFF, U+FFFE/U+FFFF). With `flow`, the plain form is also
// refused for text holding `,[]{}:`. Bytes that are not valid UTF-8 are copied
// as they are: no YAML text can hold them, and libyaml refuses them.
std::string YamlScalar(absl::string_view s, bool flow);

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_YAML_WRITER_H_
