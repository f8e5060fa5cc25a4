// The `chime` command line: the frame that every subcommand plugs into.
//
// Each subcommand family (cron, serve, job and run) lives in its own
// cli/<name>_command.cc and exposes one `Add<Name>Command(CLI::App&, const Io&,
// int* status)` that declares its subcommands and options on the CLI11 app and,
// when selected, runs and stores its exit status. `RunCli` builds the top-level
// app, lets each family add itself, parses, and maps parse failures to exit
// status 2. main.cc passes the real streams and clock reading; tests pass
// string streams and a fixed `now`, so the whole command line -- usage errors
// included -- runs in process.
//
// Exit status, for every subcommand:
//   0  success
//   1  the command failed at run time (e.g. output could not be written, the
//      daemon could not be reached)
//   2  usage error or bad input: unknown option, bad expression, unknown
//      time zone, bad time
// The commands that call the daemon's API add 3 (not found), 4 (not
// allowed) and 5 (conflict): cli/client.h.
#ifndef CHIME_CLI_APP_H_
#define CHIME_CLI_APP_H_

#include <functional>
#include <istream>
#include <ostream>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/time/time.h"

namespace chime::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// What a command reads and writes. `now` is the wall time the command treats as
// the present (defaults such as "fire times after now").
struct Io {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  absl::Time now;
};

// Adds one subcommand family to `app`. The callbacks it installs must set
// *status when they run and must not throw.
using CommandAdder =
    std::function<void(CLI::App& app, const Io& io, int* status)>;

// Parses `argv` (argv[0] is the program name) and runs the selected subcommand.
// Returns the exit status. Help goes to io.out; usage errors go to io.err,
// followed by a hint to run --help.
int RunCli(int argc, const char* const* argv, const Io& io,
           const std::vector<CommandAdder>& commands);

// The exit-status paragraph shown at the end of every --help.
extern const char kExitStatusHelp[];

}  // namespace chime::cli

#endif  // CHIME_CLI_APP_H_
