// report.html: see render.h. The page is reports/report.html.in (style, script, layout), embedded
// at build time as kReportTemplate; its {{slots}} are filled here, each section drawn in C++ as
// HTML tables and inline SVG. The page's script adds the filters (every table), renders the lazy
// tables (failures, not judged) from their JSON with each failure's details and error heat map
// (inline SVG) on demand, and checks that every section rendered.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>

#include "reports/render.h"

namespace convcheck::reports {

// reports/report.html.in, as text (generated: report_template.cpp).
extern const char kReportTemplate[];

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// One SVG histogram: bars for `counts` with `labels` under them.
std::string histogram(const std::string& title, const std::vector<std::string>& labels,
                      const std::vector<int64_t>& counts, const std::vector<std::string>& colors) {
  const int bar = 44, gap = 8, left = 36, top = 40, height = 120, bottom = 40;
  const int width = left + static_cast<int>(labels.size()) * (bar + gap) + 10;
  int64_t max = 1;
  for (int64_t c : counts) max = std::max(max, c);
  std::string o = "<svg class=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(width) + "\" height=\"" + std::to_string(top + height + bottom) +
                  "\" role=\"img\" aria-label=\"" + escape_markup(title) + "\">";
  o += "<text x=\"" + std::to_string(left) +
       "\" y=\"15\" font-size=\"13\" font-weight=\"600\" fill=\"#1d2330\">" + escape_markup(title) +
       "</text>";
  o += "<line x1=\"" + std::to_string(left - 4) + "\" y1=\"" + std::to_string(top + height) +
       "\" x2=\"" + std::to_string(width - 6) + "\" y2=\"" + std::to_string(top + height) +
       "\" stroke=\"#8a93a3\"/>";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const int x = left + static_cast<int>(i) * (bar + gap);
    const int h = counts[i] == 0 ? 0
                                 : std::max(2, static_cast<int>(std::lround(
                                                   static_cast<double>(height) * counts[i] / max)));
    o += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(top + height - h) +
         "\" width=\"" + std::to_string(bar) + "\" height=\"" + std::to_string(h) + "\" fill=\"" +
         colors[i] + "\"><title>" + escape_markup(labels[i]) + ": " + std::to_string(counts[i]) +
         "</title></rect>";
    o += "<text x=\"" + std::to_string(x + bar / 2) + "\" y=\"" +
         std::to_string(top + height - h - 4) +
         "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#1d2330\">" +
         std::to_string(counts[i]) + "</text>";
    o += "<text x=\"" + std::to_string(x + bar / 2) + "\" y=\"" +
         std::to_string(top + height + 14) +
         "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#5a6272\">" + escape_markup(labels[i]) +
         "</text>";
  }
  o += "<text x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(top + height + 32) +
       "\" font-size=\"10\" fill=\"#5a6272\">bound usage max |got - exact| / tau (log-scale "
       "bins; over 1 fails)</text>";
  return o + "</svg>";
}

// Horizontal bars (performance): one per label, value in ms.
std::string bars(const std::string& title, const std::vector<std::string>& labels,
                 const std::vector<double>& values, const std::string& unit) {
  const int left = 340, row = 18, top = 24, barmax = 360;
  const int height = top + static_cast<int>(labels.size()) * row + 10;
  double max = 1e-12;
  for (double v : values) max = std::max(max, v);
  std::string o = "<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(left + barmax + 90) + "\" height=\"" + std::to_string(height) +
                  "\" role=\"img\" aria-label=\"" + escape_markup(title) + "\">";
  o += "<text x=\"0\" y=\"15\" font-size=\"13\" font-weight=\"600\" fill=\"#1d2330\">" +
       escape_markup(title) + "</text>";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const int y = top + static_cast<int>(i) * row;
    const int w = std::max(1, static_cast<int>(std::lround(barmax * values[i] / max)));
    o += "<text x=\"" + std::to_string(left - 6) + "\" y=\"" + std::to_string(y + 12) +
         "\" font-size=\"11\" text-anchor=\"end\" fill=\"#1d2330\">" + escape_markup(labels[i]) +
         "</text>";
    o += "<rect x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(y + 2) + "\" width=\"" +
         std::to_string(w) + "\" height=\"" + std::to_string(row - 5) + "\" fill=\"#5b8bd0\"/>";
    o += "<text x=\"" + std::to_string(left + w + 5) + "\" y=\"" + std::to_string(y + 12) +
         "\" font-size=\"11\" fill=\"#1d2330\">" + fmt("%.3g", values[i]) + " " +
         escape_markup(unit) + "</text>";
  }
  return o + "</svg>";
}

const char* verdict_class(const std::map<std::string, int64_t>& m) {
  auto n = [&](const char* v) {
    auto it = m.find(v);
    return it == m.end() ? 0 : it->second;
  };
  if (n("fail") + n("crashed") + n("timeout") > 0) return "bad";
  if (n("mistrusted") > 0) return "warn";
  if (n("pass") > 0) return "ok";
  return "na";
}

std::string verdict_cell(const std::map<std::string, int64_t>& m) {
  std::string o;
  for (Verdict verdict : kAllVerdicts) {
    const char* v = verdict_name(verdict);
    auto it = m.find(v);
    if (it == m.end() || it->second == 0) continue;
    if (!o.empty()) o += " &middot; ";
    o += std::to_string(it->second) + " " + v;
  }
  return o.empty() ? "&mdash;" : o;
}

// What every section draws from: the run, its records (report order) and the backends' names
// (the run's, then any other a record names).
struct Page {
  const RunInfo& info;
  const std::vector<Record>& records;
  std::vector<std::string> backends;
};

std::string subtitle(const Page& p) {
  const RunInfo& info = p.info;
  std::set<std::string> cases;
  for (const Record& r : p.records) cases.insert(r.case_key());
  const int64_t planned = info.planned_cases();
  const int64_t planned_pairs = planned * static_cast<int64_t>(info.backends.size());
  const bool complete = static_cast<int64_t>(p.records.size()) >= planned_pairs;
  std::string backends;
  for (const BackendLabel& b : info.backends)
    backends += (backends.empty() ? "" : ", ") + b.name +
                (b.name == b.implementation ? "" : " (stood in for by " + b.implementation + ")");
  return std::to_string(cases.size()) + " of " + std::to_string(planned) + " cases, " +
         std::to_string(p.records.size()) + " of " + std::to_string(planned_pairs) +
         " (case, backend) pairs" + (complete ? "" : " &mdash; <b>incomplete</b>") +
         (info.interrupted ? " (interrupted; rerun with --resume)" : "") + " &middot; backends " +
         escape_markup(backends) + " &middot; " + escape_markup(info.started) +
         (info.finished.empty() ? "" : " to " + escape_markup(info.finished));
}

std::string summary_section(const Page& p) {
  const RunInfo& info = p.info;
  std::map<std::string, int64_t> totals;
  for (const Record& r : p.records) ++totals[verdict_name(r.result.verdict)];
  std::string o = "<section id=\"summary\"><h2>Summary</h2><div>";
  for (Verdict verdict : kAllVerdicts) {
    const char* v = verdict_name(verdict);
    const int64_t n = totals.count(v) ? totals[v] : 0;
    const char* cls = verdict == Verdict::pass         ? "ok"
                      : is_failure(verdict)            ? (n ? "bad" : "na")
                      : verdict == Verdict::mistrusted ? (n ? "warn" : "na")
                                                       : "na";
    o += "<span class=\"pill " + std::string(cls) + "\">" + std::to_string(n) + " " + v + "</span>";
  }
  o += "</div>";
  if (!info.skipped.empty()) {
    o += "<p class=\"note\">Backends not run: ";
    for (std::size_t i = 0; i < info.skipped.size(); ++i)
      o += (i ? "; " : "") + escape_markup(info.skipped[i].first) + " (" +
           escape_markup(info.skipped[i].second) + ")";
    o += "</p>";
  }
  // How plugin hosts were confined (run.json's environment, plugins/sandbox.h): in the header, so
  // a weaker sandbox is never silent.
  if (info.environment.is_object() && info.environment.contains("plugin_sandbox")) {
    const json::Value& sb = info.environment["plugin_sandbox"];
    auto list = [&](const char* key) {
      std::string t;
      if (sb.contains(key))
        for (const json::Value& n : sb[key]) t += (t.empty() ? "" : ", ") + n.get<std::string>();
      return t.empty() ? std::string("none") : t;
    };
    const std::string mode = sb.contains("mode") ? sb["mode"].get<std::string>() : "?";
    o += "<p class=\"note " + std::string(mode == "strict" ? "" : "warn") +
         "\">Plugin sandbox: <b>" + escape_markup(mode) +
         "</b>; active: " + escape_markup(list("active")) +
         "; not active: " + escape_markup(list("not_active")) + " (README: Security model).</p>";
  }
  o += "<p class=\"note\">fail, crashed and timeout fail the run; unsupported (the backend "
       "declined, with its reason) and mistrusted (too degenerate to judge) do not, and are "
       "never counted as passed.</p></section>";

  return o;
}

std::string verdicts_section(const Page& p) {
  const std::vector<Record>& records = p.records;
  const std::vector<std::string>& backends = p.backends;
  std::map<std::pair<std::string, std::string>,
           std::map<std::string, std::map<std::string, int64_t>>>
      matrix;  // (op, dtype) -> backend -> verdict -> n
  for (const Record& r : records)
    ++matrix[{r.op, r.dtype}][r.backend][verdict_name(r.result.verdict)];
  std::string o = "<section id=\"verdicts\"><h2>Verdicts: op &times; dtype &times; backend</h2>";
  o += "<table class=\"filterable\"><thead><tr><th>op</th><th>dtype</th>";
  for (const std::string& b : backends) o += "<th>" + escape_markup(b) + "</th>";
  o += "</tr></thead><tbody>";
  int rows = 0;
  for (Op op : kAllOps) {
    for (DType t : kAllDTypes) {
      auto it = matrix.find({op_name(op), dtype_name(t)});
      if (it == matrix.end()) continue;
      ++rows;
      o += "<tr><td>" + std::string(op_name(op)) + "</td><td>" + dtype_name(t) + "</td>";
      for (const std::string& b : backends) {
        auto jt = it->second.find(b);
        if (jt == it->second.end()) {
          o += "<td class=\"na\">&mdash;</td>";
          continue;
        }
        // A cell with failures or unjudged pairs links to those rows, filtered to the cell.
        const char* cls = verdict_class(jt->second);
        const std::string target = std::string(cls) == "bad"         ? "failures"
                                   : std::string(cls) == "warn"      ? "not-judged"
                                   : jt->second.count("unsupported") ? "not-judged"
                                                                     : "";
        const std::string cell = verdict_cell(jt->second);
        o += "<td class=\"" + std::string(cls) + "\">" +
             (target.empty()
                  ? cell
                  : "<a href=\"#" + target + "\" data-q=\"backend:" + escape_markup(b) +
                        " op:" + op_name(op) + " dtype:" + dtype_name(t) + "\">" + cell + "</a>") +
             "</td>";
      }
      o += "</tr>";
    }
  }
  if (rows == 0)
    o += "<tr><td colspan=\"" + std::to_string(2 + backends.size()) +
         "\">no case recorded</td></tr>";
  o += "</tbody></table></section>";

  return o;
}

std::string bound_usage_section(const Page& p) {
  const std::vector<Record>& records = p.records;
  const std::vector<std::string>& backends = p.backends;
  static const std::vector<std::string> labels = {"0",    "<1e-6", "1e-6",    "1e-5",  "1e-4",
                                                  "1e-3", "1e-2",  "0.1-0.5", "0.5-1", ">1"};
  auto bin_of = [](double u) -> std::size_t {
    if (std::isnan(u) || u > 1) return 9;
    if (u == 0) return 0;
    if (u < 1e-6) return 1;
    if (u < 1e-5) return 2;
    if (u < 1e-4) return 3;
    if (u < 1e-3) return 4;
    if (u < 1e-2) return 5;
    if (u < 0.1) return 6;
    if (u < 0.5) return 7;
    return 8;
  };
  std::vector<std::string> colors(labels.size(), "#5b8bd0");
  colors[8] = "#e0a43a";
  colors[9] = "#d0524b";
  std::string o = "<section id=\"bound-usage\"><h2>Bound usage per backend</h2>";
  o += "<p class=\"note\">For each judged (case, backend) pair: the largest |got &minus; exact| / "
       "tau over the result, tau being the error bound of the backend's own numeric contract. 0 "
       "means bit-exact; the bins from 1e-6 on are decades; above 1 the pair fails.</p>";
  for (const std::string& b : backends) {
    std::vector<int64_t> counts(labels.size(), 0);
    double max = 0;
    int64_t n = 0;
    for (const Record& r : records) {
      const BackendRecord& x = r.result;
      if (r.backend != b || (x.verdict != Verdict::pass && x.verdict != Verdict::fail)) continue;
      ++counts[bin_of(x.bound_usage)];
      max = std::max(max, x.bound_usage);
      ++n;
    }
    o += "<div class=\"hist\">" +
         histogram(b + " (" + std::to_string(n) + " judged, max " + fmt("%.3g", max) + ")", labels,
                   counts, colors) +
         "</div>";
  }
  o += "</section>";

  return o;
}

// Rows of the lazy tables (failures, not judged) go to the page as JSON in a <script> element, and
// the page's script renders the rows that match the filter, a few hundred at a time, and a row's
// details when it is opened: a run of 10^5 records stays one light page (issue 19).
constexpr std::size_t kLazyRows = 20000;   // rows of a lazy table carried in the page
constexpr std::size_t kDetailRows = 1000;  // failure rows that carry their details (heat map)

// A JSON value as the text of a <script type="application/json"> element ("</" cannot end it).
std::string script_json(const json::Value& v) {
  std::string text = json::dump(v);
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2))
    text.insert(at + 1, "\\");
  return text;
}

// A plugin's captured output, its last 4 KiB (results.jsonl has what the runner kept, up to
// 64 KiB), as a failure row shows it.
std::string output_tail(const std::string& output) {
  constexpr std::size_t kShown = 4096;
  const std::size_t from = output.size() > kShown ? output.size() - kShown : 0;
  return "its output (last " + std::to_string(output.size() - from) + " of " +
         std::to_string(output.size()) + " bytes kept):\n" + output.substr(from);
}

// One lazy row: what the table shows and what its filter matches (keys kept short: a page may
// carry kLazyRows of them). With `details`, what an opened failure row shows: every check with
// its residual and slack, the mismatch count, the bound usage, what the backend said it ran
// (its note) and the error heat map.
json::Value row_json(const Record& r, bool details) {
  const BackendRecord& x = r.result;
  json::Value o = json::Value::object();
  o["b"] = r.backend;
  o["v"] = verdict_name(x.verdict);
  o["k"] = x.check;
  o["op"] = r.op;
  o["dt"] = r.dtype;
  o["d"] = r.descriptor;
  o["f"] = fill_name(r.fill);
  o["s"] = std::to_string(r.seed);
  o["t"] = r.tag;
  o["r"] = x.output.empty() ? x.reason : x.reason + "\n" + output_tail(x.output);
  o["p"] = x.repro;
  if (!details) return o;
  if (!x.note.empty()) o["n"] = x.note;  // what the backend said it ran (Backend::last_note)
  o["c"] = x.contract;
  o["u"] = x.bound_usage;
  o["m"] = x.mismatches;
  // Checks and heat map in the records' one JSON form (oracle/json.cpp), as results.jsonl has them.
  const json::Value full = to_json(x);
  json::Value checks = full["adjoint"];
  for (const json::Value& m : full["metamorphic"]) checks.push_back(m);
  o["x"] = std::move(checks);
  if (!full["error_map"].is_null()) o["map"] = full["error_map"];
  return o;
}

// A lazy table's frame: filter box, count, header, an empty body the script fills, "show more",
// and its rows as JSON.
std::string lazy_table(const std::string& id, const std::vector<std::string>& columns,
                       const json::Value& rows, std::size_t total, const std::string& placeholder) {
  std::string o = "<input class=\"filter\" id=\"" + id +
                  "-filter\" type=\"search\" placeholder=\"" + escape_markup(placeholder) +
                  "\"> <span class=\"note count\" id=\"" + id + "-count\"></span>";
  o += "<table class=\"lazy\" id=\"" + id + "-table\" data-source=\"" + id + "-data\"><thead><tr>";
  for (const std::string& c : columns) o += "<th>" + escape_markup(c) + "</th>";
  o += "</tr></thead><tbody></tbody></table>";
  o += "<button type=\"button\" class=\"more\" id=\"" + id + "-more\">show more</button>";
  if (rows.size() < total)
    o += "<p class=\"note\">" + std::to_string(total - rows.size()) +
         " more in results.jsonl (the page carries the first " + std::to_string(rows.size()) +
         ").</p>";
  o +=
      "<script type=\"application/json\" id=\"" + id + "-data\">" + script_json(rows) + "</script>";
  return o;
}

std::string failures_section(const Page& p) {
  std::vector<const Record*> failures;
  for (const Record& r : p.records)
    if (is_failure(r.result.verdict)) failures.push_back(&r);
  std::string o =
      "<section id=\"failures\"><h2>Failures (" + std::to_string(failures.size()) + ")</h2>";
  if (failures.empty()) {
    o += "<p class=\"ok pill\">No failure: every judged pair passed or was not judged "
         "(unsupported, mistrusted).</p>";
  } else {
    o += "<p class=\"note\">Click a row for every check's result (residual and slack), the "
         "mismatch count, the bound usage and a heat map of where in the result the errors are. "
         "Filter by words, or by <code>backend:</code>, <code>op:</code>, <code>dtype:</code>, "
         "<code>check:</code> and <code>verdict:</code> (the verdict matrix's cells link "
         "here).</p>";
    if (failures.size() > kDetailRows)
      o += "<p class=\"note\">The first " + std::to_string(kDetailRows) +
           " failures carry their details; the others' are in results.jsonl.</p>";
    json::Value rows = json::Value::array();
    for (std::size_t i = 0; i < failures.size() && i < kLazyRows; ++i)
      rows.push_back(row_json(*failures[i], i < kDetailRows));
    o += lazy_table("failures", {"backend", "verdict", "check", "case", "reason", "repro"}, rows,
                    failures.size(), "filter: backend, op, check, text...");
  }
  return o + "</section>";
}

// Every pair that is neither pass nor a failure, with why: mistrusted (too degenerate to judge)
// and unsupported (the backend declined).
std::string not_judged_section(const Page& p) {
  std::vector<const Record*> rows_of;
  int64_t mistrusted = 0, unsupported = 0;
  for (const Record& r : p.records) {
    if (r.result.verdict != Verdict::mistrusted && r.result.verdict != Verdict::unsupported)
      continue;
    rows_of.push_back(&r);
    (r.result.verdict == Verdict::mistrusted ? mistrusted : unsupported) += 1;
  }
  std::string o = "<section id=\"not-judged\"><h2>Not judged: " + std::to_string(mistrusted) +
                  " mistrusted, " + std::to_string(unsupported) + " unsupported</h2>";
  o += "<p class=\"note\">Neither passes nor fails a run, and is never counted as passed. "
       "mistrusted: the oracle cannot judge the case (the reason says why: a bound meaningless "
       "for sums this long, an empty or all-zero exact result); unsupported: the backend declined "
       "the problem, with its reason.</p>";
  if (rows_of.empty()) {
    o += "<p class=\"ok pill\">Every pair was judged.</p>";
  } else {
    json::Value rows = json::Value::array();
    for (std::size_t i = 0; i < rows_of.size() && i < kLazyRows; ++i)
      rows.push_back(row_json(*rows_of[i], false));
    o += lazy_table("not-judged", {"backend", "verdict", "check", "case", "reason", "repro"}, rows,
                    rows_of.size(), "filter: backend, op, reason...");
  }
  return o + "</section>";
}

std::string coverage_section(const Page& p) {
  const RunInfo& info = p.info;
  const std::vector<Record>& records = p.records;
  const json::Value summary = json::parse(summary_json(info, records));
  const json::Value& cov = json::field(summary, "coverage");
  std::string o = "<section id=\"coverage\"><h2>Coverage of the equivalence classes</h2>";
  o += "<p class=\"note\">Cases per class and op, &ldquo;ran&rdquo; in brackets when fewer ran "
       "(a case runs when a backend executed it). Red: the op admits the class and no case of "
       "it ran. &mdash;: the op does not admit the class.</p>";
  o += "<table class=\"filterable\"><thead><tr><th>class</th>";
  for (Op op : kAllOps) {
    std::string name = op_name(op);  // let long op names wrap after their underscores
    for (std::size_t at = name.find('_'); at != std::string::npos; at = name.find('_', at + 6))
      name.insert(at + 1, "<wbr>");
    o += "<th>" + name + "</th>";
  }
  o += "<th>all</th></tr></thead><tbody>";
  for (const json::Value& c : json::array_of(cov, "classes")) {
    o += "<tr><td title=\"" + escape_markup(json::string_of(c, "description")) + "\">" +
         escape_markup(json::string_of(c, "class")) + "</td>";
    const json::Value& by_op = json::field(c, "by_op");
    for (Op op : kAllOps) {
      const json::Value* x = json::find(by_op, op_name(op));
      if (x == nullptr) {
        o += "<td class=\"na\">&mdash;</td>";
        continue;
      }
      const int64_t n = json::integer_of(*x, "cases"), ran = json::integer_of(*x, "ran");
      o += "<td class=\"num " + std::string(ran > 0 ? "ok" : "bad") + "\">" + std::to_string(n) +
           (ran != n ? " (" + std::to_string(ran) + ")" : "") + "</td>";
    }
    o += "<td class=\"num\">" + std::to_string(json::integer_of(c, "cases")) + "</td></tr>";
  }
  o += "</tbody></table>";
  const json::Value& not_run = json::array_of(cov, "not_run");
  o += "<p class=\"note\">Classes with no case that ran: ";
  if (not_run.empty()) o += "none";
  for (std::size_t i = 0; i < not_run.size(); ++i)
    o += (i ? ", " : "") + escape_markup(not_run[i].get<std::string>());
  o += ".</p></section>";

  return o;
}

std::string performance_section(const Page& p) {
  const std::vector<Record>& records = p.records;
  const std::vector<std::string>& backends = p.backends;
  std::string o = "<section id=\"performance\"><h2>Performance</h2>";
  o += "<p class=\"note\">No benchmark in this run: these are the oracle's times of each "
       "backend's main run per case (one run, cold caches, guard bands included), not medians "
       "and not against peak. For throughput against the machine's measured peak use "
       "<code>convcheck bench</code>.</p>";
  o += "<table class=\"filterable\"><thead><tr><th>backend</th><th>timed pairs</th><th>total "
       "s</th><th>median "
       "ms</th><th>p90 ms</th><th>max ms</th><th>slowest case</th></tr></thead><tbody>";
  std::vector<std::string> bar_labels;
  std::vector<double> bar_values;
  for (const std::string& b : backends) {
    std::vector<double> ms;
    const Record* slowest = nullptr;
    std::map<std::string, std::vector<double>> by_op;
    for (const Record& r : records) {
      if (r.backend != b || r.result.verdict == Verdict::unsupported) continue;
      ms.push_back(r.result.ms);
      by_op[r.op].push_back(r.result.ms);
      if (slowest == nullptr || r.result.ms > slowest->result.ms) slowest = &r;
    }
    double total = 0;
    for (double x : ms) total += x;
    o += "<tr><td>" + escape_markup(b) + "</td><td class=\"num\">" + std::to_string(ms.size()) +
         "</td><td class=\"num\">" + fmt("%.3f", total / 1000) + "</td><td class=\"num\">" +
         fmt("%.3f", quantile(ms, 0.5)) + "</td><td class=\"num\">" +
         fmt("%.3f", quantile(ms, 0.9)) + "</td><td class=\"num\">" +
         fmt("%.3f", ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end())) + "</td><td>" +
         (slowest ? "<code>" + escape_markup(slowest->descriptor) + "</code> (" +
                        escape_markup(fill_name(slowest->fill)) + ")"
                  : "&mdash;") +
         "</td></tr>";
    for (Op op : kAllOps) {
      auto it = by_op.find(op_name(op));
      if (it == by_op.end()) continue;
      bar_labels.push_back(b + " / " + op_name(op));
      bar_values.push_back(quantile(it->second, 0.5));
    }
  }
  o += "</tbody></table>";
  if (!bar_labels.empty())
    o += "<h3>Median time per case, by backend and op</h3>" +
         bars("median ms per case", bar_labels, bar_values, "ms");
  o += "</section>";

  return o;
}

std::string environment_section(const Page& p) {
  const RunInfo& info = p.info;
  std::string o =
      "<section id=\"environment\"><h2>Environment</h2><table class=\"filterable\"><tbody>";
  if (info.environment.is_object()) {
    for (auto it = info.environment.begin(); it != info.environment.end(); ++it)
      o += "<tr><th>" + escape_markup(it.key()) + "</th><td>" +
           escape_markup(it->is_string() ? it->get<std::string>() : json::dump(*it)) + "</td></tr>";
  }
  o += "<tr><th>suite</th><td>" + escape_markup(info.suite) + " (" +
       escape_markup(info.suite_path) + ", " + std::to_string(info.suite_cases) +
       " cases)</td></tr>";
  std::string shards = to_string(info.shard);
  if (!info.merged_shards.empty()) {
    shards = "merged from";
    for (const Shard& s : info.merged_shards) shards += " " + to_string(s);
  }
  o += "<tr><th>shard</th><td>" + escape_markup(shards) + "</td></tr>";
  o += "<tr><th>command</th><td><code>" + escape_markup(info.command) + "</code></td></tr>";
  o += "<tr><th>time</th><td>" + escape_markup(info.started) + " to " +
       escape_markup(info.finished) + ", " + fmt("%.1f", info.elapsed_s) + " s" +
       (info.interrupted ? " (interrupted)" : "") + "</td></tr>";
  o += "</tbody></table></section>";

  return o;
}

// The template with each {{slot}} replaced by its text (a slot the code does not fill is a bug).
std::string fill(std::string_view page, const std::map<std::string, std::string>& slots) {
  std::string o;
  std::size_t at = 0;
  for (std::size_t open; (open = page.find("{{", at)) != std::string_view::npos;) {
    const std::size_t close = page.find("}}", open);
    const std::string name(page.substr(open + 2, close - open - 2));
    auto it = slots.find(name);
    if (close == std::string_view::npos || it == slots.end())
      throw std::logic_error("report.html.in: unknown slot {{" + name + "}}");
    o.append(page.substr(at, open - at));
    o += it->second;
    at = close + 2;
  }
  o.append(page.substr(at));
  return o;
}

}  // namespace

std::string report_html(const RunInfo& info, const std::vector<Record>& records) {
  Page p{info, records, {}};
  for (const BackendLabel& b : info.backends) p.backends.push_back(b.name);
  for (const Record& r : records)
    if (std::find(p.backends.begin(), p.backends.end(), r.backend) == p.backends.end())
      p.backends.push_back(r.backend);
  return fill(kReportTemplate, {{"suite", escape_markup(info.suite)},
                                {"subtitle", subtitle(p)},
                                {"summary", summary_section(p)},
                                {"verdicts", verdicts_section(p)},
                                {"bound-usage", bound_usage_section(p)},
                                {"failures", failures_section(p)},
                                {"not-judged", not_judged_section(p)},
                                {"coverage", coverage_section(p)},
                                {"performance", performance_section(p)},
                                {"environment", environment_section(p)}});
}

}  // namespace convcheck::reports
