#include "tests/scenarios/scenario_file.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace chime::scenarios {
namespace {

constexpr absl::string_view kSeparator = "----";

}  // namespace

bool IsBlankLine(absl::string_view line) {
  return absl::StripAsciiWhitespace(line).empty();
}

absl::StatusOr<ScenarioFile> ParseScenarioFile(absl::string_view text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back();  // the final newline
  ScenarioFile file;
  size_t i = 0;
  auto verbatim = [&](std::string line) {
    if (file.pieces.empty() || file.pieces.back().scenario_case.has_value()) {
      file.pieces.emplace_back();
    }
    file.pieces.back().verbatim.push_back(std::move(line));
  };
  while (i < lines.size()) {
    if (IsBlankLine(lines[i]) || absl::StartsWith(lines[i], "#")) {
      verbatim(lines[i++]);
      continue;
    }
    ScenarioCase c;
    c.line = static_cast<int>(i) + 1;
    while (i < lines.size() && lines[i] != kSeparator) {
      if (IsBlankLine(lines[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", i + 1, ": the command at line ", c.line,
                         " needs a ---- line before its expected output"));
      }
      c.command_lines.push_back(lines[i++]);
    }
    if (i == lines.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", c.line,
          ": the command needs a ---- line before its expected output"));
    }
    ++i;  // ----
    while (i < lines.size() && !lines[i].empty())
      c.expected.push_back(lines[i++]);
    if (i == lines.size()) {
      c.ends_file = true;
    } else {
      ++i;  // the blank line that ends the case
    }
    file.pieces.push_back({{}, std::move(c)});
  }
  return file;
}

std::string RenderScenarioFile(
    const ScenarioFile& file,
    const std::vector<std::vector<std::string>>& outputs) {
  std::string out;
  size_t n = 0;
  for (const ScenarioFile::Piece& piece : file.pieces) {
    if (!piece.scenario_case) {
      for (const std::string& line : piece.verbatim)
        absl::StrAppend(&out, line, "\n");
      continue;
    }
    const ScenarioCase& c = *piece.scenario_case;
    for (const std::string& line : c.command_lines)
      absl::StrAppend(&out, line, "\n");
    absl::StrAppend(&out, kSeparator, "\n");
    for (const std::string& line : outputs.at(n))
      absl::StrAppend(&out, line, "\n");
    if (!c.ends_file) out += "\n";
    ++n;
  }
  return out;
}

// Outputs are short, so O(n * m) is fine.
std::string LineDiff(const std::vector<std::string>& a,
                     const std::vector<std::string>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1
                               : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::string out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      absl::StrAppend(&out, "    ", a[i++], "\n");
      ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      absl::StrAppend(&out, "  + ", b[j++], "\n");
    } else {
      absl::StrAppend(&out, "  - ", a[i++], "\n");
    }
  }
  return out;
}

}  // namespace chime::scenarios
