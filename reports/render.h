// junit.xml and report.html (design §9, issue 6), and writing a report directory.
//
// junit.xml: <testsuites> with one <testsuite> per backend (classname "convcheck.<backend>") and
// one <testcase> per (case, backend), named "<descriptor> [fill F, seed S]". fail is a <failure>
// (message: "[check] reason"; text: the reason, the first offender and the repro line); crashed
// and timeout are an <error>; unsupported and mistrusted are <skipped> with the reason (neither is
// ever reported as passed). tests/failures/errors/skipped counts are consistent on every level.
//
// report.html: one self-contained page (no network, no external scripts or fonts), sections
// summary, verdicts (op x dtype x backend matrix), bound-usage (an inline SVG histogram per
// backend, log-scale bins), failures (with repro lines and a filter box), coverage (class x op),
// performance (time per case per backend; against peak only when the run measured peaks, which
// `run` does not: it says so), environment. A small inline script adds the filter, then marks
// <body data-rendered="ok" data-sections="..."> once every section has content; script errors are
// collected in <body data-errors>.
#pragma once

#include <string>
#include <vector>

#include "reports/results.h"
#include "reports/summary.h"

namespace convcheck::reports {

/// Records in report order: by case index, then the run's backend order.
std::vector<Record> sorted_records(std::vector<Record> records, const RunInfo& info);

/// Text for XML and HTML (element content and quoted attributes): escapes & < > " ' and replaces
/// the control characters XML cannot hold (all below 0x20 but tab, newline, CR) by '?'.
std::string escape_markup(const std::string& s);

std::string junit_xml(const RunInfo& info, const std::vector<Record>& records);
std::string report_html(const RunInfo& info, const std::vector<Record>& records);

/// Writes run.json, summary.json, junit.xml and report.html into `dir`, each atomically.
void write_reports(const std::string& dir, const RunInfo& info, const std::vector<Record>& records);

/// Reads a report directory: run.json and results.jsonl (a truncated last line is ignored).
/// Throws InvalidArgument when the directory, run.json or results.jsonl is missing or malformed.
struct RunDir {
  RunInfo info;
  std::vector<Record> records;
  bool truncated_tail = false;
};
RunDir read_run_dir(const std::string& dir);

}  // namespace convcheck::reports
