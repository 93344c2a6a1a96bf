// Fuzz target: the results.jsonl reader used by `report diff/merge` and `run --resume`
// (reports/results.h).
//
// For any input, as a results.jsonl file: read_results either refuses it with InvalidArgument
// (naming the file and line) or returns records, with valid_bytes within the file; every record
// written back (to_jsonl) parses again (parse_record) and writes the same line; deduplicate either
// refuses with InvalidArgument or returns no more records. parse_record on each line by itself
// throws std::runtime_error or returns. Anything else (another exception, a sanitizer report, a
// broken invariant) is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/error.h"
#include "fuzz/fuzz_common.h"
#include "reports/results.h"

using namespace convcheck;
using convcheck::fuzz::finding;
using convcheck::fuzz::MemFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string_view input(text);

  // Each line alone.
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    try {
      (void)reports::parse_record(text.substr(start, end - start));
    } catch (const std::runtime_error&) {
    }
    start = end + 1;
  }

  reports::ReadResult r;
  {
    const MemFile file(input);
    try {
      r = reports::read_results(file.path());
    } catch (const InvalidArgument& e) {
      if (std::string_view(e.what()).find(file.path() + ":") != 0)
        finding(std::string("a refusal that does not name the file: ") + e.what(), input);
      return 0;
    }
  }
  if (r.valid_bytes > size) finding("valid_bytes beyond the file", input);
  for (const reports::Record& rec : r.records) {
    const std::string line = reports::to_jsonl(rec);
    reports::Record again;
    try {
      again = reports::parse_record(line);
    } catch (const std::runtime_error& e) {
      finding("a record written back does not parse: " + std::string(e.what()) + ": " + line,
              input);
    }
    if (reports::to_jsonl(again) != line)
      finding("to_jsonl -> parse_record is not stable: " + line, input);
    (void)rec.key();
  }
  try {
    if (reports::deduplicate(r.records, "fuzz").size() > r.records.size())
      finding("deduplicate added records", input);
  } catch (const InvalidArgument&) {
  }
  return 0;
}
