// `chime completion bash`: prints a bash completion script for the whole
// command line, generated from the CLI11 command tree it is part of -- every
// subcommand and its options, at any depth -- so it stays right as commands
// are added.
//
//   source <(chime completion bash)                 # this shell
//   chime completion bash > /etc/bash_completion.d/chime
//
// The script defines _<program> (e.g. _chime) and registers it with
// `complete -o default`. A word is completed to a subcommand of the
// subcommands typed so far (aliases are understood, not offered), or to one
// of their options when it starts with '-' or the command has no
// subcommands. The value of an option that takes one is left to the shell's
// default completion (file names), as is a word nothing matches.
//
// Thread-safety: as app.h.
#ifndef CHIME_CLI_COMPLETION_COMMAND_H_
#define CHIME_CLI_COMPLETION_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"
#include "cli/app.h"

namespace chime::cli {

// Adds `completion bash`. The script is made when the command runs, from
// `app` as it is then: every command added to `app` is in it, whatever the
// order of the adders.
void AddCompletionCommand(CLI::App& app, const Io& io, int* status);

// The bash script for `app` and its subcommands (hidden ones, those with an
// empty group, left out), named after app.get_name().
std::string BashCompletion(const CLI::App& app);

}  // namespace chime::cli

#endif  // CHIME_CLI_COMPLETION_COMMAND_H_
