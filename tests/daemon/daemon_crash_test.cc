// The crash test on the real daemon (docs/testing.md): tests/crash/ kills a
// library Scheduler; this one kills `chime serve` itself, with jobs from job
// files run as shell commands, and holds what happened to the same checker
// (tests/crash/crash_checker.h).
//
// It writes 200 jobs, all firing every 2 s, into four job files. Each job's
// command first appends "<fire id> <run id> <attempt> <token>" to a witness
// file (one printf on an O_APPEND descriptor: a line shorter than PIPE_BUF
// goes out in one write, which a SIGKILL cannot tear), then sleeps 0-200 ms,
// or 1.5 s for one job in ten (so that every kill leaves commands running);
// some first attempts fail and are retried. The daemon is started, killed
// with SIGKILL at a random moment 0.3-2.5 s later (some kills land before it
// serves: while it kills orphans, recovers the store or loads the job
// files), stays down 0-500 ms and is started again, at least 30 times within
// a time budget; then it runs once more until it has caught up with its
// backlog, and is stopped with SIGTERM (exit 0).
//
// The acknowledged events are the daemon's log: it logs a run transition
// ("run running", "run succeeded", ...) and a fire not run ("fire missed")
// only once the store has recorded it, so each such line is converted to the
// checker's ack line (crash_log.h). The checker then reads the store and
// fails on a fire claimed twice, an acknowledged write the store lacks, a due
// fire left undecided, a witness line the store does not know, an
// at-most-once fire executed twice, a run left unfinished by the clean stop.
// This test adds: an attempt reported finished (succeeded, failed, retrying)
// must have run -- its command left a witness line.
//
// And the process ledger (src/exec/process_ledger.h): every command a killed
// daemon left running must be dead once the next daemon has opened the store
// (it kills them before), and none may be left after the clean stop.
// Commands are found in /proc by an environment variable that only they
// carry, and told apart by their fencing token, whose high half is the
// store's epoch (one per daemon start).
//
// Knobs (environment), as in tests/crash/crash_test.cc: CHIME_CRASH_SEED,
// CHIME_CRASH_KILLS (30), CHIME_CRASH_SECONDS (the budget for the kills,
// 120), CHIME_CRASH_JOBS (200), CHIME_CRASH_KEEP=1 keeps the directory (it is
// kept anyway when the test fails).
#include <dirent.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/store/sqlite_store.h"
#include "src/time/rfc3339.h"
#include "testing/status_matchers.h"
#include "tests/crash/crash_checker.h"
#include "tests/crash/crash_log.h"
#include "tests/crash/crash_test_util.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::chime::crash::CheckCrashHistory;
using ::chime::crash::CrashReport;
using ::chime::crash::EnvOr;
using ::chime::crash::Examples;
using ::chime::crash::ExpectNothingLostOrDoubled;
using ::chime::testing::IsOk;

constexpr absl::Duration kMinAlive = absl::Milliseconds(300);
constexpr absl::Duration kMaxAlive = absl::Milliseconds(2500);
constexpr absl::Duration kMaxDown = absl::Milliseconds(500);
// The last, clean run lasts at least this long, and then until it has
// caught up (CaughtUp), for at most kCatchUpLimit more: on a loaded machine
// the runs recovered after the last kill can take a few seconds to drain.
// A run that never starts still fails the checker ("unfinished").
constexpr absl::Duration kLastRun = absl::Seconds(3);
constexpr absl::Duration kCatchUpLimit = absl::Seconds(30);
// A run whose fire is this old and has not started is behind.
constexpr absl::Duration kBehind = absl::Seconds(1);
// Commands end within 1.5 s; a stop that takes much longer is a hang.
constexpr absl::Duration kStopLimit = absl::Seconds(30);
// How long a killed process may take to disappear from /proc.
constexpr absl::Duration kReapLimit = absl::Seconds(2);
// The variable that marks the job commands' processes (and their children).
constexpr char kMarker[] = "DAEMON_CRASH_DIR";
std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// A /proc file's text; "" if it cannot be read (the process is gone: a
// read then fails with ESRCH, which std::ifstream turns into an exception).
std::string ReadProc(const std::string& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) text.append(buf, n);
  close(fd);
  return text;
}

bool AtLeastOnce(int job) { return job % 2 == 1; }

// Job `i`, in the rotation of tests/crash/crash_jobs.cc: every 2 s (both
// spellings), at-most-once and at-least-once, misfire run_once / skip /
// run_all (a 300 ms threshold, so that fires due while the daemon is down are
// missed, or the default minute, so that they run late), overlap allow /
// buffer_one / skip, retries (at-least-once only: the checker counts any
// second witness line of an at-most-once fire as a violation). One job in
// ten runs 1.5 s. The daemon gets slots for all of them at once. The
// commands get kMarker=`dir` (and only they: the daemon does not have it).
//
// Every 2 s rather than every second: 200 shell commands a second keep an
// ASan daemon busy on more than one of the two cores, and a daemon that
// falls behind piles up the runs recovered after each kill.
std::string JobYaml(int i, const std::string& dir) {
  const bool long_run = i % 10 == 4 || i % 10 == 9;  // with overlap skip
  const bool retries = AtLeastOnce(i) && i / 2 % 3 == 0;
  std::string yaml = absl::StrCat(
      "  - id: crash-", i, "\n", "    schedule: \"",
      i % 4 == 3 ? "@every 2s" : "*/2 * * * * *", "\"\n",
      "    delivery: ", AtLeastOnce(i) ? "at_least_once" : "at_most_once",
      "\n");
  switch (i / 2 % 4) {
    case 0:
      yaml += "    misfire: run_once\n";
      break;
    case 1:
      yaml += "    misfire: {policy: skip, threshold: 300ms}\n";
      break;
    case 2:
      yaml += "    misfire: {policy: run_once, threshold: 300ms}\n";
      break;
    default:
      yaml +=
          "    misfire: {policy: run_all, threshold: 300ms, "
          "max_catchup: 2}\n";
      break;
  }
  yaml += absl::StrCat("    overlap: ",
                       i % 5 == 0   ? "allow"
                       : i % 5 == 1 ? "buffer_one"
                                    : "skip",
                       "\n");
  if (retries) yaml += "    retry: {max_attempts: 2, initial_backoff: 100ms}\n";
  // The witness line first, so that a kill at any later moment leaves the
  // proof that the attempt began. `d` is the scheduled second's last digit:
  // it varies the sleep (and the planned failures) from fire to fire.
  std::string body = absl::StrCat(
      "printf '%s %s %s %s\\n' \"$CHIME_FIRE_ID\" \"$CHIME_RUN_ID\" "
      "\"$CHIME_ATTEMPT\" \"$CHIME_FENCING_TOKEN\" >> \"$",
      kMarker, "/witness\"\n");
  if (long_run) {
    body += "sleep 1.5\n";
  } else {
    absl::StrAppend(&body,
                    "s=${CHIME_SCHEDULED_TIME%Z}; d=${s#\"${s%?}\"}\n"
                    "n=$(( (d + ",
                    i, ") % 3 ))\n[ $n = 0 ] || sleep 0.$n\n");
    // A third of the first attempts fail.
    if (retries) body += "[ \"$CHIME_ATTEMPT\" != 1 ] || [ $n != 1 ]\n";
  }
  absl::StrAppend(&yaml, "    shell:\n      env: {", kMarker, ": \"", dir,
                  "\"}\n      command: |\n");
  for (absl::string_view line : absl::StrSplit(body, '\n', absl::SkipEmpty()))
    absl::StrAppend(&yaml, "        ", line, "\n");
  return yaml;
}

// A job command's process (or a child of one), found in /proc.
struct JobProcess {
  pid_t pid = 0;
  int64_t token = 0;  // CHIME_FENCING_TOKEN
  std::string fire_id;
  std::string Describe() const {
    return absl::StrCat("pid ", pid, " (", fire_id, ", token ", token,
                        ", epoch ", token >> 32, ")");
  }
};

// Every live process whose environment has kMarker=`dir`. Skips this process
// and the daemons: reading a process's environment takes its memory map's
// lock, which a big ASan process that is exiting holds for seconds.
std::vector<JobProcess> JobProcesses(const std::string& dir) {
  const std::string marker = absl::StrCat(kMarker, "=", dir);
  std::vector<JobProcess> out;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(opendir("/proc"), &closedir);
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc.get())) {
    JobProcess p;
    if (!absl::SimpleAtoi(e->d_name, &p.pid) || p.pid == getpid()) continue;
    const std::string stat = ReadProc(absl::StrCat("/proc/", p.pid, "/stat"));
    if (absl::StrContains(stat, "(chime)")) continue;
    // Unreadable or empty (gone, a zombie): not running.
    const std::string environ =
        ReadProc(absl::StrCat("/proc/", p.pid, "/environ"));
    bool ours = false;
    for (absl::string_view var : absl::StrSplit(environ, '\0')) {
      if (var == marker) ours = true;
      if (absl::ConsumePrefix(&var, "CHIME_FENCING_TOKEN="))
        (void)absl::SimpleAtoi(var, &p.token);
      if (absl::ConsumePrefix(&var, "CHIME_FIRE_ID="))
        p.fire_id = std::string(var);
    }
    if (ours) out.push_back(std::move(p));
  }
  return out;
}

// The commands started by a daemon before epoch `epoch` (all of them when
// `epoch` is 0) still alive after kReapLimit.
std::vector<JobProcess> Orphans(const std::string& dir, int64_t epoch) {
  const absl::Time deadline = absl::Now() + kReapLimit;
  for (;;) {
    std::vector<JobProcess> orphans = JobProcesses(dir);
    std::erase_if(orphans, [epoch](const JobProcess& p) {
      return epoch > 0 && (p.token >> 32) >= epoch;
    });
    if (orphans.empty() || absl::Now() > deadline) return orphans;
    absl::SleepFor(absl::Milliseconds(50));
  }
}

std::string Describe(const std::vector<JobProcess>& processes) {
  std::vector<std::string> each;
  for (const JobProcess& p : processes) each.push_back(p.Describe());
  return Examples(each);
}

// The checker's ack line (crash_log.h) for a daemon log record that reports
// a run transition or a fire not run (daemon/logger.cc), or nullopt.
std::optional<std::string> AckLine(const nlohmann::json& j) {
  const std::string msg = j.value("msg", "");
  RunEvent e;
  if (absl::StartsWith(msg, "run ") && j.contains("run_id")) {
    e.run_id = j["run_id"].get<uint64_t>();
    e.from = j.value("from", "");
    e.attempt = j.value("attempt", 0);
  } else if (!absl::StartsWith(msg, "fire ")) {
    return std::nullopt;
  }
  e.to = msg.substr(msg.find(' ') + 1);
  e.fire_id = j.value("fire_id", "");
  e.detail = j.value("detail", "");
  std::string line = crash::FormatAck(e);
  line.pop_back();  // the newline
  return line;
}

// What the daemons' logs say, all incarnations together.
struct DaemonLogs {
  std::vector<std::string> acks;
  int64_t orphan_groups_killed = 0;  // "killed processes left by ..."
  int64_t lines = 0;
  std::vector<std::string> unreadable;  // lines that are not JSON
};

// Reads the logs. The last line of a killed daemon's log may be cut short
// (a write the kill interrupted: nothing it reported was acknowledged); any
// other line that does not parse is listed.
DaemonLogs ReadLogs(const std::vector<std::string>& files) {
  DaemonLogs out;
  for (const std::string& file : files) {
    const std::string text = ReadFile(file);
    std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
    for (size_t k = 0; k < lines.size(); ++k) {
      if (lines[k].empty()) continue;
      ++out.lines;
      nlohmann::json j = nlohmann::json::parse(lines[k], nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        if (k + 1 != lines.size()) {  // a torn last line has no newline
          out.unreadable.push_back(absl::StrCat(file, ": ", lines[k]));
        }
        continue;
      }
      if (std::optional<std::string> ack = AckLine(j)) {
        out.acks.push_back(*std::move(ack));
      } else if (j.value("msg", "") ==
                 "killed processes left by an earlier daemon") {
        out.orphan_groups_killed += j.value("process_groups", int64_t{0});
      }
    }
  }
  return out;
}

// Acks of attempts that ended (running -> succeeded, failed or retrying)
// with no witness line for that attempt: every command here writes its line
// first, so the daemon reported an outcome for a command that never ran.
std::vector<std::string> FinishedWithoutRunning(
    const std::vector<std::string>& acks,
    const std::vector<std::string>& witness) {
  std::set<std::tuple<std::string, uint64_t, int>> ran;
  for (const std::string& line : witness) {
    if (std::optional<crash::WitnessLine> w = crash::ParseWitness(line))
      ran.emplace(w->fire_id, w->run_id, w->attempt);
  }
  std::vector<std::string> out;
  for (const std::string& line : acks) {
    std::optional<RunEvent> e = crash::ParseAck(line);
    if (!e.has_value() || e->run_id == 0 || e->from != "running" ||
        (e->to != "succeeded" && e->to != "failed" && e->to != "retrying")) {
      continue;
    }
    if (!ran.contains({e->fire_id, e->run_id, e->attempt}))
      out.push_back(absl::StrCat("\"", line, "\""));
  }
  return out;
}

// The scheduled time in a fire id ("crash-7:1:2026-11-29T16:20:14Z"), and
// the job's index.
std::optional<std::pair<int, absl::Time>> ParseFireId(absl::string_view id) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(id, absl::MaxSplits(':', 2));
  int job = 0;
  if (parts.size() != 3 || !absl::ConsumePrefix(&parts[0], "crash-") ||
      !absl::SimpleAtoi(parts[0], &job)) {
    return std::nullopt;
  }
  absl::StatusOr<absl::Time> t = time::ParseRfc3339(parts[2]);
  if (!t.ok()) return std::nullopt;
  return std::make_pair(job, *t);
}

// The first record of a daemon's log whose "msg" is `msg` (null JSON if
// none), found without parsing the whole log: a debug log grows by a
// thousand lines a second, and JSON parsing is slow in a sanitized build.
nlohmann::json FindRecord(const std::string& log_file, absl::string_view msg) {
  const std::string text = ReadFile(log_file);
  const size_t at = text.find(absl::StrCat("\"msg\":\"", msg, "\""));
  if (at == std::string::npos) return nullptr;
  const size_t begin = text.rfind('\n', at);
  const size_t end = text.find('\n', at);
  if (end == std::string::npos) return nullptr;  // not whole yet
  const size_t from = begin == std::string::npos ? 0 : begin + 1;
  return nlohmann::json::parse(text.substr(from, end - from), nullptr, false);
}

// Follows a daemon's log and says whether it has caught up: it has logged a
// claim for a fire at most 2.5 s old (its store writes are logged in order,
// so the writes queued before it are done), and no run it last logged
// pending, retrying or lost (at-least-once: to be started again) has a fire
// older than kBehind.
class CatchUpWatch {
 public:
  explicit CatchUpWatch(std::string log_file)
      : log_file_(std::move(log_file)) {}

  bool CaughtUp(absl::Time now) {
    Read();
    if (newest_claim_ < now - absl::Milliseconds(2500)) return false;
    for (const auto& [id, last] : runs_) {
      const bool waiting = last.state == "pending" ||
                           last.state == "retrying" ||
                           (last.state == "lost" && AtLeastOnce(last.job));
      if (waiting && last.fire < now - kBehind) return false;
    }
    return true;
  }

 private:
  struct Last {
    std::string state;
    int job = 0;
    absl::Time fire;
  };

  // Takes in the whole lines logged since the last call.
  void Read() {
    const std::string text = ReadFile(log_file_);
    const size_t end = text.rfind('\n');
    if (end == std::string::npos || end < offset_) return;
    for (absl::string_view line : absl::StrSplit(
             absl::string_view(text).substr(offset_, end - offset_), '\n')) {
      if (!absl::StrContains(line, "\"msg\":\"run ")) continue;
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.contains("run_id")) continue;
      const auto fire = ParseFireId(j.value("fire_id", ""));
      if (!fire.has_value()) continue;
      const std::string to = j.value("msg", "").substr(4);
      runs_[j["run_id"].get<uint64_t>()] = {to, fire->first, fire->second};
      if (j.value("from", "") == "claiming" && to == "pending")
        newest_claim_ = std::max(newest_claim_, fire->second);
    }
    offset_ = end + 1;
  }

  const std::string log_file_;
  size_t offset_ = 0;
  std::map<uint64_t, Last> runs_;
  absl::Time newest_claim_ = absl::InfinitePast();
};

// The daemon has exited (or is a zombie) although nobody stopped it.
bool Died(pid_t pid) {
  const std::string stat = ReadProc(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ||
         stat[paren + 2] == 'Z';
}

TEST(DaemonCrashTest, KillNineLosesNothingAndLeavesNoOrphans) {
  const uint64_t seed = EnvOr("CHIME_CRASH_SEED", std::random_device{}());
  const uint64_t min_kills = EnvOr("CHIME_CRASH_KILLS", 30);
  const absl::Duration budget =
      absl::Seconds(EnvOr("CHIME_CRASH_SECONDS", 120));
  const int jobs = static_cast<int>(EnvOr("CHIME_CRASH_JOBS", 200));

  std::string dir = ::testing::TempDir() + "chime-daemon-crash-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr) << dir;
  std::printf(
      "daemon crash test: seed %llu (CHIME_CRASH_SEED), %d jobs, data in %s\n",
      static_cast<unsigned long long>(seed), jobs, dir.c_str());
  constexpr int kFiles = 4;
  std::vector<std::string> files(kFiles, "jobs:\n");
  for (int i = 0; i < jobs; ++i) files[i % kFiles] += JobYaml(i, dir);
  std::filesystem::create_directories(dir + "/jobs");
  for (int f = 0; f < kFiles; ++f)
    std::ofstream(absl::StrCat(dir, "/jobs/crash-", f, ".yaml")) << files[f];

  std::vector<std::string> logs;
  const auto options = [&](bool wait_until_serving) {
    logs.push_back(absl::StrCat(dir, "/daemon-", logs.size() + 1, ".log"));
    return DaemonProcess::Options{
        .data_dir = dir + "/data",
        .jobs_dir = dir + "/jobs",
        .args = {"--max-concurrent-runs", "128", "--shutdown-grace", "5s"},
        .log_file = logs.back(),
        .wait_until_serving = wait_until_serving};
  };
  // Once a daemon has opened the store (it logs "store open" right after
  // killing what the ledger lists), nothing an earlier daemon started may
  // still run. Returns whether it had got that far.
  const auto check_orphans = [&] {
    const nlohmann::json open = FindRecord(logs.back(), "store open");
    const int64_t epoch =
        open.is_object() ? open.value("epoch", int64_t{0}) : int64_t{0};
    if (epoch == 0) return false;
    const std::vector<JobProcess> orphans = Orphans(dir, epoch);
    EXPECT_TRUE(orphans.empty())
        << "commands of killed daemons alive after daemon " << logs.size()
        << " (epoch " << epoch << ") opened the store: " << Describe(orphans);
    return true;
  };

  std::mt19937_64 rng(seed);
  const auto random_duration = [&rng](absl::Duration lo, absl::Duration hi) {
    return absl::Milliseconds(std::uniform_int_distribution<int64_t>(
        absl::ToInt64Milliseconds(lo), absl::ToInt64Milliseconds(hi))(rng));
  };

  const absl::Time begin = absl::Now();
  uint64_t kills = 0;
  uint64_t kills_before_serving = 0;
  uint64_t kills_before_store = 0;
  while (kills < min_kills && absl::Now() - begin < budget) {
    const absl::Duration alive = random_duration(kMinAlive, kMaxAlive);
    absl::StatusOr<std::unique_ptr<DaemonProcess>> d =
        DaemonProcess::Start(options(/*wait_until_serving=*/false));
    ASSERT_TRUE(d.ok()) << d.status();
    absl::SleepFor(alive);
    ASSERT_FALSE(Died((*d)->pid()))
        << "daemon " << logs.size() << " ended by itself\n"
        << (*d)->LogText();
    if (!check_orphans()) ++kills_before_store;
    if (FindRecord(logs.back(), "chime serving").is_null())
      ++kills_before_serving;
    (*d)->Kill();
    ++kills;
    absl::SleepFor(random_duration(absl::ZeroDuration(), kMaxDown));
  }
  const absl::Duration killing = absl::Now() - begin;
  EXPECT_GE(kills, min_kills) << "only " << kills << " kills in " << budget;

  // The last run, stopped cleanly once it has caught up.
  absl::StatusOr<std::unique_ptr<DaemonProcess>> last =
      DaemonProcess::Start(options(/*wait_until_serving=*/true));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(check_orphans());
  const absl::Time serving = absl::Now();
  CatchUpWatch watch(logs.back());
  absl::SleepFor(kLastRun);
  while (!watch.CaughtUp(absl::Now()) &&
         absl::Now() - serving < kLastRun + kCatchUpLimit) {
    absl::SleepFor(absl::Milliseconds(500));
  }
  const absl::Time stopped = absl::Now();
  ASSERT_EQ((*last)->Terminate(kStopLimit), 0)
      << "the daemon did not exit 0 within " << kStopLimit << " of SIGTERM\n"
      << (*last)->LogText();
  const std::vector<JobProcess> left = Orphans(dir, 0);
  EXPECT_TRUE(left.empty())
      << "commands alive after the clean stop: " << Describe(left);

  store::SqliteStore::Options store_options;
  store_options.data_dir = dir + "/data";
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
      store::SqliteStore::Open(store_options);
  ASSERT_THAT(store, IsOk());
  absl::StatusOr<std::vector<std::string>> witness =
      crash::ReadLines(dir + "/witness");
  ASSERT_THAT(witness, IsOk());
  const DaemonLogs daemon_logs = ReadLogs(logs);
  EXPECT_TRUE(daemon_logs.unreadable.empty())
      << "log lines that are not JSON: " << Examples(daemon_logs.unreadable);
  absl::StatusOr<CrashReport> report =
      CheckCrashHistory(**store, *witness, daemon_logs.acks, stopped);
  ASSERT_THAT(report, IsOk());

  std::printf(
      "daemon crash test: %llu kills in %s (%llu before the daemon served, "
      "%llu of them before it opened the store), then a clean stop after "
      "%s; %lld log lines, %lld orphaned process groups killed by the next "
      "daemon\n%s\n",
      static_cast<unsigned long long>(kills),
      absl::FormatDuration(killing).c_str(),
      static_cast<unsigned long long>(kills_before_serving),
      static_cast<unsigned long long>(kills_before_store),
      absl::FormatDuration(stopped - serving).c_str(),
      static_cast<long long>(daemon_logs.lines),
      static_cast<long long>(daemon_logs.orphan_groups_killed),
      report->Counts().c_str());
  ExpectNothingLostOrDoubled(*report);
  // Evidence for a run left unfinished: what the daemons logged of it.
  for (size_t i = 0; i < report->unfinished.size() && i < 4; ++i) {
    const std::string& line = report->unfinished[i];
    const size_t at = line.find(": run ");
    if (at == std::string::npos) continue;
    const std::string run =
        line.substr(at + 6, line.find(' ', at + 6) - at - 6);
    std::printf("the daemons' log lines of run %s:\n", run.c_str());
    for (size_t d = 0; d < logs.size(); ++d) {
      for (absl::string_view l :
           absl::StrSplit(ReadFile(logs[d]), '\n', absl::SkipEmpty())) {
        if (absl::StrContains(l, absl::StrCat("\"run_id\":", run, ",")))
          std::printf("  daemon %zu: %.*s\n", d + 1, static_cast<int>(l.size()),
                      l.data());
      }
    }
  }
  const std::vector<std::string> never_ran =
      FinishedWithoutRunning(daemon_logs.acks, *witness);
  EXPECT_TRUE(never_ran.empty())
      << "attempts reported finished whose command never ran: "
      << Examples(never_ran);
  // And commands were left running for the next daemon to kill.
  EXPECT_GT(daemon_logs.orphan_groups_killed, 0)
      << "no kill left a command running";

  store->reset();
  if (!HasFailure() && EnvOr("CHIME_CRASH_KEEP", 0) == 0) {
    std::filesystem::remove_all(dir);
  } else {
    std::printf("daemon crash test: data kept in %s\n", dir.c_str());
  }
}

}  // namespace
}  // namespace chime::daemon_test
