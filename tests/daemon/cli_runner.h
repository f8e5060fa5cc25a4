// Runs `chime` commands in process (cli::RunCli), for the tests of the CLI
// against a real daemon.
#ifndef CHIME_TESTS_DAEMON_CLI_RUNNER_H_
#define CHIME_TESTS_DAEMON_CLI_RUNNER_H_

#include <sstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "cli/app.h"

namespace chime::daemon_test {

struct CliResult {
  int status = -1;  // the exit status
  std::string out;  // what it wrote to stdout
  std::string err;  // and to stderr
};

// `chime <args>` with the commands `adders` registers; stdin is empty.
inline CliResult RunChime(std::vector<std::string> args,
                          const std::vector<cli::CommandAdder>& adders) {
  args.insert(args.begin(), "chime");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::istringstream in;
  std::ostringstream out, err;
  CliResult r;
  r.status = cli::RunCli(static_cast<int>(argv.size()), argv.data(),
                         cli::Io{in, out, err, absl::Now()}, adders);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace chime::daemon_test

#endif  // CHIME_TESTS_DAEMON_CLI_RUNNER_H_
