// Request bodies that define a job: JSON in the job-file shape (docs/jobs.md,
// config::JobToJson), read by the job-file reader (config::ParseJobJson) so
// that the API takes exactly what job files take.
//
// Every error is InvalidArgument with a message for the client, naming the
// field ("retry.max_attempts: 0 is below 1") or the position in the text
// ("body: not valid JSON: parse error at line 1, column 13: ..."). Any text
// gives an answer, never a crash or an exception (tests/fuzz/ runs a fuzz
// target over both functions).
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_API_JOB_BODY_H_
#define CHIME_SRC_API_JOB_BODY_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"
#include "nlohmann/json.hpp"

namespace chime::api {

// `text` as a JSON object. Arrays and objects nested more than 64 deep are
// refused (copying or dumping deeper JSON could overflow the stack).
absl::StatusOr<nlohmann::ordered_json> ParseJsonObject(absl::string_view text);

// The job `body` defines. `key`, when not null, is the job the request's path
// names: the body may leave out id and namespace, and must not name another
// job. The job is valid (chime::ValidateJobSpec) and has no source_file.
// `body` must be nested no deeper than ParseJsonObject allows (as is a merge
// patch of such a body onto a job's JSON).
absl::StatusOr<JobSpec> ReadJobJson(nlohmann::ordered_json body,
                                    const JobKey* key);

// The job `text` defines: ReadJobJson(ParseJsonObject(text), nullptr) -- the
// same job or the same error -- without building the JSON value of a plain
// object (config::ParseJobJsonText).
absl::StatusOr<JobSpec> ReadJobText(absl::string_view text);

}  // namespace chime::api

#endif  // CHIME_SRC_API_JOB_BODY_H_
