// TreeFromJson builds the tree that ParseYaml makes of the JSON's text, and
// ParseJobJson reads a job as ParseJobFile reads its text.
#include "src/config/json_tree.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "src/config/job_file.h"
#include "src/config/yaml_tree.h"
#include "testing/status_matchers.h"

namespace chime::config::internal {
namespace {

using Json = nlohmann::ordered_json;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

// Kind, text, plainness and children, recursively; marks are not compared
// (TreeFromJson has none).
std::string Shape(const Node& n) {
  switch (n.kind()) {
    case Node::Kind::kNull:
      return "~";
    case Node::Kind::kScalar:
      return absl::StrCat(n.plain() ? "p" : "q", n.text().size(), ":",
                          n.text());
    case Node::Kind::kSequence: {
      std::string out = "[";
      for (size_t i = 0; i < n.size(); ++i)
        absl::StrAppend(&out, Shape(n.item(i)), ",");
      return out + "]";
    }
    case Node::Kind::kMapping: {
      std::string out = "{";
      for (size_t i = 0; i < n.size(); ++i)
        absl::StrAppend(&out, Shape(n.key(i)), "=", Shape(n.value(i)), ",");
      return out + "}";
    }
  }
  return "?";
}

std::string ShapeOf(const YamlStream& s) {
  std::string out;
  for (const Node* root : s.documents())
    absl::StrAppend(&out, Shape(*root), ";");
  return out;
}

// Strings with the characters that quoting and escaping care about.
std::string AnyString() {
  static const std::vector<std::string> pieces = {
      "a",           "Z",    " ",
      "\"",          "\\",   "\n",
      "\t",          "\x01", std::string(1, '\0'),
      "#",           ":",    "- ",
      "*",           "&",    "!",
      "%",           "@",    "`",
      "'",           "null", "~",
      "true",        "5",    "1.5",
      "é",           "€",    "😀",
      "\xef\xbb\xbf"};
  // Not U+007F, the C1 controls, U+FFFE or U+FFFF: nlohmann prints them
  // unescaped, and YAML allows them in a text only escaped -- U+0085 (NEL)
  // it takes unescaped, as a line break, folded into a space (see
  // TakesCharactersYamlAllowsOnlyEscaped).
  std::string out;
  const int n = *rc::gen::inRange(0, 6);
  for (int i = 0; i < n; ++i) out += *rc::gen::elementOf(pieces);
  return out;
}

Json AnyJson(int depth) {
  const int kind = *rc::gen::inRange(0, depth > 0 ? 8 : 6);
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return *rc::gen::arbitrary<bool>();
    case 2:
      return *rc::gen::arbitrary<int64_t>();
    case 3:
      return *rc::gen::arbitrary<uint64_t>();
    case 4: {
      const double d = *rc::gen::arbitrary<double>();
      return std::isfinite(d) ? Json(d) : Json(0.25);
    }
    case 5:
      return AnyString();
    case 6: {
      Json a = Json::array();
      const int n = *rc::gen::inRange(0, 4);
      for (int i = 0; i < n; ++i) a.push_back(AnyJson(depth - 1));
      return a;
    }
    default: {
      Json o = Json::object();
      const int n = *rc::gen::inRange(0, 4);
      for (int i = 0; i < n; ++i) o[AnyString()] = AnyJson(depth - 1);
      return o;
    }
  }
}

RC_GTEST_PROP(TreeFromJsonTest, IsTheTreeOfTheJsonText, ()) {
  const Json json = AnyJson(3);
  absl::StatusOr<YamlStream> direct = TreeFromJson(json);
  RC_ASSERT(direct.ok());
  // libyaml refuses a little valid JSON text: {"\\&x- ": 1} after another
  // quoted key gives "end of map flow not found" (seen with libyaml 0.2.5).
  // Such a body was refused before TreeFromJson; it is taken now.
  absl::StatusOr<YamlStream> parsed = ParseYaml(json.dump(1));
  RC_CLASSIFY(!parsed.ok(), "libyaml refuses the text");
  if (parsed.ok()) RC_ASSERT(ShapeOf(*direct) == ShapeOf(*parsed));
}

// Read from the text by events, a plain object gives the tree of its value.
RC_GTEST_PROP(TreeFromJsonTextTest, IsTheTreeOfTheParsedValue, ()) {
  Json json = Json::object();  // keys once each: a later one replaces
  const int n = *rc::gen::inRange(0, 5);
  for (int i = 0; i < n; ++i) json[AnyString()] = AnyJson(2);
  const std::string text = json.dump(*rc::gen::elementOf(std::vector{-1, 2}));
  RC_LOG() << text;
  std::optional<YamlStream> direct = TreeFromJsonText(text, 64);
  RC_ASSERT(direct.has_value());
  absl::StatusOr<YamlStream> walked = TreeFromJson(Json::parse(text));
  RC_ASSERT(walked.ok());
  RC_ASSERT(ShapeOf(*direct) == ShapeOf(*walked));
}

TEST(TreeFromJsonTextTest, LeavesAnythingButAPlainObjectToTheValuesPath) {
  EXPECT_TRUE(TreeFromJsonText(R"({"a": [{"b": 1}], "c": {"b": 2}})", 64));
  EXPECT_TRUE(TreeFromJsonText(" {} ", 64));
  for (const char* text :
       {R"({"a": 1, "a": 2})", R"({"a": {"b": 1, "b": 1}})", "[1]", "1",
        "\"a\"", "null", "", "{", R"({"a": 1} {})", R"({"a": 1} x)",
        R"({"a": "caf\u00e9\xc3"})", R"({"a": 1e400})"}) {
    EXPECT_FALSE(TreeFromJsonText(text, 64).has_value()) << text;
  }
  // The root at depth 0: at most 2 deep is the root and one level in it.
  EXPECT_TRUE(TreeFromJsonText(R"({"a": []})", 2));
  EXPECT_FALSE(TreeFromJsonText(R"({"a": [[]]})", 2));
  EXPECT_FALSE(TreeFromJsonText(R"({"a": [{}]})", 2));
}

// What a job file can say only with escapes ("\x7f"), JSON says as the
// characters themselves: the tree has them as the file's does. (Through
// nlohmann's text they reached libyaml unescaped: refused, or a NEL folded
// into a space.)
TEST(TreeFromJsonTest, TakesCharactersYamlAllowsOnlyEscaped) {
  absl::StatusOr<YamlStream> direct =
      TreeFromJson(Json{{"id", "a\x7f\xc2\x80\xc2\x85\xef\xbf\xbe"}});
  ASSERT_THAT(direct, IsOk());
  absl::StatusOr<YamlStream> file = ParseYaml(R"("id": "a\x7f\x80\N\uFFFE")");
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(ShapeOf(*direct), ShapeOf(*file));
}

TEST(TreeFromJsonTest, RefusesInvalidUtf8) {
  for (const std::string bad :
       {"\xff", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    EXPECT_THAT(TreeFromJson(Json{{"id", bad}}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("not valid UTF-8")))
        << absl::CEscape(bad);
    EXPECT_THAT(TreeFromJson(Json{{bad, 1}}),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
  EXPECT_THAT(TreeFromJson(Json{{"id", "é€😀"}}), IsOk());
}

// A job as ParseJobFile reads its JSON text; errors as its message without
// the "<path>:<line>:<column>: " prefix.
std::string ReadAsText(const Json& json) {
  absl::StatusOr<std::vector<JobSpec>> jobs =
      ParseJobFile("body", json.dump(1));
  if (jobs.ok())
    return absl::StrCat("ok ", jobs->size(), " ", jobs->front().key.ToString());
  std::string m(jobs.status().message());
  for (int colons = 0; colons < 3 && !m.empty();) {
    if (m.front() == ':') ++colons;
    m.erase(0, 1);
  }
  m = std::string(absl::StripLeadingAsciiWhitespace(m));
  // "... is already defined at 2:2 (jobs[0])": the JSON has no places.
  if (size_t at = m.find(" defined at "); at != std::string::npos)
    m.replace(at, m.find(" (", at) - at, " defined");
  return m;
}

std::string ReadDirect(const Json& json) {
  absl::StatusOr<std::vector<JobSpec>> jobs = ParseJobJson(json);
  if (jobs.ok())
    return absl::StrCat("ok ", jobs->size(), " ", jobs->front().key.ToString());
  return std::string(jobs.status().message());
}

TEST(ParseJobJsonTest, ReadsJobsAsTheJobFileReaderReadsTheirText) {
  const Json good = Json::parse(R"({"id": "backup", "namespace": "ops",
      "schedule": "30 2 * * *", "zone": "Europe/Berlin",
      "retry": {"max_attempts": 3, "initial_backoff": "10s"},
      "labels": {"team": "data"},
      "http": {"url": "http://127.0.0.1:9/hook", "method": "POST"}})");
  absl::StatusOr<std::vector<JobSpec>> direct = ParseJobJson(good);
  ASSERT_THAT(direct, IsOk());
  absl::StatusOr<std::vector<JobSpec>> text = ParseJobFile("b", good.dump(1));
  ASSERT_THAT(text, IsOk());
  EXPECT_EQ(*direct, *text);
  EXPECT_EQ(direct->front().retry.max_attempts, 3);

  for (
      const char* body : {
          R"({"id": "a", "schedule": "* * *", "http": {"url": "http://x/"}})",
          R"({"id": "a", "schedule": "0 * * * *", "retry": {"max_attempts": 0},
               "http": {"url": "http://x/"}})",
          R"({"id": "a", "schedule": "0 * * * *", "priority": "high",
               "http": {"url": "http://x/"}})",
          R"({"id": "a", "schedule": "0 * * * *", "priority": 1.5,
               "http": {"url": "http://x/"}})",
          R"({"id": "a", "schedule": "0 * * * *", "bogus": true,
               "http": {"url": "http://x/"}})",
          R"({"id": 5, "schedule": "0 * * * *", "http": {"url": "http://x/"}})",
          R"({"id": "a", "schedule": null, "http": {"url": "http://x/"}})",
          R"({"schedule": "0 * * * *", "http": {"url": "http://x/"}})",
          R"({"jobs": [{"id": "a", "schedule": "0 * * * *",
               "http": {"url": "http://x/"}}, {"id": "b"}]})",
          R"([1, 2])",
          R"({"jobs": [{"id": "a", "schedule": "0 * * * *",
               "http": {"url": "http://x/"}}, {"id": "a",
               "schedule": "0 * * * *", "http": {"url": "http://x/"}}]})",
      }) {
    const Json json = Json::parse(body);
    EXPECT_EQ(ReadDirect(json), ReadAsText(json)) << body;
  }
}

}  // namespace
}  // namespace chime::config::internal
