// GET /v1/schedule/preview and GET /v1/jobs/{ns}/{id}/next: fire times as
// the API shows them.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"
#include "src/core/fire_source.h"
#include "src/time/rfc3339.h"

namespace chime::api {
namespace {

using Json = nlohmann::ordered_json;

// A UTC offset as "+hh:mm".
std::string Offset(absl::Duration d) {
  const int64_t minutes = absl::ToInt64Minutes(d);
  const int64_t a = minutes < 0 ? -minutes : minutes;
  return absl::StrFormat("%c%02d:%02d", minutes < 0 ? '-' : '+', a / 60,
                         a % 60);
}

// Fire times as the API shows them: UTC, local in the schedule's zone (UTC
// without one), and the offset change since the previous one (or `from`).
Json FiresJson(const std::vector<absl::Time>& times, absl::Time from,
               const cron::Schedule* schedule) {
  absl::TimeZone tz = absl::UTCTimeZone();
  if (schedule != nullptr) absl::LoadTimeZone(schedule->zone_name(), &tz);
  Json fires = Json::array();
  absl::Time previous = from;
  for (absl::Time t : times) {
    Json fire;
    fire["time"] = time::FormatUtc(t);
    fire["local"] = absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", t, tz);
    if (schedule != nullptr) {
      std::vector<cron::OffsetChange> changes =
          schedule->OffsetChangesBetween(previous, t);
      if (!changes.empty()) {
        Json& change = fire["offset_changed"];
        change["at"] = time::FormatUtc(changes.back().at);
        change["before"] = Offset(changes.front().offset_before);
        change["after"] = Offset(changes.back().offset_after);
      }
    }
    fires.push_back(std::move(fire));
    previous = t;
  }
  return fires;
}

}  // namespace

namespace internal {

http::Response SchedulePreview(const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(
      request.query, {"expression", "zone", "count", "from", "dialect"});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<std::optional<std::string>> expr = q->One("expression");
  if (!expr.ok()) return ProblemFromStatus(expr.status());
  if (!expr->has_value()) return Problem(400, "expression: required");
  absl::StatusOr<std::optional<std::string>> zone = q->One("zone");
  if (!zone.ok()) return ProblemFromStatus(zone.status());
  absl::StatusOr<int64_t> count = q->Int("count", 10, 1, 1000);
  if (!count.ok()) return ProblemFromStatus(count.status());
  absl::StatusOr<absl::Time> from_param = q->Time("from", absl::Now());
  if (!from_param.ok()) return ProblemFromStatus(from_param.status());
  const absl::Time from = *from_param;
  absl::StatusOr<std::optional<std::string>> dialect = q->One("dialect");
  if (!dialect.ok()) return ProblemFromStatus(dialect.status());
  cron::ParseOptions options;
  const std::string zone_name = zone->value_or("UTC");
  options.zone = zone_name;
  if (dialect->has_value()) {
    static const std::pair<const char*, cron::Dialect> kDialects[] = {
        {"auto", cron::Dialect::kAuto},
        {"vixie", cron::Dialect::kVixie},
        {"seconds", cron::Dialect::kSeconds},
        {"quartz", cron::Dialect::kQuartz}};
    bool known = false;
    for (const auto& [name, d] : kDialects) {
      if (**dialect == name) {
        options.dialect = d;
        known = true;
      }
    }
    if (!known) {
      return Problem(400, absl::StrCat("dialect: \"", **dialect,
                                       "\" is not one of auto, vixie, "
                                       "seconds, quartz"));
    }
  }
  absl::StatusOr<cron::Schedule> schedule =
      cron::Schedule::Parse(**expr, options);
  if (!schedule.ok()) {
    return Problem(
        400, absl::StrCat(absl::IsNotFound(schedule.status()) ? "zone: "
                                                              : "expression: ",
                          schedule.status().message()));
  }
  Json body;
  body["expression"] = std::string(schedule->expression());
  body["zone"] = schedule->zone_name();
  body["description"] = schedule->Describe();
  body["next"] = FiresJson(schedule->NextN(from, static_cast<int>(*count)),
                           from, &*schedule);
  return JsonResponse(body);
}

http::Response JobNext(const JobRecord& job, const http::Request& request) {
  absl::StatusOr<Query> q = Query::Parse(request.query, {"count", "from"});
  if (!q.ok()) return ProblemFromStatus(q.status());
  absl::StatusOr<int64_t> count = q->Int("count", 10, 1, 1000);
  if (!count.ok()) return ProblemFromStatus(count.status());
  absl::StatusOr<absl::Time> from = q->Time("from", absl::Now());
  if (!from.ok()) return ProblemFromStatus(from.status());
  absl::StatusOr<core::FireSource> source = core::FireSource::Create(job.spec);
  if (!source.ok()) return ProblemFromStatus(source.status());
  std::vector<absl::Time> times;
  for (absl::Time t = *from; static_cast<int64_t>(times.size()) < *count;) {
    t = source->Next(t);
    if (t == absl::InfiniteFuture()) break;
    times.push_back(t);
  }
  Json body;
  body["name"] = job.spec.key.ToString();
  body["paused"] = job.spec.paused;
  if (const cron::Schedule* s = source->schedule()) {
    body["zone"] = s->zone_name();
    body["description"] = s->Describe();
  }
  body["next"] = FiresJson(times, *from, source->schedule());
  return JsonResponse(body);
}

}  // namespace internal
}  // namespace chime::api
