// The YAML tree under the job files: kinds, marks, aliases, syntax errors;
// and what the job files make of aliases and odd scalars.
#include "src/config/yaml_tree.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/job_file.h"
#include "testing/status_matchers.h"

namespace chime::config {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using internal::Node;
using internal::ParseYaml;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(YamlTree, KeepsKindsTextPlainnessAndZeroBasedMarks) {
  auto yaml = ParseYaml("a: yes\nb: 'null'\nc: [x, ~]\nd:\ne: {f: 1}\n");
  ASSERT_THAT(yaml, IsOk());
  ASSERT_EQ(yaml->documents().size(), 1u);
  const Node& root = *yaml->documents()[0];
  ASSERT_TRUE(root.IsMapping());
  ASSERT_EQ(root.size(), 5u);
  EXPECT_EQ(root.value(0).text(), "yes");  // no YAML 1.1 booleans
  EXPECT_TRUE(root.value(0).plain());
  EXPECT_TRUE(root.value(1).IsScalar());  // quoted "null" is text
  EXPECT_EQ(root.value(1).text(), "null");
  EXPECT_FALSE(root.value(1).plain());
  const Node& c = root.value(2);
  ASSERT_TRUE(c.IsSequence());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.item(0).text(), "x");
  EXPECT_TRUE(c.item(1).IsNull());
  EXPECT_EQ(c.mark().line, 2);
  EXPECT_EQ(c.mark().column, 3);
  EXPECT_TRUE(root.value(3).IsNull());  // `d:` with nothing after it
  EXPECT_EQ(root.key(4).mark().line, 4);
  ASSERT_NE(root.Find("e"), nullptr);
  EXPECT_EQ(root.Find("e")->Find("f")->text(), "1");
  EXPECT_EQ(root.Find("g"), nullptr);
}

TEST(YamlTree, NullIsOnlyAnUntaggedPlainNullWord) {
  auto yaml = ParseYaml("[~, null, Null, NULL, nULL, \"~\", !!str null, '']");
  ASSERT_THAT(yaml, IsOk());
  const Node& list = *yaml->documents()[0];
  std::vector<bool> nulls;
  for (size_t i = 0; i < list.size(); ++i) {
    nulls.push_back(list.item(i).IsNull());
  }
  EXPECT_THAT(nulls,
              ElementsAre(true, true, true, true, false, false, false, false));
}

TEST(YamlTree, KeepsRepeatedKeysForTheReaderToReport) {
  auto yaml = ParseYaml("{a: 1, a: 2}");
  ASSERT_THAT(yaml, IsOk());
  const Node& m = *yaml->documents()[0];
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.value(1).text(), "2");
  EXPECT_EQ(m.Find("a")->text(), "1");
}

TEST(YamlTree, AnAliasIsTheAnchoredNode) {
  auto yaml = ParseYaml("a: &x {k: v}\nb: *x\n");
  ASSERT_THAT(yaml, IsOk());
  const Node& root = *yaml->documents()[0];
  EXPECT_EQ(&root.value(0), &root.value(1));
  EXPECT_EQ(root.value(1).mark().line, 0);  // where the anchor's value is
}

TEST(YamlTree, BadAliasesAreErrors) {
  EXPECT_THAT(ParseYaml("a: *nowhere\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "1:4: invalid YAML: the referenced anchor is not "
                       "defined (quote a value that starts with *, e.g. "
                       "schedule: \"*/5 * * * *\")"));
  EXPECT_THAT(ParseYaml("&a [1, *a]\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "1:8: invalid YAML: the alias *a refers to a value "
                       "that contains it (quote a value that starts with *, "
                       "e.g. schedule: \"*/5 * * * *\")"));
  // Anchors belong to their document.
  EXPECT_THAT(ParseYaml("&a 1\n---\n*a\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3:1:")));
}

TEST(YamlTree, DocumentsAndEmptyTexts) {
  auto none = ParseYaml("# nothing\n");
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->documents().empty());
  auto two = ParseYaml("a\n---\n---\nb\n");
  ASSERT_THAT(two, IsOk());
  ASSERT_EQ(two->documents().size(), 3u);
  EXPECT_TRUE(two->documents()[1]->IsNull());
  EXPECT_EQ(two->documents()[2]->text(), "b");
}

TEST(YamlTree, SyntaxErrorsSayWhereAfterMultibyteCharacters) {
  // Columns count characters; "ü" is one.
  EXPECT_THAT(ParseYaml("ü: @x\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "1:4: invalid YAML: unknown token (quote a value that "
                       "starts with @, e.g. schedule: \"*/5 * * * *\")"));
  EXPECT_THAT(ParseYaml("a: b: c\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "1:5: invalid YAML: mapping values are not allowed in "
                       "this context"));
  EXPECT_THAT(ParseYaml("a: 1\n  b: 2\n x\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid YAML: ")));
  EXPECT_THAT(ParseYaml("a: \"x\xff\"\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "1:6: invalid YAML: invalid leading UTF-8 octet"));
}

TEST(YamlTree, AStandaloneScalarIsNeverNull) {
  const Node n = Node::Scalar("null");
  EXPECT_TRUE(n.IsScalar());
  EXPECT_EQ(n.text(), "null");
  EXPECT_EQ(n.size(), 0u);
}

// Job files: anchors let jobs share a policy, and an alias reads as a copy.
TEST(ParseJobFile, AliasesShareValues) {
  auto jobs = ParseJobFile("a.yaml", R"yaml(
jobs:
  - id: a
    schedule: "@hourly"
    retry: &patient { max_attempts: 9, initial_backoff: 1m }
    shell: &cmd [backup, --all]
  - id: b
    schedule: "@daily"
    retry: *patient
    shell: *cmd
)yaml");
  ASSERT_THAT(jobs, IsOk());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[1].retry.max_attempts, 9);
  EXPECT_EQ((*jobs)[1].retry.initial_backoff, absl::Minutes(1));
  EXPECT_THAT((*jobs)[1].executor.shell.argv, ElementsAre("backup", "--all"));
}

TEST(ParseJobFile, AnErrorInAnAliasedValuePointsAtTheAnchor) {
  EXPECT_THAT(
      ParseJobFile("a.yaml",
                   "jobs:\n"
                   "  - {id: a, schedule: '@daily', shell: x, timeout: &t 1m}\n"
                   "  - {id: b, schedule: '@daily', shell: x, priority: *t}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "a.yaml:2:52: jobs[1].priority: expected a whole number, got "
               "\"1m\""));
}

TEST(ParseJobFile, OddScalarsKeepTheirText) {
  auto jobs = ParseJobFile("a.yaml",
                           "id: '007'\n"
                           "schedule: '@daily'\n"
                           "labels: {on: yes, n: 0x1F, v: 1.10, e: '', z: "
                           "\"null\"}\n"
                           "shell: |\n"
                           "  echo a\n"
                           "  echo b\n");
  ASSERT_THAT(jobs, IsOk());
  const JobSpec& job = (*jobs)[0];
  EXPECT_EQ(job.key.id, "007");
  EXPECT_EQ(job.executor.shell.command, "echo a\necho b\n");
  EXPECT_EQ(job.labels.at("on"), "yes");
  EXPECT_EQ(job.labels.at("n"), "0x1F");
  EXPECT_EQ(job.labels.at("v"), "1.10");
  EXPECT_EQ(job.labels.at("e"), "");
  EXPECT_EQ(job.labels.at("z"), "null");
  EXPECT_THAT(ParseJobFile("a.yaml", "id: a\nschedule: ~\nshell: x\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "a.yaml:2:1: schedule: expected a string, got "
                       "nothing"));
}

}  // namespace
}  // namespace chime::config
