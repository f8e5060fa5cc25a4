#include "cli/stream_command.h"

#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace chime::cli {
namespace {

using Json = nlohmann::ordered_json;

struct EventFlags {
  ClientOptions client;
  std::string name_space;
  std::string job;
  int count = 0;  // 0: until interrupted
};

// Reads server-sent events from the pieces of a stream: whole lines only,
// "data:" lines joined, comments dropped; `on_event` gets each event's data
// and returns false to stop.
class EventReader {
 public:
  explicit EventReader(std::function<bool(const std::string&)> on_event)
      : on_event_(std::move(on_event)) {}

  bool Feed(absl::string_view piece) {
    pending_.append(piece.data(), piece.size());
    size_t start = 0;
    for (size_t end; (end = pending_.find('\n', start)) != std::string::npos;
         start = end + 1) {
      absl::string_view line(pending_.data() + start, end - start);
      absl::ConsumeSuffix(&line, "\r");
      if (!Line(line)) return false;
    }
    pending_.erase(0, start);
    return true;
  }

 private:
  bool Line(absl::string_view line) {
    if (line.empty()) {  // the end of an event
      if (data_.empty()) return true;
      std::string data = std::move(data_);
      data_.clear();
      return on_event_(data);
    }
    if (absl::ConsumePrefix(&line, "data:")) {
      absl::ConsumePrefix(&line, " ");
      if (!data_.empty()) data_ += "\n";
      absl::StrAppend(&data_, line);
    }
    return true;  // id:, event:, retry: and comments
  }

  std::function<bool(const std::string&)> on_event_;
  std::string pending_;
  std::string data_;
};

std::string Text(const Json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

// One event as a line (see the header).
std::string EventLine(const Json& e) {
  std::string line = absl::StrCat(Text(e, "time"), "  ", Text(e, "job"), "  ");
  const std::string detail = Text(e, "detail");
  if (Text(e, "run_id") != "0") {
    absl::StrAppend(&line, "run ", Text(e, "run_id"), "  ", Text(e, "from"),
                    " -> ", Text(e, "to"), "  attempt ", Text(e, "attempt"));
    if (!detail.empty()) absl::StrAppend(&line, "  ", detail);
  } else {
    absl::StrAppend(&line, "fire ", Text(e, "fire_id"), " ", Text(e, "to"));
    if (Text(e, "fires") != "1")
      absl::StrAppend(&line, " (", Text(e, "fires"), " fires)");
    if (!detail.empty()) absl::StrAppend(&line, ": ", detail);
  }
  return line;
}

int Events(const EventFlags& f, const Io& io) {
  std::string query;
  if (!f.name_space.empty())
    absl::StrAppend(&query, "&namespace=", EncodeQueryValue(f.name_space));
  if (!f.job.empty()) absl::StrAppend(&query, "&job=", EncodeQueryValue(f.job));
  if (!query.empty()) query[0] = '?';
  int seen = 0;
  EventReader reader([&](const std::string& data) {
    if (f.client.json) {
      io.out << data << "\n";
    } else {
      const Json e = Json::parse(data, nullptr, false);
      io.out << (e.is_object() ? EventLine(e) : data) << "\n";
    }
    io.out.flush();
    return f.count == 0 || ++seen < f.count;
  });
  const absl::Status s = StreamApi(
      f.client, "/v1/events" + query,
      [&reader](absl::string_view piece) { return reader.Feed(piece); });
  if (!s.ok()) return ReportError(s, io);
  return kExitOk;
}

}  // namespace

int FollowRunOutput(const ClientOptions& client, const std::string& name,
                    int64_t run, const Io& io) {
  auto [ns, id] = SplitJobName(name);
  const std::string path =
      absl::StrCat("/v1/jobs/", EncodeQueryValue(ns), "/", EncodeQueryValue(id),
                   "/runs/", run, "/output?follow=true");
  const absl::Status s =
      StreamApi(client, path, [&io](absl::string_view piece) {
        io.out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
        io.out.flush();
        return true;
      });
  if (!s.ok()) return ReportError(s, io);
  return kExitOk;
}

void AddEventsCommand(CLI::App& app, const Io& io, int* status) {
  CLI::App* cmd = app.add_subcommand(
      "events",
      "run transitions and missed fires as they happen, one a line, until "
      "interrupted (REST API: GET /v1/events)");
  cmd->footer(
      "Exit status: 0 success (--count events seen); 1 server unreachable, "
      "failing or the stream broke off; 2 usage or bad input; 4 not allowed "
      "(token).");
  auto f = std::make_shared<EventFlags>();
  AddClientOptions(cmd, &f->client);
  cmd->add_option("--namespace", f->name_space, "only jobs of this namespace");
  cmd->add_option("--job", f->job, "only this job (namespace/id, or id)");
  cmd->add_option("-n,--count", f->count, "stop after this many events")
      ->check(CLI::PositiveNumber);
  cmd->callback([f, &io, status] { *status = Events(*f, io); });
}

}  // namespace chime::cli
