// The process ledger: a directory with one small file per child process the
// shell executor (shell_executor.h) is running, so that children orphaned by
// a daemon that died (kill -9, a crash, a power-cut of the daemon alone) can
// be found and killed by the next incarnation.
//
// Why: an at-least-once job whose run was interrupted by a crash is started
// again by the next daemon (chime/scheduler.h, "Restarts"). If the first
// attempt's process is still running, the retry would run beside it. The next
// incarnation therefore calls KillOrphans on the ledger *before* recovery
// decides which runs were lost, so "lost" really means "no longer running".
//
// An entry is named after the child's pid and records the pid, its process
// group, the process start time (/proc/<pid>/stat field 22, in clock ticks
// since boot: together with the pid it names one process even after the pid
// is reused), the fire id and the attempt. The executor writes the entry
// after spawning the child but before letting it run the command (a gate, see
// shell_executor.h), and removes it once the child is reaped. Entries are
// written to a temporary name and renamed, so a reader sees whole entries
// only; plain writes suffice because kill -9 of the daemon does not lose the
// page cache (a machine crash kills the children too).
//
// Limits: a process that leaves the group (setsid, setpgid) is not found; only
// a cgroup could hold it. One daemon per ledger directory.
//
// Thread-safety: WriteLedgerEntry and RemoveLedgerEntry may be called from any
// thread for different pids. KillOrphans must not run while this process has
// children recorded in the same directory (it would kill them).
#ifndef CHIME_SRC_EXEC_PROCESS_LEDGER_H_
#define CHIME_SRC_EXEC_PROCESS_LEDGER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace chime::exec {

struct LedgerEntry {
  pid_t pid = 0;
  pid_t pgid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat field 22
  std::string fire_id;
  int attempt = 0;

  friend bool operator==(const LedgerEntry&, const LedgerEntry&) = default;
};

// Writes `<dir>/<pid>` (creating `dir`, one level, if missing). An error names
// the file and the errno text.
absl::Status WriteLedgerEntry(const std::string& dir, const LedgerEntry& entry);

// Removes `<dir>/<pid>`; OK if it does not exist.
absl::Status RemoveLedgerEntry(const std::string& dir, pid_t pid);

// The entries in `dir`, by pid. Files that are not whole entries (a leftover
// temporary file, a file someone else put there) are skipped. A missing
// directory has no entries.
absl::StatusOr<std::vector<LedgerEntry>> ReadLedger(const std::string& dir);

// For each entry whose process group may still run -- its leader (pid) still
// exists with the recorded start time, or, the leader gone, some process still
// belongs to the group -- sends SIGKILL to the group and waits up to
// `wait_limit` until no live (non-zombie) process is left in it. Entries whose
// pid now names another process (different start time) are stale: the group
// ended long ago and its pgid may belong to someone else; they are left
// alone. Every handled entry is removed. Returns how many groups were killed.
//
// The next incarnation of the daemon calls this before recovery decides which
// runs were lost, so an at-least-once retry never runs beside an orphaned
// first attempt. Errors: the directory cannot be read, an entry cannot be
// removed, or a group is still alive after `wait_limit` (DeadlineExceeded,
// naming the group; its entry is kept for the next call).
absl::StatusOr<int> KillOrphans(const std::string& ledger_dir,
                                absl::Duration wait_limit = absl::Seconds(5));

// The start time of process `pid` (/proc/<pid>/stat field 22). NotFound when
// there is no such process.
absl::StatusOr<uint64_t> ProcessStartTime(pid_t pid);

// The pids of the live (not zombie) processes whose process group is `pgid`,
// from a scan of /proc (empty if /proc cannot be read).
std::vector<pid_t> LiveGroupMembers(pid_t pgid);

// Sends SIGKILL to process group `pgid` until no live member is left, for at
// most `wait_limit` (DeadlineExceeded then, naming the members left). A
// process is gone for good once it is a zombie. REQUIRES: the caller knows
// `pgid` still names the group it means (e.g. its leader is its unreaped
// child, or a member is known to be alive).
absl::Status KillProcessGroup(pid_t pgid, absl::Duration wait_limit);

}  // namespace chime::exec

#endif  // CHIME_SRC_EXEC_PROCESS_LEDGER_H_
