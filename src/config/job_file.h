// Job files: the YAML files in the daemon's jobs directory, each defining one
// or more jobs (docs/jobs.md is the reference for the format).
//
// `chime serve` calls LoadJobDir at start and on every reload. A file is
// accepted or rejected as a whole: a broken file yields its error and none of
// its jobs, so the daemon can keep the previous version of that file in force
// while the other files load. Errors are InvalidArgument with a message that
// points into the file and names the field as the file spells it:
//
//   jobs/a.yaml:8:28: jobs[1].retry.max_attempts: 0 is below 1
//   jobs/a.yaml:5:24: jobs[0].overlap.policy: "skp" is not one of allow,
//       skip, buffer_one, buffer_all, replace
//   jobs/b.yaml:2:1: job "ops/backup" is already defined at
//       jobs/a.yaml:5:5 (jobs[1])
//
// Lines and columns are 1-based. Every job is checked with
// chime::ValidateJobSpec, so an accepted job is a valid JobSpec; a file may
// not set a field the model does not have, and typos in keys are errors.
//
// Thread-safety: no shared state; every function may be called concurrently.
// LoadJobDir reads whatever the directory holds at the moment it looks.
#ifndef CHIME_SRC_CONFIG_JOB_FILE_H_
#define CHIME_SRC_CONFIG_JOB_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"
#include "nlohmann/json.hpp"

namespace chime::config {

// A job read from a file, and where the file defines it.
struct FileJob {
  JobSpec spec;
  int line = 0;  // 1-based line and column of the job's mapping
  int column = 0;
  std::string field_path;  // "jobs[2]"; "" when the file is a single job

  friend bool operator==(const FileJob&, const FileJob&) = default;
};

// Parses the text of one job file, using `path_for_messages` only in error
// messages. The file is either one job mapping, or a mapping with the single
// key `jobs` holding a list of job mappings; an empty file has no jobs. On
// success returns the jobs in file order, each valid and with a key (namespace
// and id) unique in the file. On failure returns InvalidArgument
// "<path_for_messages>:<line>:<column>: <field path>: <message>" for the first
// problem found: YAML syntax, an unknown or repeated key, a value of the wrong
// type or outside its choices, a missing id, schedule or executor,
// ValidateJobSpec's objection, or a key defined twice.
absl::StatusOr<std::vector<FileJob>> ParseJobFileWithLocations(
    absl::string_view path_for_messages, absl::string_view text);

// ParseJobFileWithLocations without the locations.
absl::StatusOr<std::vector<JobSpec>> ParseJobFile(
    absl::string_view path_for_messages, absl::string_view text);

// The jobs of `json`, a value in the job-file shape: as ParseJobFile would
// read the JSON's text (JSON is YAML), without printing and parsing it.
// Errors are InvalidArgument "<field path>: <message>" (no position: the
// value has none), or "a string is not valid UTF-8".
absl::StatusOr<std::vector<JobSpec>> ParseJobJson(
    const nlohmann::ordered_json& json);

// ParseJobJson of the value `text` parses to, without building that value,
// when the text is one plain JSON object (internal::TreeFromJsonText: nested
// at most `max_depth` deep, no key twice in an object); nullopt otherwise,
// when the caller parses the value and calls ParseJobJson (which also says
// where a text that is not JSON is wrong).
std::optional<absl::StatusOr<std::vector<JobSpec>>> ParseJobJsonText(
    absl::string_view text, int max_depth);

// The outcome of one file of a jobs directory.
struct FileResult {
  std::string path;  // the directory joined with the file name
  // The file's jobs, or why the file was rejected (it could not be read, does
  // not parse, or defines a key that an earlier file already defines).
  absl::StatusOr<std::vector<FileJob>> jobs;
};

// Reads the job files in `dir`: the regular files (or links to them) whose
// names end in ".yaml" or ".yml" and do not start with "."; not
// subdirectories. Returns one FileResult per file, sorted by name, after
// RejectDuplicateKeys. Fails only when the directory itself cannot be listed
// (NotFound, PermissionDenied, ...); a file that cannot be read is reported in
// its FileResult. Files are parsed on up to 8 threads (one per CPU).
absl::StatusOr<std::vector<FileResult>> LoadJobDir(absl::string_view dir);

// Makes job keys unique across files: going through `files` in order, a file
// that defines a key already defined by an earlier accepted file is rejected
// with an InvalidArgument error naming both places,
//   "b.yaml:4:5: jobs[0]: job \"ops/backup\" is already defined at
//    a.yaml:2:5 (jobs[1])".
// Files that were already rejected take no part: their keys are unknown, so a
// daemon that keeps an old version of such a file in force must check that
// version's keys itself.
void RejectDuplicateKeys(std::vector<FileResult>* files);

// The whole of a file; errors name the path and the errno's meaning.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace chime::config

#endif  // CHIME_SRC_CONFIG_JOB_FILE_H_
