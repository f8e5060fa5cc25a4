// libFuzzer target for the REST API's job bodies (src/api/job_body.h): the
// input is a request body, read as the API reads it -- api::ParseJsonObject,
// then api::ReadJobJson without a path key (POST /v1/jobs) and with one
// (PUT /v1/jobs/{namespace}/{id}).
//
// The invariants (job_body.h's contract), for every input:
//  1. Nothing throws (an escaping exception terminates: a crash), crashes
//     or leaks (ASan/LSan).
//  2. Every error is InvalidArgument with a message (the API answers it as a
//     400 whose detail is that message).
//  3. ParseJsonObject's success is a JSON object.
//  4. ReadJobJson's success is a valid job (ValidateJobSpec) with no
//     source_file; with a path key it is that key's job.
//  5. It reads back: ReadJobJson(config::JobToJson(spec)) is the same spec
//     (what GET shows can be sent back as it is).
//  6. ReadJobText (POST's path: a plain object read from its text without
//     building the JSON value) gives the same job, or the same error, as
//     ParseJsonObject then ReadJobJson.
// A violated invariant prints the input and aborts, which libFuzzer reports
// as a crash and saves the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"
#include "nlohmann/json.hpp"
#include "src/api/job_body.h"
#include "src/config/job_writer.h"

namespace chime::fuzz {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void Fail(const char* what, absl::string_view input,
                       const std::string& detail) {
  std::fprintf(stderr,
               "job_body_fuzzer: invariant violated: %s\n  detail: %s\n"
               "  input (%zu bytes): %.*s\n",
               what, detail.c_str(), input.size(),
               static_cast<int>(std::min<size_t>(input.size(), 2000)),
               input.data());
  std::abort();
}

// 2.
void CheckError(const absl::Status& s, absl::string_view input,
                const char* where) {
  if (s.code() != absl::StatusCode::kInvalidArgument)
    Fail(where, input, "not InvalidArgument: " + s.ToString());
  if (s.message().empty()) Fail(where, input, "an empty message");
}

void CheckRead(const Json& body, const JobKey* key, absl::string_view input) {
  absl::StatusOr<JobSpec> spec = api::ReadJobJson(body, key);
  if (!spec.ok()) {
    CheckError(spec.status(), input, "ReadJobJson's error");
    return;
  }
  // 4.
  if (absl::Status s = ValidateJobSpec(*spec); !s.ok())
    Fail("ReadJobJson gave an invalid job", input, s.ToString());
  if (!spec->source_file.empty())
    Fail("ReadJobJson gave a source_file", input, spec->source_file);
  if (key != nullptr && !(spec->key == *key))
    Fail("ReadJobJson gave another job than the path's", input,
         spec->key.ToString() + " vs " + key->ToString());
  // 5.
  const Json shown = config::JobToJson(*spec);
  absl::StatusOr<JobSpec> again = api::ReadJobJson(shown, nullptr);
  if (!again.ok())
    Fail("JobToJson's output is refused", input,
         again.status().ToString() + " for " + shown.dump());
  if (!(*again == *spec))
    Fail("JobToJson's output reads as another job", input,
         shown.dump() + " vs " + config::JobToJson(*again).dump());
}

// 6.
void CheckText(const absl::StatusOr<Json>& body, absl::string_view input) {
  const absl::StatusOr<JobSpec> direct = api::ReadJobText(input);
  const absl::StatusOr<JobSpec> through =
      body.ok() ? api::ReadJobJson(*body, nullptr)
                : absl::StatusOr<JobSpec>(body.status());
  if (direct.status() != through.status())
    Fail("ReadJobText's outcome is not the value's", input,
         direct.status().ToString() + " vs " + through.status().ToString());
  if (direct.ok() && !(*direct == *through))
    Fail("ReadJobText read another job than the value's", input,
         config::JobToJson(*direct).dump() + " vs " +
             config::JobToJson(*through).dump());
}

}  // namespace
}  // namespace chime::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chime::fuzz;
  // The API takes up to 1 MiB; longer inputs only slow the search down.
  if (size > 64 * 1024) return -1;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Json> body = chime::api::ParseJsonObject(input);
  CheckText(body, input);
  if (!body.ok()) {
    CheckError(body.status(), input, "ParseJsonObject's error");
    return 0;
  }
  // 3.
  if (!body->is_object())
    Fail("ParseJsonObject gave a non-object", input, body->type_name());
  CheckRead(*body, nullptr, input);
  // With a path key: one the body does not name, and the body's own.
  const chime::JobKey other{"fuzz", "path-job"};
  CheckRead(*body, &other, input);
  chime::JobKey own;
  const auto id = body->find("id");
  const auto ns = body->find("namespace");
  if (id != body->end() && id->is_string()) own.id = id->get<std::string>();
  if (ns != body->end() && ns->is_string())
    own.name_space = ns->get<std::string>();
  if (!own.id.empty()) CheckRead(*body, &own, input);
  return 0;
}
