// How every command reads its options (issue 19 item 1): one parser for all of them, so that
// each command's option table is both what parses and what its --help prints, and help cannot
// drift from what is accepted.
//
// - Long options are spelled in full: Boost's prefix guessing (`--suit` for `--suite`) is off, so
//   a script keeps working the day an option with the same prefix is added.
// - An unknown option is refused with the nearest one: "unrecognised option '--suit'; did you mean
//   --suite?".
// - `--help` / `-h` on any command prints its usage, every option with its default, the global
//   options it takes (--max-bytes, --plugin-timeout) and an example, and exits 0.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace convcheck::cli {

/// What a command's --help says besides its options (the usage table in commands.cpp).
struct CommandHelp {
  const char* name;      // "check", or "report diff"
  const char* synopsis;  // after "usage: convcheck "; "{oracle fills}" and "{operands fills}"
                         // become the fills' names
  const char* summary;   // what it does (may have several lines)
  const char* example;   // one or more command lines, without the leading "convcheck "
  bool takes_max_bytes;  // allocates a problem's tensors: --max-bytes applies
  const char* details;   // more, printed after the options in --help (may be empty)
};

/// The help entry of a command ("check", "report diff"); nullptr when there is none.
const CommandHelp* command_help(const std::string& name);

/// A synopsis with its fill lists written out.
std::string synopsis_text(const CommandHelp& c);

/// Thrown by parse_options on --help: run() prints `text` on stdout and exits 0.
struct HelpShown {
  std::string text;
};

/// The process-wide options a command takes besides its own table (--max-bytes where it
/// allocates, --plugin-timeout everywhere): for help and "did you mean" only, since run()
/// takes them out of the arguments before the command parses (tools/commands.cpp).
boost::program_options::options_description global_options(const CommandHelp& c);

/// Parses `args` of `command` ("check", "report diff": its command_help) against `desc`.
/// `positional` names the option that takes positional arguments (nullptr: none), up to
/// `max_positional` of them (-1: any number); it is left out of --help's option list. Throws
/// HelpShown for
/// --help / -h, po errors (with a suggestion for a near miss) for the rest.
boost::program_options::variables_map parse_options(
    const std::string& command, const Args& args,
    const boost::program_options::options_description& desc, const char* positional = nullptr,
    int max_positional = 1);

/// The nearest of `candidates` to `given` (a misspelling within 2 edits, or a prefix either
/// way); empty when none is near.
std::string nearest(const std::string& given, const std::vector<std::string>& candidates);

/// `convcheck --version`: version, commit, compiler, the CPU's ISA and the optimized kernels',
/// and the CUDA, cuDNN and oneDNN versions built in.
std::string version_text();

}  // namespace convcheck::cli
