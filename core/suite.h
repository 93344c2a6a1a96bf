// Suites: problem lists in the descriptor grammar (design §1 suites/, issue 6).
//
//   # a comment (also after an entry)
//   <descriptor> [--tag NAME] [--fill FILL]
//
// A suite is named (NAME -> <suites dir>/NAME.txt) or given as a file path. The suites dir is
// $CONVCHECK_SUITES when set; else, for an installed binary (cmake --install),
// <prefix>/share/convcheck/suites beside its bin/; else the source tree's suites/ (a build tree).
// Every entry is validated when read; an error names the file and line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"

namespace convcheck {

struct SuiteEntry {
  Problem problem;
  std::string tag;                  // empty when the line has none
  std::optional<std::string> fill;  // as written; checked by whoever uses fills
  int line = 0;
};

struct Suite {
  std::string name;  // file name without .txt
  std::string path;
  std::vector<SuiteEntry> entries;
};

/// Parses suite text; `path` appears in error messages. A suite without a problem is refused.
Suite parse_suite(const std::string& text, const std::string& path);
/// Reads a suite by name or path; throws InvalidArgument (unknown name: lists the known ones).
/// A UTF-8 byte order mark and CRLF line ends are accepted.
Suite read_suite(const std::string& name_or_path);
/// The suites in the suites dir, by name.
std::vector<std::string> suite_names();
/// Where named suites are read from, and which rule chose it ("$CONVCHECK_SUITES", "installed",
/// "source tree").
struct SuitesDir {
  std::string dir, source;
};
SuitesDir suites_location();
/// suites_location().dir
std::string suites_dir();

}  // namespace convcheck
