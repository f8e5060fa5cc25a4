// `chime completion bash`: the script is sourced into a real bash, which is
// then asked to complete words (COMP_WORDS/COMP_CWORD set, the completion
// function called, COMPREPLY printed).
#include "cli/completion_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chime::cli {
namespace {

using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string TempPath(const std::string& what) {
  static int calls = 0;
  return absl::StrCat(::testing::TempDir(), "/completion_", getpid(), "_",
                      ++calls, "_", what);
}

// `line` split at spaces into COMP_WORDS (a trailing space starts an empty
// word, as when TAB is pressed after it); the last word is completed by
// `function` of `script` in `bash --norc`. Returns COMPREPLY.
std::vector<std::string> Complete(const std::string& script,
                                  const std::string& function,
                                  const std::string& line) {
  const std::vector<std::string> words = absl::StrSplit(line, ' ');
  std::string array;
  for (const std::string& w : words)
    absl::StrAppend(&array, " '", absl::StrReplaceAll(w, {{"'", "'\\''"}}),
                    "'");
  const std::string script_file = TempPath("script.bash");
  const std::string driver = TempPath("driver.bash");
  const std::string out = TempPath("out");
  std::ofstream(script_file) << script;
  std::ofstream(driver) << "source '" << script_file << "' || exit 3\n"
                        << "COMP_WORDS=(" << array << ")\n"
                        << "COMP_CWORD=" << words.size() - 1 << "\n"
                        << function << " || exit 4\n"
                        << "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const std::string command =
      absl::StrCat("bash --norc --noprofile '", driver, "' > '", out, "'");
  const int rc = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << command;
  std::vector<std::string> reply;
  for (absl::string_view l : absl::StrSplit(ReadFile(out), '\n')) {
    if (!l.empty()) reply.emplace_back(l);
  }
  return reply;
}

// A tree with what the walk must handle: depth, an alias, an option group,
// a hidden command, short names, flags beside options with values.
class FakeTreeTest : public ::testing::Test {
 protected:
  FakeTreeTest() : app_("a test tool", "tool") {
    CLI::App* alpha = app_.add_subcommand("alpha", "first");
    alpha->alias("al");
    CLI::App* beta = alpha->add_subcommand("beta", "second");
    beta->add_option("--level", value_, "a value");
    CLI::App* gamma = beta->add_subcommand("gamma", "third");
    gamma->add_option("-c,--colour", value_, "a value");
    gamma->add_flag("--fast", flag_, "a flag");
    gamma->add_option("path", value_, "a positional");
    gamma->add_option_group("extra")->add_option("--extra", value_, "grouped");
    beta->add_subcommand("delta", "fourth");
    app_.add_subcommand("secret", "hidden")->group("");
    script_ = BashCompletion(app_);
  }
  std::vector<std::string> Complete(const std::string& line) {
    return cli::Complete(script_, "_tool", line);
  }

  CLI::App app_;
  std::string value_;
  bool flag_ = false;
  std::string script_;
};

TEST_F(FakeTreeTest, CompletesSubcommandsAtEveryDepth) {
  EXPECT_THAT(Complete("tool "), UnorderedElementsAre("alpha"));
  EXPECT_THAT(Complete("tool a"), UnorderedElementsAre("alpha"));
  EXPECT_THAT(Complete("tool alpha "), UnorderedElementsAre("beta"));
  EXPECT_THAT(Complete("tool alpha beta "),
              UnorderedElementsAre("gamma", "delta"));
  EXPECT_THAT(Complete("tool alpha beta g"), UnorderedElementsAre("gamma"));
  // An alias selects the command but is not offered.
  EXPECT_THAT(Complete("tool al beta d"), UnorderedElementsAre("delta"));
  // A hidden command is neither (after it, the top level again).
  EXPECT_THAT(Complete("tool s"), IsEmpty());
  EXPECT_THAT(Complete("tool secret "), UnorderedElementsAre("alpha"));
  EXPECT_THAT(Complete("tool nonsense "), UnorderedElementsAre("alpha"));
}

TEST_F(FakeTreeTest, CompletesTheOptionsOfTheCommandTyped) {
  EXPECT_THAT(Complete("tool alpha beta gamma -"),
              UnorderedElementsAre("--colour", "-c", "--fast", "--extra",
                                   "--help", "-h"));
  // No subcommands: the options, even without a dash typed.
  EXPECT_THAT(Complete("tool alpha beta gamma "),
              UnorderedElementsAre("--colour", "-c", "--fast", "--extra",
                                   "--help", "-h"));
  EXPECT_THAT(Complete("tool alpha beta --l"), UnorderedElementsAre("--level"));
  EXPECT_THAT(Complete("tool alpha beta gamma --f"),
              UnorderedElementsAre("--fast"));
  // Another command's options are not offered.
  EXPECT_THAT(Complete("tool alpha beta gamma --l"), IsEmpty());
}

TEST_F(FakeTreeTest, AnOptionsValueIsNotTakenForACommand) {
  // The value of --colour is left to the shell (file names).
  EXPECT_THAT(Complete("tool alpha beta gamma --colour "), IsEmpty());
  EXPECT_THAT(Complete("tool alpha beta gamma -c "), IsEmpty());
  // After the value, options again; the value "gamma" of --level is not the
  // command gamma.
  EXPECT_THAT(Complete("tool alpha beta gamma --colour red --f"),
              UnorderedElementsAre("--fast"));
  EXPECT_THAT(Complete("tool alpha beta --level gamma "),
              UnorderedElementsAre("gamma", "delta"));
  // A flag takes no value: the next word is completed.
  EXPECT_THAT(Complete("tool alpha beta gamma --fast --c"),
              UnorderedElementsAre("--colour"));
}

TEST(ChimeBinary, CompletionBashCoversTheWholeCommandLine) {
  const std::string out = TempPath("chime.bash"), err = TempPath("err");
  const std::string command = absl::StrCat(
      "'", CHIME_BINARY, "' completion bash > '", out, "' 2> '", err, "'");
  const int rc = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << ReadFile(err);
  const std::string script = ReadFile(out);
  EXPECT_THAT(script, HasSubstr("complete -o default -F _chime chime\n"));
  auto complete = [&](const std::string& line) {
    return Complete(script, "_chime", line);
  };

  EXPECT_THAT(complete("chime j"), UnorderedElementsAre("job"));
  const std::vector<std::string> top = complete("chime ");
  EXPECT_THAT(top, IsSupersetOf({"cron", "serve", "job", "run", "status",
                                 "namespace", "completion"}));
  const std::vector<std::string> job = complete("chime job ");
  EXPECT_THAT(job, IsSupersetOf({"list", "get", "trigger", "apply", "pause",
                                 "resume", "delete", "next"}));
  EXPECT_THAT(job, Each(Not(StartsWith("-"))));
  EXPECT_THAT(job, Not(Contains("run")));
  EXPECT_THAT(complete("chime job list --na"),
              UnorderedElementsAre("--namespace"));
  EXPECT_THAT(complete("chime job list --namespace "), IsEmpty());
  EXPECT_THAT(complete("chime run list --d"), UnorderedElementsAre("--dead"));
  EXPECT_THAT(complete("chime run list -"),
              IsSupersetOf({"--state", "--namespace", "--dead", "--limit",
                            "--server", "--token", "--json", "--help"}));
  EXPECT_THAT(complete("chime namespace "), UnorderedElementsAre("list"));
  EXPECT_THAT(complete("chime status --j"), UnorderedElementsAre("--json"));
  EXPECT_THAT(complete("chime completion "), UnorderedElementsAre("bash"));
  EXPECT_THAT(complete("chime cron "), Contains("next"));
}

}  // namespace
}  // namespace chime::cli
