// Fuzz target: the suite-file reader (core/suite.h).
//
// For any input: parse_suite either refuses it with InvalidArgument (naming "fuzz.txt:<line>:")
// or returns entries that are all valid problems (geometry() accepts them) on increasing lines;
// writing the entries back out (descriptor, --tag, --fill) and parsing that gives the same
// entries; and read_suite on the same bytes as a file agrees with parse_suite. Anything else is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/problem.h"
#include "core/suite.h"
#include "fuzz/fuzz_common.h"

using namespace convcheck;
using convcheck::fuzz::finding;
using convcheck::fuzz::MemFile;

namespace {

bool same_entries(const Suite& a, const Suite& b, bool lines) {
  if (a.entries.size() != b.entries.size()) return false;
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const SuiteEntry &x = a.entries[i], &y = b.entries[i];
    if (x.problem != y.problem || x.tag != y.tag || x.fill != y.fill) return false;
    if (lines && x.line != y.line) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string_view input(text);

  Suite s;
  bool accepted = true;
  std::string message;
  try {
    s = parse_suite(text, "fuzz.txt");
  } catch (const InvalidArgument& e) {
    accepted = false;
    message = e.what();
    if (message.rfind("fuzz.txt:", 0) != 0)
      finding("a refusal that does not name the file and line: " + message, input);
  }

  {  // The file reader on the same bytes agrees.
    const MemFile file(input);
    Suite f;
    bool file_accepted = true;
    std::string file_message;
    try {
      f = read_suite(file.path());
    } catch (const InvalidArgument& e) {
      file_accepted = false;
      file_message = e.what();
    }
    if (accepted != file_accepted)
      finding("parse_suite and read_suite disagree: " + message + " | " + file_message, input);
    if (accepted && !same_entries(s, f, true))
      finding("parse_suite and read_suite read different entries", input);
  }
  if (!accepted) return 0;

  std::string out;
  int last_line = 0;
  for (const SuiteEntry& e : s.entries) {
    if (e.line <= last_line) finding("entry lines do not increase", input);
    last_line = e.line;
    try {
      (void)geometry(e.problem);
    } catch (const InvalidArgument& err) {
      finding(std::string("an accepted entry is invalid: ") + err.what(), input);
    }
    out += to_string(e.problem);
    if (!e.tag.empty()) out += " --tag " + e.tag;
    if (e.fill) out += " --fill " + *e.fill;
    out += "\n";
  }
  Suite again;
  try {
    again = parse_suite(out, "again.txt");
  } catch (const InvalidArgument& err) {
    finding(std::string("the entries written back are refused: ") + err.what(), input);
  }
  if (!same_entries(s, again, false)) finding("write -> parse changed the entries", input);
  return 0;
}
