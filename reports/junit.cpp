#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "reports/render.h"

namespace convcheck::reports {

std::string escape_markup(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          o += '?';
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

namespace {

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", ms / 1000);
  return buf;
}

std::string offender_text(const BackendRecord& r) {
  if (!r.first) return "";
  const Offender& f = *r.first;
  std::ostringstream os;
  os << "first offender at [" << f.coord[0] << "," << f.coord[1] << "," << f.coord[2] << ","
     << f.coord[3] << "] (index " << f.index << "): got " << format_value(f.got) << ", "
     << exact_and_bound(f.ref, f.bound) << "\n";
  return os.str();
}

}  // namespace

std::vector<Record> sorted_records(std::vector<Record> records, const RunInfo& info) {
  std::map<std::string, std::size_t> order;
  for (std::size_t i = 0; i < info.backends.size(); ++i) order[info.backends[i].name] = i;
  auto rank = [&](const std::string& b) {
    auto it = order.find(b);
    return it == order.end() ? order.size() : it->second;
  };
  std::stable_sort(records.begin(), records.end(), [&](const Record& a, const Record& b) {
    if (a.case_index != b.case_index) return a.case_index < b.case_index;
    const std::size_t ra = rank(a.backend), rb = rank(b.backend);
    if (ra != rb) return ra < rb;
    return a.backend < b.backend;
  });
  return records;
}

std::string junit_xml(const RunInfo& info, const std::vector<Record>& records) {
  struct Counts {
    int64_t tests = 0, failures = 0, errors = 0, skipped = 0;
    double ms = 0;
  };
  std::vector<std::string> backends;
  for (const BackendLabel& b : info.backends) backends.push_back(b.name);
  for (const Record& r : records)
    if (std::find(backends.begin(), backends.end(), r.backend) == backends.end())
      backends.push_back(r.backend);
  std::map<std::string, Counts> per;
  Counts all;
  for (const Record& r : records) {
    Counts& c = per[r.backend];
    for (Counts* x : {&c, &all}) {
      ++x->tests;
      const Verdict v = r.result.verdict;
      x->failures += v == Verdict::fail;
      x->errors += v == Verdict::crashed || v == Verdict::timeout;
      x->skipped += v == Verdict::unsupported || v == Verdict::mistrusted;
      x->ms += r.result.ms;
    }
  }
  auto attrs = [](const Counts& c) {
    return " tests=\"" + std::to_string(c.tests) + "\" failures=\"" + std::to_string(c.failures) +
           "\" errors=\"" + std::to_string(c.errors) + "\" skipped=\"" + std::to_string(c.skipped) +
           "\" time=\"" + seconds(c.ms) + "\"";
  };
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<testsuites name=\"" + escape_markup("convcheck run " + info.suite) + "\"" + attrs(all) +
       ">\n";
  for (const std::string& b : backends) {
    const Counts& c = per[b];
    o += "  <testsuite name=\"" + escape_markup(b) + "\"" + attrs(c) +
         (info.finished.empty() ? "" : " timestamp=\"" + escape_markup(info.started) + "\"") +
         ">\n";
    for (const Record& r : records) {
      if (r.backend != b) continue;
      const BackendRecord& x = r.result;
      o += "    <testcase name=\"" +
           escape_markup(r.descriptor + " [fill " + fill_name(r.fill) + ", seed " +
                         std::to_string(r.seed) + "]") +
           "\" classname=\"" + escape_markup("convcheck." + r.backend) + "\" time=\"" +
           seconds(x.ms) + "\"";
      const std::string detail = x.reason + "\n" + offender_text(x) + "repro: " + x.repro;
      const std::string verdict = verdict_name(x.verdict);
      std::string body;
      if (x.verdict == Verdict::fail) {
        body = "      <failure message=\"" + escape_markup("[" + x.check + "] " + x.reason) +
               "\" type=\"" + escape_markup(x.check) + "\">" + escape_markup(detail) +
               "</failure>\n";
      } else if (x.verdict == Verdict::crashed || x.verdict == Verdict::timeout) {
        body = "      <error message=\"" + escape_markup(verdict + ": " + x.reason) + "\" type=\"" +
               escape_markup(verdict) + "\">" + escape_markup(detail) + "</error>\n";
      } else if (x.verdict != Verdict::pass) {
        body = "      <skipped message=\"" + escape_markup(verdict + ": " + x.reason) + "\"/>\n";
      }
      // What a plugin printed (capped by the runner, printable ASCII): JUnit's place for it.
      if (!x.output.empty())
        body += "      <system-out>" + escape_markup(x.output) + "</system-out>\n";
      o += body.empty() ? "/>\n" : ">\n" + body + "    </testcase>\n";
    }
    o += "  </testsuite>\n";
  }
  o += "</testsuites>\n";
  return o;
}

void write_reports(const std::string& dir, const RunInfo& info,
                   const std::vector<Record>& records) {
  const std::vector<Record> sorted = sorted_records(records, info);
  write_file_atomic(dir + "/run.json",
                    json::dump(run_json(info, static_cast<int64_t>(sorted.size())), 1) + "\n");
  write_file_atomic(dir + "/summary.json", summary_json(info, sorted));
  write_file_atomic(dir + "/junit.xml", junit_xml(info, sorted));
  write_file_atomic(dir + "/report.html", report_html(info, sorted));
}

RunDir read_run_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw InvalidArgument(
        dir + ": no such report directory (expected a `convcheck run --out` directory)");
  const std::string run = dir + "/run.json";
  std::ifstream f(run, std::ios::binary);
  if (!f)
    throw InvalidArgument(run + ": missing (is " + dir + " a `convcheck run --out` directory?)");
  std::ostringstream text;
  text << f.rdbuf();
  RunDir out;
  out.info = parse_run_json(text.str(), run);
  const std::string results = dir + "/results.jsonl";
  if (!fs::exists(results)) throw InvalidArgument(results + ": missing");
  ReadResult rr = read_results(results);
  out.records = deduplicate(std::move(rr.records), results);
  out.truncated_tail = rr.truncated_tail;
  return out;
}

}  // namespace convcheck::reports
