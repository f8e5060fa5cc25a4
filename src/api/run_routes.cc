#include "src/api/run_routes.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "chime/clock.h"
#include "chime/run_state.h"
#include "src/api/http_util.h"
#include "src/api/json_writer.h"
#include "src/time/nanos.h"
#include "src/time/rfc3339.h"

namespace chime::api::internal {
namespace {

using Json = nlohmann::ordered_json;

// A listing of every job's runs reads at most this many runs per request
// when it filters them by namespace; a page may come back short, with a
// cursor to go on from (as GET /v1/jobs does).
constexpr int kMaxScannedPerRequest = 20'000;
constexpr int kScanPage = 256;

// Writes the members of a run as every route shows it (its job by
// run.job_key), without the braces: callers add their own members.
void WriteRunMembers(JsonWriter& w, const RunRecord& run) {
  w.Key("id").Uint(run.id);
  w.Key("fire_id").String(FireKey{run.job_key, run.fire.generation,
                                  run.fire.scheduled_time, run.fire.manual}
                              .ToString());
  w.Key("scheduled_time").Time(run.fire.scheduled_time);
  w.Key("generation").Int(run.fire.generation);
  w.Key("manual").Bool(run.fire.manual);
  w.Key("state").String(RunStateName(run.state));
  w.Key("attempt").Int(run.attempt);
  w.Key("created_at").Time(run.created_at);
  w.Key("updated_at").Time(run.updated_at);
  w.Key("detail").String(run.detail);
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

// The filters and the page of a run listing from its query parameters:
// state (when `with_state`), from, to (scheduled time in [from, to)), limit
// and cursor.
absl::StatusOr<RunQuery> RunQueryParams(const Query& q, bool with_state) {
  RunQuery query;
  if (with_state) {
    absl::StatusOr<std::optional<RunState>> state = StateParam(q);
    if (!state.ok()) return state.status();
    query.state = *state;
  }
  absl::StatusOr<absl::Time> from = q.Time("from", absl::InfinitePast());
  if (!from.ok()) return from.status();
  absl::StatusOr<absl::Time> to = q.Time("to", absl::InfiniteFuture());
  if (!to.ok()) return to.status();
  query.from = *from;
  query.to = *to;
  absl::StatusOr<int64_t> limit = q.Int("limit", 100, 1, 1000);
  if (!limit.ok()) return limit.status();
  query.limit = static_cast<int>(*limit);
  absl::StatusOr<std::optional<std::string>> cursor = q.One("cursor");
  if (!cursor.ok()) return cursor.status();
  if (cursor->has_value()) {
    absl::StatusOr<std::vector<int64_t>> n = CursorNumbers(**cursor, 2);
    if (!n.ok()) return n.status();
    query.after =
        RunCursor{time::NanosToTime((*n)[0]), static_cast<RunId>((*n)[1])};
  }
  return query;
}

// A run page's body, {"runs":[...],"next_cursor":...}, written as the runs
// are read: the constructor writes up to the array, the caller each run,
// Finish the rest.
class PageWriter {
 public:
  // `runs`: how many the page will likely hold (about 400 bytes each).
  explicit PageWriter(size_t runs) {
    body_.reserve(64 + runs * 512);
    w_.BeginObject().Key("runs").BeginArray();
  }

  JsonWriter& writer() { return w_; }

  // The page, answered; `next` is its next_cursor (null if none).
  http::Response Finish(const std::optional<RunCursor>& next) && {
    w_.EndArray().Key("next_cursor");
    if (next.has_value()) {
      w_.String(RunCursorText(*next));
    } else {
      w_.Null();
    }
    w_.EndObject();
    return JsonTextResponse(std::move(body_));
  }

 private:
  std::string body_;
  JsonWriter w_{&body_};
};

// The parameters of a job's run listing.
const std::vector<std::string>& RunListParams() {
  static const auto* const params =
      new std::vector<std::string>{"state", "from", "to", "limit", "cursor"};
  return *params;
}

// GET /v1/runs's, and GET /v1/dead-letters' (no state).
const std::vector<std::string>& AllRunsParams() {
  static const auto* const params = new std::vector<std::string>{
      "namespace", "from", "to", "limit", "cursor", "state"};
  return *params;
}
const std::vector<std::string>& DeadLetterParams() {
  static const auto* const params = new std::vector<std::string>{
      "namespace", "from", "to", "limit", "cursor"};
  return *params;
}

http::Response ListRuns(Store& store, const JobRecord& job,
                        const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, RunListParams());
  RETURN_PROBLEM_IF_ERROR(q.status());
  absl::StatusOr<RunQuery> query = RunQueryParams(*q, /*with_state=*/true);
  RETURN_PROBLEM_IF_ERROR(query.status());
  query->job = job.id;
  absl::StatusOr<RunPage> page = store.ListRuns(*query, StoreDeadline());
  RETURN_PROBLEM_IF_ERROR(page.status());
  PageWriter out(page->runs.size());
  for (const RunRecord& run : page->runs) {
    out.writer().BeginObject();
    WriteRunMembers(out.writer(), run);
    out.writer().EndObject();
  }
  return std::move(out).Finish(page->next);
}

// GET /v1/runs (`dead_letters` false) and GET /v1/dead-letters (true: failed
// runs only, no state parameter). A namespace filter is applied to the
// store's pages: it reads on until the page is full, the runs end or it has
// read kMaxScannedPerRequest runs; the cursor is the last run it looked at,
// so a page may be short (even empty) and still have a next_cursor.
http::Response ListAllRuns(Store& store, const http::Request& request,
                           bool dead_letters) {
  absl::StatusOr<Query> q = Query::Parse(
      request.query, dead_letters ? DeadLetterParams() : AllRunsParams());
  RETURN_PROBLEM_IF_ERROR(q.status());
  absl::StatusOr<RunQuery> query = RunQueryParams(*q, !dead_letters);
  RETURN_PROBLEM_IF_ERROR(query.status());
  if (dead_letters) query->state = RunState::kFailed;
  absl::StatusOr<std::optional<std::string>> ns = q->One("namespace");
  RETURN_PROBLEM_IF_ERROR(ns.status());
  const size_t limit = static_cast<size_t>(query->limit);
  PageWriter out(limit);
  JsonWriter& w = out.writer();
  size_t runs = 0;  // written
  std::string path;
  std::optional<RunCursor> last;  // the last run looked at
  bool done = false;
  for (int scanned = 0; scanned < kMaxScannedPerRequest;) {
    const int want = static_cast<int>(limit - runs);
    query->limit = ns->has_value() ? std::max(want, kScanPage) : want;
    absl::StatusOr<RunPage> page = store.ListRuns(*query, StoreDeadline());
    RETURN_PROBLEM_IF_ERROR(page.status());
    for (size_t i = 0; i < page->runs.size() && runs < limit; ++i) {
      const RunRecord& run = page->runs[i];
      ++scanned;
      last = RunCursor{run.fire.scheduled_time, run.id};
      if (ns->has_value() && run.job_key.name_space != **ns) continue;
      w.BeginObject();
      WriteRunMembers(w, run);
      w.Key("job").String(run.job_key.ToString());
      path.clear();
      absl::StrAppend(&path, "/v1/jobs/", run.job_key.name_space, "/",
                      run.job_key.id, "/runs/", run.id);
      w.Key("run").String(path);
      w.EndObject();
      ++runs;
      // The store's last run ends the listing if it has no more.
      if (runs == limit && i + 1 == page->runs.size() && !page->next)
        done = true;
    }
    if (runs == limit) break;
    if (!page->next) {
      done = true;
      break;
    }
    query->after = page->next;
  }
  return std::move(out).Finish(done ? std::nullopt : last);
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
  std::string body;
  JsonWriter w(&body);
  w.BeginObject();
  WriteRunMembers(w, detail->run);
  w.Key("attempts").BeginArray();
  for (const AttemptRecord& a : detail->attempts) {
    w.BeginObject();
    w.Key("number").Int(a.number);
    w.Key("started_at").Time(a.started_at);
    w.Key("finished_at").TimeOrNull(a.finished_at);
    w.Key("outcome").String(RunStateName(a.outcome));
    w.Key("exit_code").Int(a.exit_code);
    w.Key("detail").String(a.detail);
    w.Key("output").String(a.output);
    w.Key("output_truncated").Bool(a.output_truncated);
    w.EndObject();
  }
  w.EndArray().Key("transitions").BeginArray();
  for (const TransitionRecord& t : detail->transitions) {
    w.BeginObject();
    w.Key("from").String(RunStateName(t.from));
    w.Key("to").String(RunStateName(t.to));
    w.Key("attempt").Int(t.attempt);
    w.Key("at").Time(t.at);
    w.Key("detail").String(t.detail);
    w.EndObject();
  }
  w.EndArray().EndObject();
  return JsonTextResponse(std::move(body));
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
    if ((*n)[1] < 0 || (*n)[1] > static_cast<int64_t>(kLastMissReason)) {
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

bool BoundedRunPage(const http::Request& request) {
  constexpr absl::string_view kPrefix = "/v1/jobs/";
  absl::string_view path = request.path;
  const bool all_runs = path == "/v1/runs";
  if (!all_runs && (!absl::ConsumePrefix(&path, kPrefix) ||
                    !absl::ConsumeSuffix(&path, "/runs") ||
                    std::count(path.begin(), path.end(), '/') != 1)) {
    return false;
  }
  // A query the listing refuses is answered at once, inline too.
  absl::StatusOr<Query> q =
      Query::Parse(request.query, all_runs ? AllRunsParams() : RunListParams());
  if (!q.ok()) return true;
  absl::StatusOr<std::optional<std::string>> state = q->One("state");
  absl::StatusOr<std::optional<std::string>> ns = q->One("namespace");
  absl::StatusOr<int64_t> limit = q->Int("limit", 100, 1, 1000);
  if (!state.ok() || !ns.ok() || !limit.ok()) return true;
  return !state->has_value() && !ns->has_value() && *limit <= 100;
}

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

void AddRunListRoutes(http::Router& router, Store* store,
                      const Authorizer& auth,
                      std::shared_ptr<ConcurrencyGate> gate,
                      bool inline_pages) {
  router.Handle("GET", "/v1/runs",
                auth.Guard(Role::kRead,
                           [store, gate, inline_pages](const http::Request& r) {
                             std::optional<ConcurrencyGate::Pass> pass;
                             if (!(inline_pages && BoundedRunPage(r)))
                               pass.emplace(gate->Enter());
                             return ListAllRuns(*store, r,
                                                /*dead_letters=*/false);
                           }),
                {.run_inline = inline_pages ? BoundedRunPage : nullptr});
  router.Handle("GET", "/v1/runs/per-minute",
                auth.Guard(Role::kRead, [store](const http::Request& r) {
                  return RunsPerMinute(*store, r);
                }));
  router.Handle("GET", "/v1/dead-letters",
                auth.Guard(Role::kRead, [store, gate](const http::Request& r) {
                  ConcurrencyGate::Pass pass = gate->Enter();
                  return ListAllRuns(*store, r, /*dead_letters=*/true);
                }));
}

}  // namespace chime::api::internal
