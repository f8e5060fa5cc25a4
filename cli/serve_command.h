// `chime serve`: runs the daemon (daemon/daemon.h) until SIGTERM or SIGINT;
// SIGHUP reloads the configuration's job files.
//
// Configuration, each layer overriding the one before: defaults
// (src/config/daemon_config.h), the config file (--config, else CHIME_CONFIG,
// else ./chime.yaml when present), CHIME_* environment variables, flags.
// Bad configuration exits 2 with the file:line:column or variable named;
// a daemon that cannot start (data directory locked by another daemon, port
// in use) exits 1. A clean stop exits 0.
#ifndef CHIME_CLI_SERVE_COMMAND_H_
#define CHIME_CLI_SERVE_COMMAND_H_

#include "cli/app.h"

namespace chime::cli {

void AddServeCommand(CLI::App& app, const Io& io, int* status);

}  // namespace chime::cli

#endif  // CHIME_CLI_SERVE_COMMAND_H_
