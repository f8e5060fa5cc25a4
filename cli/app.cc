#include "cli/app.h"

#include <exception>

namespace chime::cli {

const char kExitStatusHelp[] =
    "Exit status: 0 success; 1 run-time failure (e.g. output could not be "
    "written); 2 usage "
    "error or bad input (unknown option, bad expression, unknown time zone, "
    "bad time).";

int RunCli(int argc, const char* const* argv, const Io& io,
           const std::vector<CommandAdder>& commands) {
  CLI::App app(
      "chime: a job scheduler with exact cron semantics across time zones and "
      "daylight saving.",
      "chime");
  app.footer(kExitStatusHelp);
  app.require_subcommand(1);
  int status = kExitOk;
  for (const CommandAdder& add : commands) add(app, io, &status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version requests are "errors" with exit code 0 in CLI11.
    return app.exit(e, io.out, io.err) == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    io.err << "chime: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
  return status;
}

}  // namespace chime::cli
