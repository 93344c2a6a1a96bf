// report.html: see render.h. The page is reports/report.html.in (style, script, layout), embedded
// at build time as kReportTemplate; its {{slots}} are filled here, each section drawn in C++ as
// HTML tables and inline SVG. The page's script only adds the failure filter and checks that every
// section rendered.
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
  o += "<table><thead><tr><th>op</th><th>dtype</th>";
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
        o += "<td class=\"" + std::string(verdict_class(jt->second)) + "\">" +
             verdict_cell(jt->second) + "</td>";
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

// A plugin's captured output under its failure, folded: the last 4 KiB (results.jsonl has what
// the runner kept, up to 64 KiB).
std::string output_details(const std::string& output) {
  constexpr std::size_t kShown = 4096;
  if (output.empty()) return "";
  const std::size_t from = output.size() > kShown ? output.size() - kShown : 0;
  return "<details><summary>its output (last " + std::to_string(output.size() - from) + " of " +
         std::to_string(output.size()) + " bytes kept)</summary><pre>" +
         escape_markup(output.substr(from)) + "</pre></details>";
}

std::string failures_section(const Page& p) {
  const std::vector<Record>& records = p.records;
  std::vector<const Record*> failures;
  for (const Record& r : records)
    if (is_failure(r.result.verdict)) failures.push_back(&r);
  std::string o =
      "<section id=\"failures\"><h2>Failures (" + std::to_string(failures.size()) + ")</h2>";
  if (failures.empty()) {
    o += "<p class=\"ok pill\">No failure: every judged pair passed or was not judged "
         "(unsupported, mistrusted).</p>";
  } else {
    const std::size_t shown = std::min<std::size_t>(failures.size(), 1000);
    o += "<input id=\"failure-filter\" type=\"search\" placeholder=\"filter: backend, op, "
         "check, text...\"> <span id=\"failure-count\" class=\"note\">" +
         std::to_string(shown) + " shown</span>";
    o += "<table><thead><tr><th>backend</th><th>verdict</th><th>check</th><th>case</th>"
         "<th>reason</th><th>repro</th></tr></thead><tbody>";
    for (std::size_t i = 0; i < shown; ++i) {
      const Record& r = *failures[i];
      const BackendRecord& x = r.result;
      o += "<tr><td>" + escape_markup(r.backend) + "</td><td class=\"bad\">" +
           escape_markup(verdict_name(x.verdict)) + "</td><td>" + escape_markup(x.check) +
           "</td><td><code>" + escape_markup(r.descriptor) + "</code><br>fill " +
           escape_markup(fill_name(r.fill)) + ", seed " + std::to_string(r.seed) +
           (r.tag.empty() ? "" : ", tag " + escape_markup(r.tag)) + "</td><td>" +
           escape_markup(x.reason) + output_details(x.output) + "</td><td><code>" +
           escape_markup(x.repro) + "</code></td></tr>";
    }
    o += "</tbody></table>";
    if (shown < failures.size())
      o += "<p class=\"note\">" + std::to_string(failures.size() - shown) +
           " more in results.jsonl.</p>";
  }
  o += "</section>";

  return o;
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
  o += "<table><thead><tr><th>class</th>";
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
  o += "<table><thead><tr><th>backend</th><th>timed pairs</th><th>total s</th><th>median "
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
  std::string o = "<section id=\"environment\"><h2>Environment</h2><table><tbody>";
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
                                {"coverage", coverage_section(p)},
                                {"performance", performance_section(p)},
                                {"environment", environment_section(p)}});
}

}  // namespace convcheck::reports
