// A compact, versioned binary encoding of JobSpec, for stores that keep a job
// as one value (SqliteStore's jobs.spec column).
//
// Layout: a format byte (kJobSpecFormat), then every field in declaration
// order: integers as 8-byte little-endian, strings as a 4-byte length and the
// bytes, times and durations as int64 nanoseconds (infinities as the int64
// extremes), enums as one byte. A new field goes at the end under a new format
// number; decoders keep reading every older format.
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_STORE_JOB_CODEC_H_
#define CHIME_SRC_STORE_JOB_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"

namespace chime::store {

// 1: up to `paused`; 2: adds `executor`.
inline constexpr char kJobSpecFormat = 2;

std::string EncodeJobSpec(const JobSpec& spec);
// DataLoss, saying where, if `bytes` is not an encoding this binary knows.
absl::StatusOr<JobSpec> DecodeJobSpec(absl::string_view bytes);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_JOB_CODEC_H_
