#include "src/api/job_body.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/config/job_file.h"

namespace chime::api {

using Json = nlohmann::ordered_json;

namespace {

// Arrays and objects nested deeper than this are refused: copying, dumping
// and comparing JSON recurse once per level, and a 1 MiB body of '[' would
// overflow the stack. A job is at most 3 levels deep.
constexpr int kMaxDepth = 64;

// `text` parsed; a value nested deeper than kMaxDepth is left out of the
// result (kept shallow, so that it can be copied and destroyed safely) and
// sets *too_deep. With allow_exceptions, a syntax error throws.
Json Parse(absl::string_view text, bool allow_exceptions, bool* too_deep) {
  return Json::parse(
      text.begin(), text.end(),
      [too_deep](int depth, Json::parse_event_t event, Json&) {
        if (depth >= kMaxDepth && (event == Json::parse_event_t::object_start ||
                                   event == Json::parse_event_t::array_start)) {
          *too_deep = true;
          return false;
        }
        return true;
      },
      allow_exceptions);
}

// The one job of a body's jobs, or why there is not one.
absl::StatusOr<JobSpec> OneJob(absl::StatusOr<std::vector<JobSpec>> jobs) {
  if (!jobs.ok()) {
    if (jobs.status().message() == "a string is not valid UTF-8")
      return absl::InvalidArgumentError("body: a string is not valid UTF-8");
    return jobs.status();
  }
  if (jobs->size() != 1) {
    return absl::InvalidArgumentError(
        "body: one job, not a list (send each job in its own request)");
  }
  return std::move(jobs->front());
}

}  // namespace

absl::StatusOr<Json> ParseJsonObject(absl::string_view text) {
  bool too_deep = false;
  Json body = Parse(text, /*allow_exceptions=*/false, &too_deep);
  if (body.is_discarded()) {
    // Parse again for the position of the error (only on this path).
    try {
      const Json unused = Parse(text, /*allow_exceptions=*/true, &too_deep);
    } catch (const Json::exception& e) {
      std::string what = e.what();
      // "[json.exception.parse_error.101] parse error at line 1, ..."
      if (size_t p = what.find("] "); p != std::string::npos)
        what = what.substr(p + 2);
      return absl::InvalidArgumentError(
          absl::StrCat("body: not valid JSON: ", what));
    }
    return absl::InvalidArgumentError("body: not valid JSON");
  }
  if (too_deep) {
    return absl::InvalidArgumentError(absl::StrCat(
        "body: arrays and objects nested more than ", kMaxDepth, " deep"));
  }
  if (!body.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("body: a job is a JSON object, not ", body.type_name()));
  }
  return body;
}

absl::StatusOr<JobSpec> ReadJobJson(Json body, const JobKey* key) {
  if (key != nullptr) {
    for (const auto& [field, want] :
         {std::pair<const char*, const std::string*>{"id", &key->id},
          {"namespace", &key->name_space}}) {
      auto it = body.find(field);
      if (it == body.end()) {
        body[field] = *want;
      } else if (!it->is_string() || it->get<std::string>() != *want) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": ", it->dump(), " is not the path's \"", *want, "\""));
      }
    }
  }
  return OneJob(config::ParseJobJson(body));
}

absl::StatusOr<JobSpec> ReadJobText(absl::string_view text) {
  if (std::optional<absl::StatusOr<std::vector<JobSpec>>> jobs =
          config::ParseJobJsonText(text, kMaxDepth)) {
    return OneJob(*std::move(jobs));
  }
  ASSIGN_OR_RETURN(Json body, ParseJsonObject(text));
  return ReadJobJson(std::move(body), nullptr);
}

}  // namespace chime::api
