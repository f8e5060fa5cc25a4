// Property tests of job_writer.h's contract: a random valid JobSpec, written
// by JobToYaml or by JobToJson(...).dump(), reads back with ParseJobFile as
// a spec equal to it.
//
// The specs come from testing/any_job_spec.h. The JSON property leaves out
// the characters that nlohmann's dump() leaves raw and YAML does not read as
// themselves (job_writer.h).
//
// Each property runs rapidcheck's default 100 cases; RC_PARAMS="max_success=
// 2000" runs more, and a failure prints a `reproduce` string for RC_PARAMS.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "src/config/job_file.h"
#include "src/config/job_writer.h"
#include "testing/any_job_spec.h"

namespace chime::config {
namespace {

// `text` reads back as `spec`.
void CheckReadsBackAs(const std::string& text, const JobSpec& spec) {
  absl::StatusOr<std::vector<JobSpec>> back = ParseJobFile("job.yaml", text);
  if (!back.ok()) RC_FAIL(back.status().ToString());
  RC_ASSERT(back->size() == 1u);
  if (!(back->front() == spec)) {
    RC_FAIL(absl::StrCat("read back as\n", JobToYaml(back->front()),
                         "instead of\n", JobToYaml(spec)));
  }
}

TEST(JobWriterProperty, PiecesAreCountedRight) {
  EXPECT_EQ(testing::StringPieces()[testing::kTextPieces - 1], "\U0001F600");
  EXPECT_EQ(testing::StringPieces()[testing::kJsonPieces - 1], "\ufeff");
}

RC_GTEST_PROP(JobWriterProperty, YamlReadsBackAsTheSpec, ()) {
  const JobSpec spec = testing::AnyJobSpec(/*json_safe=*/false);
  RC_ASSERT(ValidateJobSpec(spec).ok());
  const std::string yaml = JobToYaml(spec);
  RC_LOG() << yaml;
  RC_CLASSIFY(absl::StrContains(yaml, ": |") || absl::StrContains(yaml, "- |"),
              "a literal block");
  RC_CLASSIFY(absl::StrContains(yaml, "\\u"), "an escape \\u");
  CheckReadsBackAs(yaml, spec);
}

RC_GTEST_PROP(JobWriterProperty, JsonReadsBackAsTheSpec, ()) {
  const JobSpec spec = testing::AnyJobSpec(/*json_safe=*/true);
  RC_ASSERT(ValidateJobSpec(spec).ok());
  const std::string json = JobToJson(spec).dump();
  RC_LOG() << json;
  CheckReadsBackAs(json, spec);
  // Indented JSON is block YAML holding flow collections: it reads too.
  CheckReadsBackAs(JobToJson(spec).dump(2), spec);
}

}  // namespace
}  // namespace chime::config
