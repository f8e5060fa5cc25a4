#include "src/api/run_routes.h"

#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "chime/clock.h"
#include "chime/run_state.h"
#include "src/api/http_util.h"
#include "src/time/nanos.h"
#include "src/time/rfc3339.h"

namespace chime::api::internal {
namespace {

// Returns the problem for a failed Status from a handler.
#define RETURN_PROBLEM_IF_ERROR(expr)                                     \
  do {                                                                    \
    if (absl::Status _s = (expr); !_s.ok()) return ProblemFromStatus(_s); \
  } while (0)

using Json = nlohmann::ordered_json;

std::string FireId(const JobRecord& job, const FireRef& fire) {
  return FireKey{job.spec.key, fire.generation, fire.scheduled_time,
                 fire.manual}
      .ToString();
}

Json RunJson(const JobRecord& job, const RunRecord& run) {
  Json j;
  j["id"] = run.id;
  j["fire_id"] = FireId(job, run.fire);
  j["scheduled_time"] = time::FormatUtc(run.fire.scheduled_time);
  j["generation"] = run.fire.generation;
  j["manual"] = run.fire.manual;
  j["state"] = std::string(RunStateName(run.state));
  j["attempt"] = run.attempt;
  j["created_at"] = time::FormatUtc(run.created_at);
  j["updated_at"] = time::FormatUtc(run.updated_at);
  j["detail"] = run.detail;
  return j;
}

// Cursors are opaque to clients: "<nanos>_<n>[_<m>]".
std::string RunCursorText(const RunCursor& c) {
  return absl::StrCat(time::TimeToNanos(c.scheduled_time), "_", c.run);
}

absl::StatusOr<std::vector<int64_t>> CursorNumbers(absl::string_view text,
                                                   size_t count) {
  std::vector<int64_t> numbers;
  for (absl::string_view part : absl::StrSplit(text, '_')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(part, &n)) break;
    numbers.push_back(n);
  }
  if (numbers.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cursor: \"", text, "\" is not a cursor this server gave"));
  }
  return numbers;
}

absl::StatusOr<std::optional<RunState>> StateParam(const Query& q) {
  absl::StatusOr<std::optional<std::string>> text = q.One("state");
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::optional<RunState>();
  for (RunState s :
       {RunState::kPending, RunState::kRunning, RunState::kRetrying,
        RunState::kSucceeded, RunState::kFailed, RunState::kCancelled,
        RunState::kLost}) {
    if (RunStateName(s) == **text) return std::optional<RunState>(s);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "state: \"", **text,
      "\" is not one of pending, running, retrying, succeeded, failed, "
      "cancelled, lost"));
}

http::Response ListRuns(Store& store, const JobRecord& job,
                        const http::Request& request) {
  absl::StatusOr<Query> q =
      Query::Parse(request.query, {"state", "from", "to", "limit", "cursor"});
  RETURN_PROBLEM_IF_ERROR(q.status());
  RunQuery query;
  query.job = job.id;
  absl::StatusOr<std::optional<RunState>> state = StateParam(*q);
  RETURN_PROBLEM_IF_ERROR(state.status());
  query.state = *state;
  absl::StatusOr<absl::Time> from = q->Time("from", absl::InfinitePast());
  RETURN_PROBLEM_IF_ERROR(from.status());
  absl::StatusOr<absl::Time> to = q->Time("to", absl::InfiniteFuture());
  RETURN_PROBLEM_IF_ERROR(to.status());
  query.from = *from;
  query.to = *to;
  absl::StatusOr<int64_t> limit = q->Int("limit", 100, 1, 1000);
  RETURN_PROBLEM_IF_ERROR(limit.status());
  query.limit = static_cast<int>(*limit);
  absl::StatusOr<std::optional<std::string>> cursor = q->One("cursor");
  RETURN_PROBLEM_IF_ERROR(cursor.status());
  if (cursor->has_value()) {
    absl::StatusOr<std::vector<int64_t>> n = CursorNumbers(**cursor, 2);
    RETURN_PROBLEM_IF_ERROR(n.status());
    query.after =
        RunCursor{time::NanosToTime((*n)[0]), static_cast<RunId>((*n)[1])};
  }
  absl::StatusOr<RunPage> page = store.ListRuns(query, StoreDeadline());
  RETURN_PROBLEM_IF_ERROR(page.status());
  Json runs = Json::array();
  for (const RunRecord& run : page->runs) runs.push_back(RunJson(job, run));
  Json body;
  body["runs"] = std::move(runs);
  body["next_cursor"] =
      page->next.has_value() ? Json(RunCursorText(*page->next)) : Json(nullptr);
  return JsonResponse(body);
}

http::Response GetRun(Store& store, const JobRecord& job,
                      absl::string_view id_text, const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {});
  RETURN_PROBLEM_IF_ERROR(q.status());
  RunId id = 0;
  if (!absl::SimpleAtoi(id_text, &id) || id == 0) {
    return Problem(404, absl::StrCat("no run ", id_text, " of job ",
                                     job.spec.key.ToString()));
  }
  absl::StatusOr<RunDetail> detail = store.GetRun(id, StoreDeadline());
  if ((detail.ok() && detail->run.fire.job != job.id) ||
      absl::IsNotFound(detail.status())) {
    return Problem(
        404, absl::StrCat("no run ", id, " of job ", job.spec.key.ToString()));
  }
  RETURN_PROBLEM_IF_ERROR(detail.status());
  Json body = RunJson(job, detail->run);
  Json& attempts = body["attempts"] = Json::array();
  for (const AttemptRecord& a : detail->attempts) {
    Json j;
    j["number"] = a.number;
    j["started_at"] = time::FormatUtc(a.started_at);
    j["finished_at"] = TimeOrNull(a.finished_at);
    j["outcome"] = std::string(RunStateName(a.outcome));
    j["exit_code"] = a.exit_code;
    j["detail"] = a.detail;
    j["output"] = a.output;
    j["output_truncated"] = a.output_truncated;
    attempts.push_back(std::move(j));
  }
  Json& transitions = body["transitions"] = Json::array();
  for (const TransitionRecord& t : detail->transitions) {
    Json j;
    j["from"] = std::string(RunStateName(t.from));
    j["to"] = std::string(RunStateName(t.to));
    j["attempt"] = t.attempt;
    j["at"] = time::FormatUtc(t.at);
    j["detail"] = t.detail;
    transitions.push_back(std::move(j));
  }
  return JsonResponse(body);
}

http::Response ListMissed(Store& store, const JobRecord& job,
                          const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {"limit", "cursor"});
  RETURN_PROBLEM_IF_ERROR(q.status());
  absl::StatusOr<int64_t> limit = q->Int("limit", 100, 1, 1000);
  RETURN_PROBLEM_IF_ERROR(limit.status());
  absl::StatusOr<std::optional<std::string>> cursor = q->One("cursor");
  RETURN_PROBLEM_IF_ERROR(cursor.status());
  std::optional<MissedCursor> after;
  if (cursor->has_value()) {
    absl::StatusOr<std::vector<int64_t>> n = CursorNumbers(**cursor, 3);
    RETURN_PROBLEM_IF_ERROR(n.status());
    if ((*n)[1] < 0 || (*n)[1] > static_cast<int64_t>(MissReason::kFenced)) {
      return Problem(400, absl::StrCat("cursor: \"", **cursor,
                                       "\" is not a cursor this server gave"));
    }
    after = MissedCursor{time::NanosToTime((*n)[0]),
                         static_cast<MissReason>((*n)[1]), (*n)[2]};
  }
  absl::StatusOr<MissedPage> page = store.ListMissed(
      job.id, after, static_cast<int>(*limit), StoreDeadline());
  RETURN_PROBLEM_IF_ERROR(page.status());
  Json missed = Json::array();
  for (const MissedRecord& m : page->records) {
    Json j;
    j["reason"] = std::string(MissReasonName(m.reason));
    j["generation"] = m.generation;
    j["first"] = time::FormatUtc(m.first);
    j["last"] = time::FormatUtc(m.last);
    j["count"] = m.count;
    j["count_capped"] = m.count_capped;
    missed.push_back(std::move(j));
  }
  Json body;
  body["missed"] = std::move(missed);
  body["next_cursor"] =
      page->next.has_value()
          ? Json(absl::StrCat(time::TimeToNanos(page->next->first), "_",
                              static_cast<int>(page->next->reason), "_",
                              page->next->generation))
          : Json(nullptr);
  return JsonResponse(body);
}

#undef RETURN_PROBLEM_IF_ERROR

}  // namespace

http::Response JobHistory(Store& store, const JobRecord& job,
                          const std::vector<std::string>& rest,
                          const http::Request& request) {
  if (rest.size() == 1 && rest[0] == "runs")
    return ListRuns(store, job, request);
  if (rest.size() == 2 && rest[0] == "runs")
    return GetRun(store, job, rest[1], request);
  if (rest.size() == 1 && rest[0] == "missed")
    return ListMissed(store, job, request);
  return Problem(404, absl::StrCat("no such resource: ", request.path));
}

}  // namespace chime::api::internal
