// The scenario file format (docs/scenarios.md): parsing, rendering back, and
// the diff shown when a case's output changes.
//
// A file is a sequence of cases -- a command (one or more lines), a line
// `----`, the expected output, a blank line -- with comments (`#`) and blank
// lines between them. Everything that is not an expected output is kept
// verbatim, so rendering a parsed file with new outputs changes nothing else
// (this is how `--rewrite` works).
//
// Thread-safety: value types and pure functions.
#ifndef CHIME_TESTS_SCENARIOS_SCENARIO_FILE_H_
#define CHIME_TESTS_SCENARIOS_SCENARIO_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chime::scenarios {

// One case of a scenario file.
struct ScenarioCase {
  int line = 0;                            // 1-based line of the command
  std::vector<std::string> command_lines;  // as written
  std::vector<std::string> expected;
  bool ends_file =
      false;  // no blank line after the output: the file ends there
};

// A parsed scenario file: text kept verbatim (comments, blank lines) and cases,
// in order.
struct ScenarioFile {
  struct Piece {
    std::vector<std::string> verbatim;  // used when `scenario_case` is empty
    std::optional<ScenarioCase> scenario_case;
  };
  std::vector<Piece> pieces;
};

// Parses a scenario file. InvalidArgument names the line ("line 12: the command
// at line 10 needs a ---- line before its expected output").
absl::StatusOr<ScenarioFile> ParseScenarioFile(absl::string_view text);

// The file's text with the i-th case's expected output replaced by
// `outputs[i]`. REQUIRES: one output per case; no output line is blank.
std::string RenderScenarioFile(
    const ScenarioFile& file,
    const std::vector<std::vector<std::string>>& outputs);

// A line diff by longest common subsequence, one line each: "    " common, "  -
// " only in `expected`, "  + " only in `actual`.
std::string LineDiff(const std::vector<std::string>& expected,
                     const std::vector<std::string>& actual);

// Whether a line is empty or only spaces (it would end a case's output).
bool IsBlankLine(absl::string_view line);

}  // namespace chime::scenarios

#endif  // CHIME_TESTS_SCENARIOS_SCENARIO_FILE_H_
