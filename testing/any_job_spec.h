// A random valid JobSpec for rapidcheck properties, within what a job file
// can express (src/config/job_writer.h): every field set away from its
// default about half the time; a shell or an HTTP executor; durations in
// whole milliseconds up to the job-file reader's 10^15; times in the years
// 0000-9999 to the nanosecond. Strings are glued from StringPieces(): pieces
// that trouble YAML and JSON -- indicators (`*`, `&`, `- `, `: `, ` #`,
// ...), words YAML 1.1 types (`yes`, `null`, `1.5`), quotes, backslashes,
// line breaks, tabs, controls, NUL, non-ASCII letters, U+2028 and the other
// characters YAML escapes.
//
// Call only inside a rapidcheck property (it draws with `*gen`).
#ifndef CHIME_TESTING_ANY_JOB_SPEC_H_
#define CHIME_TESTING_ANY_JOB_SPEC_H_

#include <cstddef>
#include <string>
#include <vector>

#include "chime/job.h"

namespace chime::testing {

// The pieces strings are glued from: the first kTextPieces are text that
// YAML holds as it is (in a literal block when it spans lines); up to
// kJsonPieces, what YAML escapes; the rest is what JSON text as nlohmann's
// dump() writes it does not read back (line breaks U+0085, U+2028, U+2029;
// DEL, C1 controls, U+FFFF: job_writer.h).
const std::vector<std::string>& StringPieces();
constexpr size_t kTextPieces = 49;
constexpr size_t kJsonPieces = kTextPieces + 6;

// With `json_safe`, its strings leave out the pieces past kJsonPieces.
JobSpec AnyJobSpec(bool json_safe);

}  // namespace chime::testing

#endif  // CHIME_TESTING_ANY_JOB_SPEC_H_
