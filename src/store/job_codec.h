// The stored form of a JobSpec, for stores that keep a job as one value
// (SqliteStore's jobs.spec column): a format byte, then the spec.
//
// Format 3 (written now) is the packed spec (src/core/packed_spec.h): only
// fields away from their defaults, each tagged with its number. Formats 1 and
// 2 (every field in declaration order: integers as 8-byte little-endian,
// strings as a 4-byte length and the bytes, times and durations as int64
// nanoseconds, enums as one byte; 2 added the executor) are still read.
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_STORE_JOB_CODEC_H_
#define CHIME_SRC_STORE_JOB_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"

namespace chime::store {

// 1: up to `paused`; 2: adds `executor`; 3: packed.
inline constexpr char kJobSpecFormat = 3;

std::string EncodeJobSpec(const JobSpec& spec);
// DataLoss, saying where, if `bytes` is not an encoding this binary knows.
absl::StatusOr<JobSpec> DecodeJobSpec(absl::string_view bytes);

// Format 2, as binaries before format 3 wrote it: for tests that old data
// still reads.
std::string EncodeJobSpecFormat2(const JobSpec& spec);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_JOB_CODEC_H_
