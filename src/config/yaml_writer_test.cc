// WriteYaml and YamlScalar: which strings are quoted, and the block, flow,
// literal and explicit-key forms, each read back with ParseYaml (libyaml).
// Job-level round trips of odd strings are in job_writer_test.cc.
#include "src/config/yaml_writer.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/yaml_tree.h"
#include "testing/status_matchers.h"

namespace chime::config::internal {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using Json = nlohmann::ordered_json;

TEST(YamlScalar, QuotesOnlyWhatYamlWouldMisread) {
  EXPECT_EQ(YamlScalar("Europe/Berlin", false), "Europe/Berlin");
  EXPECT_EQ(YamlScalar("https://x.test/a#b", false), "https://x.test/a#b");
  EXPECT_EQ(YamlScalar("--format=custom", false), "--format=custom");
  EXPECT_EQ(YamlScalar("90s", false), "90s");
  EXPECT_EQ(YamlScalar("caf\u00e9", false), "caf\u00e9");
  EXPECT_EQ(YamlScalar("a,b", false), "a,b");
  EXPECT_EQ(YamlScalar("a,b", true), "\"a,b\"");
  EXPECT_EQ(YamlScalar("https://x.test", true), "\"https://x.test\"");
  EXPECT_EQ(YamlScalar("", false), "\"\"");
  EXPECT_EQ(YamlScalar("yes", false), "\"yes\"");
  EXPECT_EQ(YamlScalar("Null", false), "\"Null\"");
  EXPECT_EQ(YamlScalar("1.5", false), "\"1.5\"");
  EXPECT_EQ(YamlScalar("0x1F", false), "\"0x1F\"");
  EXPECT_EQ(YamlScalar("2026-01-01", false), "\"2026-01-01\"");
  EXPECT_EQ(YamlScalar("*/5 * * * *", false), "\"*/5 * * * *\"");
  EXPECT_EQ(YamlScalar("@daily", false), "\"@daily\"");
  EXPECT_EQ(YamlScalar("- x", false), "\"- x\"");
  EXPECT_EQ(YamlScalar("---", false), "\"---\"");
  EXPECT_EQ(YamlScalar("a: b", false), "\"a: b\"");
  EXPECT_EQ(YamlScalar("a #b", false), "\"a #b\"");
  EXPECT_EQ(YamlScalar(" lead", false), "\" lead\"");
  EXPECT_EQ(YamlScalar("say \"hi\"\n", false), "\"say \\\"hi\\\"\\n\"");
  EXPECT_EQ(YamlScalar("ls\u2028del\x7f\u0085", false),
            "\"ls\\u2028del\\x7f\\x85\"");
}

// The text of `doc`'s top-level `key` after writing and parsing it again.
std::string ReadBackText(const Json& doc, const char* key) {
  absl::StatusOr<YamlStream> yaml = ParseYaml(WriteYaml(doc));
  EXPECT_THAT(yaml, IsOk()) << WriteYaml(doc);
  if (!yaml.ok() || yaml->documents().size() != 1) return "<unreadable>";
  const Node* node = yaml->documents()[0]->Find(key);
  return node != nullptr && node->IsScalar() ? std::string(node->text())
                                             : "<missing>";
}

TEST(WriteYaml, WritesLinesAsALiteralBlockWithTheirLineBreaksKept) {
  const Json doc = {{"none", "a\n  b"},
                    {"one", "a\n"},
                    {"three", "a\n\n\n"},
                    {"indented", "  a\nb"},
                    {"blank", "\n\na"}};
  EXPECT_EQ(WriteYaml(doc),
            "none: |-\n"
            "  a\n"
            "    b\n"
            "one: |\n"
            "  a\n"
            "three: |+\n"
            "  a\n"
            "\n"
            "\n"
            "indented: |2-\n"
            "    a\n"
            "  b\n"
            "blank: |2-\n"
            "\n"
            "\n"
            "  a\n");
  for (const auto& [key, value] : doc.items()) {
    EXPECT_EQ(ReadBackText(doc, key.c_str()), value) << key;
  }
}

TEST(WriteYaml, WritesSmallCollectionsInFlowStyleWithinEightyColumns) {
  const Json doc = {
      {"short", {{"a", 1}, {"b", "x y"}}},
      {"list", {"a", "b,c", 200}},
      {"empty", Json::object()},
      {"none", Json::array()},
      {"long", {{"key", std::string(70, 'x')}}},
      {"nested", {{"inner", {{"a", true}}}}},
      {"lines", {"a\nb"}},
  };
  EXPECT_EQ(WriteYaml(doc),
            "short: { a: 1, b: x y }\n"
            "list: [a, \"b,c\", 200]\n"
            "empty: {}\n"
            "none: []\n"
            "long:\n"
            "  key: " +
                std::string(70, 'x') +
                "\n"
                "nested:\n"
                "  inner: { a: true }\n"
                "lines:\n"
                "  - |-\n"
                "    a\n"
                "    b\n");
  EXPECT_THAT(ParseYaml(WriteYaml(doc)), IsOk());
}

TEST(WriteYaml, CopiesBytesThatAreNotUtf8SoThatLibyamlRefusesThem) {
  for (const char* bad : {"\xff", "a\xc3", "\xc0\x80", "\xed\xa0\x80"}) {
    EXPECT_EQ(YamlScalar(bad, false), absl::StrCat("\"", bad, "\""));
    EXPECT_THAT(ParseYaml(WriteYaml({{"v", bad}})),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << absl::CHexEscape(bad);
  }
  EXPECT_EQ(YamlScalar("\xe2\x82\xac \xf0\x9f\x98\x80", false),
            "\xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(WriteYaml, QuotesTopLevelKeysThatWouldEndTheDocument) {
  const Json doc = {{"---", "a"}, {"...", "b"}};
  EXPECT_EQ(ReadBackText(doc, "---"), "a");
  EXPECT_EQ(ReadBackText(doc, "..."), "b");
}

TEST(WriteYaml, WritesAKeyOverLibyamlsLimitAsAnExplicitKey) {
  const std::string key(1100, 'k');
  const Json doc = {{key, "v"}, {"after", "w"}};
  EXPECT_EQ(WriteYaml(doc), "? " + key + "\n: v\nafter: w\n");
  EXPECT_EQ(ReadBackText(doc, key.c_str()), "v");
  EXPECT_EQ(ReadBackText(doc, "after"), "w");
}

}  // namespace
}  // namespace chime::config::internal
