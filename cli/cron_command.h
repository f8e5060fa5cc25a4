// `chime cron next` and `chime cron explain`: offline answers about a schedule
// expression.
//
//   $ chime cron next '30 2 * * *' --tz Europe/Berlin -n 3  # on 2026-03-28
//   Sat 2026-03-28 02:30:00 CET (+01:00)    2026-03-28T01:30:00Z
//   Sun 2026-03-29 03:00:00 CEST (+02:00)   2026-03-29T01:00:00Z
//   Mon 2026-03-30 02:30:00 CEST (+02:00)   2026-03-30T00:30:00Z
//
// With --json the same is one line, {"expr":..,"tz":..,"next":[UTC times]}.
// `explain` prints the description, the fire times, and one note for each
// daylight-saving transition they cross.
//
// Batch mode: `chime cron next --json` without an expression reads JSON lines
// from `in`, one case per line, and writes one JSON line per case, in order:
//   {"id":7,"expr":"0 12 * * *","start":"2026-03-28T12:00:00Z","n":2}
//   -> {"id":7,"next":["2026-03-29T12:00:00Z","2026-03-30T12:00:00Z"]}
// Fields:
//   "expr"     required string
//   "tz"       zone name; default --tz, else UTC
//   "start"    RFC 3339; default --from, else now
//   "n"        0-10000; default -n, else 5
//   "dialect"  "vixie", "seconds", "quartz" or "auto"; default --dialect,
//              else inferred from the field count
//   "id"       any JSON value, echoed back verbatim; left out of the answer
//              when absent
// Other fields are ignored. The other command-line options (--day-match,
// --dst-gap, --dst-repeat, --hash-key) apply to every case. A case that cannot
// be answered -- a line that is not a JSON object, a missing or mistyped
// field, a bad start, an expression the engine rejects -- gets
// {"id":..,"error":".."} instead, and the batch goes on; blank lines are
// skipped. Fire times are UTC, strictly increasing, and fewer than n when the
// schedule ends before 2400. The batch exits 0 even when some cases failed.
//
// Thread-safety: the functions share no state; calls may run concurrently.
#ifndef CHIME_CLI_CRON_COMMAND_H_
#define CHIME_CLI_CRON_COMMAND_H_

#include <istream>
#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "cli/app.h"

namespace chime::cli {

// The most fire times one command or one batch case may ask for.
inline constexpr int kMaxFireTimes = 10'000;

// The options that shape how an expression is parsed, shared by every cron
// subcommand.
struct ScheduleFlags {
  std::string tz = "UTC";
  cron::Dialect dialect = cron::Dialect::kAuto;
  cron::DayMatch day_match = cron::DayMatch::kAny;
  cron::GapPolicy dst_gap = cron::GapPolicy::kRunAtTransition;
  cron::RepeatPolicy dst_repeat = cron::RepeatPolicy::kOnce;
  std::string hash_key;

  // The engine's options; the string_views point into this struct.
  cron::ParseOptions ToParseOptions() const;
};

struct CronNextFlags {
  std::optional<std::string> expr;  // absent: batch mode (with json)
  ScheduleFlags schedule;
  std::optional<std::string> from;  // RFC 3339; absent: Io::now
  int n = 5;
  bool json = false;
};

struct CronExplainFlags {
  std::string expr;
  ScheduleFlags schedule;
  std::optional<std::string> from;
  int n = 5;
};

// "vixie", "seconds", "quartz" or "auto" (lower case); nullopt for anything
// else.
std::optional<cron::Dialect> DialectFromName(absl::string_view name);

// `chime cron next`: prints the fire times (human or --json), or runs batch
// mode when `json` is set and `expr` is absent. Returns an exit status; errors
// go to io.err prefixed with "chime: ".
int RunCronNext(const CronNextFlags& flags, const Io& io);

// `chime cron explain`. Returns an exit status.
int RunCronExplain(const CronExplainFlags& flags, const Io& io);

// Batch mode: reads cases from `in` until end of input, answers each on `out`.
// `defaults` and `default_start` stand in for fields a line leaves out (see the
// file comment). Returns kExitOk, or kExitFailure if `out` failed.
int RunCronBatch(const ScheduleFlags& defaults, absl::Time default_start,
                 int default_n, std::istream& in, std::ostream& out);

// Adds `cron` with its subcommands `next` and `explain` to `app` (see app.h).
void AddCronCommand(CLI::App& app, const Io& io, int* status);

}  // namespace chime::cli

#endif  // CHIME_CLI_CRON_COMMAND_H_
