// A JobSpec written as a job file: the inverse of the job-file reader
// (job_file.h; docs/jobs.md is the format). The REST API and `chime job get`
// show a job in this shape, so what a user sees is what they could write.
//
// JobToJson gives one job as a JSON object with the keys and value forms of
// the file format, in the order docs/jobs.md lists them; JobToYaml gives the
// same content as block-style YAML text, as the docs write it:
//
//   id: nightly
//   namespace: ops
//   schedule: "30 2 * * *"
//   zone: Europe/Berlin
//   dst: { gap: skip, repeat: twice }
//   retry: { max_attempts: 4, initial_backoff: 10s }
//   shell: { command: /opt/nightly.sh }
//
// Only fields that differ from a default-constructed JobSpec are written, but
// `id` and the trigger (`schedule`, or `at` for a one-shot job) always are;
// `namespace` is left out when it is "default". Values are written as:
//   durations   "1h30m", "1s500ms", "0s", "unlimited" (days, hours,
//               minutes, seconds and milliseconds, largest first)
//   times       RFC 3339 in UTC with up to nine fraction digits
//               ("2026-12-24T18:00:00.25Z")
//   sizes       "64KiB", "1MiB", "1GiB" when a whole multiple, else a number
//               of bytes
//   statuses    409 for a single status, "200-299" for a range
//   choices     their names in the file ("run_once", "at_least_once")
//   executors   always a mapping `shell: {...}` or `http: {...}`; policies
//               always a mapping, never the scalar short forms
//
// The contract: for every JobSpec `s` that ValidateJobSpec accepts and that a
// job file can express (below), ParseJobFile reads JobToYaml(s), and also
// JobToJson(s).dump() (JSON is YAML's flow style), back as a spec equal to
// `s`. A spec the format cannot express is still written, as truthfully as
// the format allows, so that the reader rejects it rather than reading a
// different spec; the exceptions are marked "silently" below.
//
// What a job file cannot express, although the model allows it:
//   - a function executor (ExecutorSpec::Kind::kFunction): no `shell` or
//     `http` key is written (the reader asks for one), and non-default shell
//     or http fields of such a spec are left out;
//   - fields of the unused trigger kind or executor (`at` of a schedule job,
//     a zone for a one-shot job, http fields of a shell job): written, and
//     the reader rejects the combination;
//   - durations below a millisecond or not a whole number of them, negative
//     ones, ones over the reader's limit (10^15 ms), and infinite ones except
//     where the reader takes "unlimited" (misfire threshold and
//     catchup_window, retry max_backoff and max_retry_duration, timeout
//     attempt and grace): written in absl::FormatDuration's form ("1.5ms")
//     or as "unlimited", which the reader rejects;
//   - times outside the years 0000-9999 (written as absl::FormatTime does,
//     rejected); silently, the part of a time below a nanosecond (absl::Time
//     holds quarter nanoseconds): it is dropped, as time::FormatUtc does;
//   - strings that are not valid UTF-8 (YAML and JSON texts are Unicode):
//     JobToYaml writes the bytes as they are and the reader rejects the text;
//     JobToJson(s).dump() throws nlohmann::json::type_error (316).
//
// JSON text is read back as nlohmann's dump() writes it (compact or
// indented, without ensure_ascii), except where libyaml (YAML 1.1) parts
// from JSON:
//   - U+0085 (NEL), U+2028 and U+2029 are line breaks to YAML, and dump()
//     leaves them raw: in a string, YAML drops the white space before them
//     and reads U+0085 as a space (silently); a mapping key (a label) holding
//     one is rejected;
//   - DEL, the C1 controls U+0080-U+009F and U+FFFE/U+FFFF are left raw by
//     dump() and rejected by libyaml;
//   - a mapping key (a label, env or header name) over 1024 characters is
//     rejected by libyaml;
//   - dump() with ensure_ascii writes characters beyond U+FFFF as surrogate
//     pairs ("\ud83d\ude00"), which libyaml rejects.
// JobToYaml has none of these limits: it escapes what YAML would misread.
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_CONFIG_JOB_WRITER_H_
#define CHIME_SRC_CONFIG_JOB_WRITER_H_

#include <string>

#include "chime/job.h"
#include "nlohmann/json.hpp"
#include "src/config/json_out.h"

namespace chime::config {

// One job as a JSON object in the job-file format (above). Keys keep the
// order of docs/jobs.md: id, namespace, schedule, at, zone, dialect,
// day_match, dst, start, end, jitter, misfire, overlap, retry, timeout,
// delivery, priority, labels, paused, shell, http; nested keys likewise.
// Never fails.
nlohmann::ordered_json JobToJson(const JobSpec& spec);

// The same object written to `out` (JobToJson is this into a JsonTreeOut):
// one complete value, in the same order.
void WriteJobJson(const JobSpec& spec, JsonOut& out);

// The same job as YAML text: one block mapping, ending in a newline. Strings
// are written plain where YAML reads them as themselves and no YAML reader
// would take them for another type; otherwise double-quoted with escapes,
// or, when they span lines, as literal blocks (`|`). Small mappings and lists
// of scalars are written in flow style (`{ gap: skip }`, `[a, b]`) when the
// line stays within 80 columns. Never fails.
std::string JobToYaml(const JobSpec& spec);

}  // namespace chime::config

#endif  // CHIME_SRC_CONFIG_JOB_WRITER_H_
