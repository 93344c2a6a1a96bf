#include "reports/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/json.h"
#include "core/stats.h"

namespace convcheck::reports {

namespace {

bool judged(const Record& r) {
  return r.result.verdict == Verdict::pass || r.result.verdict == Verdict::fail;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A note as the text prints it: quoted, or "(nothing)" for a run that said nothing.
std::string said(const std::string& note) {
  return note.empty() ? "(nothing)" : "'" + note + "'";
}

json::Value change_json(const Change& c) {
  using namespace json;
  Value o = Value::object();
  o["backend"] = c.b.backend;
  o["descriptor"] = c.b.descriptor;
  o["seed"] = c.b.seed;
  o["fill"] = fill_name(c.b.fill);
  o["tag"] = c.b.tag;
  Value a = Value::object(), b = Value::object();
  for (auto [x, r] : {std::pair<Value*, const Record*>{&a, &c.a}, {&b, &c.b}}) {
    (*x)["verdict"] = verdict_name(r->result.verdict);
    (*x)["check"] = r->result.check;
    (*x)["reason"] = r->result.reason;
    (*x)["bound_usage"] = r->result.bound_usage;
    (*x)["ms"] = r->result.ms;
    (*x)["repro"] = r->result.repro;
    (*x)["note"] = r->result.note;
  }
  o["a"] = a;
  o["b"] = b;
  return o;
}

}  // namespace

bool DiffResult::regression() const {
  return !new_failures.empty() || !bound_growth.empty() || slower_groups() > 0;
}

int64_t DiffResult::slower_groups() const {
  return std::count_if(perf.begin(), perf.end(),
                       [](const PerfGroup& g) { return g.change == PerfGroup::Change::slower; });
}

DiffResult diff(const std::vector<Record>& a, const std::vector<Record>& b,
                const DiffOptions& options) {
  DiffResult d;
  std::unordered_map<std::string, const Record*> in_a;
  for (const Record& r : a) in_a[r.key()] = &r;
  std::unordered_map<std::string, bool> seen;
  // (backend, op) -> log ratios; backend -> all log ratios
  std::map<std::pair<std::string, std::string>, std::vector<double>> groups;
  std::map<std::string, std::vector<double>> per_backend;
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> implementations;
  for (const Record& rb : b) {
    auto it = in_a.find(rb.key());
    if (it == in_a.end()) {
      ++d.only_b;
      continue;
    }
    seen[rb.key()] = true;
    ++d.matched;
    const Record& ra = *it->second;
    const BackendRecord &a = ra.result, &b = rb.result;
    const bool fa = is_failure(a.verdict), fb = is_failure(b.verdict);
    // (Only where both runs judged the pair: a backend that declined or crashed says nothing.)
    if (judged(ra) && judged(rb) && a.note != b.note)
      ++implementations[{rb.backend, a.note, b.note}];
    if (!fa && fb) {
      d.new_failures.push_back({ra, rb});
    } else if (fa && b.verdict == Verdict::pass) {
      d.fixed.push_back({ra, rb});
    } else if (a.verdict != b.verdict) {
      d.other.push_back({ra, rb});
    } else if (judged(ra) && judged(rb) && b.bound_usage > options.bound_floor &&
               b.bound_usage > options.bound_growth * a.bound_usage) {
      d.bound_growth.push_back({ra, rb});
    }
    if (a.verdict != Verdict::unsupported && b.verdict != Verdict::unsupported &&
        a.ms >= options.min_ms && b.ms >= options.min_ms && std::isfinite(a.ms) &&
        std::isfinite(b.ms)) {
      const double lr = std::log(b.ms / a.ms);
      groups[{rb.backend, rb.op}].push_back(lr);
      per_backend[rb.backend].push_back(lr);
    } else {
      ++d.perf_untimed;
    }
  }
  for (const Record& r : a)
    if (!seen.count(r.key())) ++d.only_a;
  for (const auto& [key, n] : implementations)
    d.implementations.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});

  std::map<std::string, double> sigma;
  for (auto& [backend, v] : per_backend) {
    const double m = median(v);
    std::vector<double> dev;
    for (double x : v) dev.push_back(std::fabs(x - m));
    sigma[backend] = 1.4826 * median(dev);
  }
  for (const auto& [key, v] : groups) {
    if (static_cast<int64_t>(v.size()) < options.min_pairs) continue;
    PerfGroup g;
    g.backend = key.first;
    g.op = key.second;
    g.pairs = static_cast<int64_t>(v.size());
    g.sigma = sigma[key.first];
    const double m = median(v);
    g.median_ratio = std::exp(m);
    const double se = 1.2533 * g.sigma / std::sqrt(static_cast<double>(v.size()));
    const double limit = std::max(std::log1p(options.min_slowdown), options.z * se);
    g.threshold = std::exp(limit);
    if (m > limit) g.change = PerfGroup::Change::slower;
    if (m < -limit) g.change = PerfGroup::Change::faster;
    d.perf.push_back(g);
  }
  return d;
}

std::string diff_text(const DiffResult& d, const std::string& a_name, const std::string& b_name) {
  std::string o = "report diff " + a_name + " -> " + b_name + ": " + std::to_string(d.matched) +
                  " (case, backend) pairs in both";
  if (d.only_a || d.only_b)
    o += " (" + std::to_string(d.only_a) + " only in A, " + std::to_string(d.only_b) +
         " only in B: not compared)";
  o += "\n";
  auto list = [&](const char* title, const std::vector<Change>& cs, bool show_usage) {
    o += "\n" + std::string(title) + " (" + std::to_string(cs.size()) + ")\n";
    if (cs.empty()) return;
    char head[200];
    std::snprintf(head, sizeof head, "  %-14s %-22s %-22s %s\n", "backend", "A", "B", "case");
    o += head;
    for (const Change& c : cs) {
      auto v = [&](const Record& r) {
        const BackendRecord& b = r.result;
        std::string s = verdict_name(b.verdict) + (b.check.empty() ? "" : " [" + b.check + "]");
        if (show_usage) s = "usage " + fmt("%.3g", b.bound_usage);
        return s;
      };
      char line[400];
      std::snprintf(line, sizeof line, "  %-14s %-22s %-22s ", c.b.backend.c_str(), v(c.a).c_str(),
                    v(c.b).c_str());
      o += line + c.b.descriptor + " (fill " + fill_name(c.b.fill) + ", seed " +
           std::to_string(c.b.seed) + ")\n";
      if (!c.b.result.reason.empty() && !show_usage) o += "      B: " + c.b.result.reason + "\n";
      if (c.a.result.note != c.b.result.note)
        o += "      ran: A " + said(c.a.result.note) + ", B " + said(c.b.result.note) + "\n";
      else if (!c.b.result.note.empty())
        o += "      ran: " + said(c.b.result.note) + "\n";
      o += "      repro: " + c.b.result.repro + "\n";
    }
  };
  list("NEW FAILURES", d.new_failures, false);
  list("FIXED", d.fixed, false);
  list("BOUND USAGE GREW (> 2x and > 0.5)", d.bound_growth, true);
  list("OTHER VERDICT CHANGES", d.other, false);
  // Only where there are some: runs of backends that name nothing read as before.
  if (!d.implementations.empty()) {
    o += "\nIMPLEMENTATION CHANGES (what a backend said it ran, A -> B: pairs)\n";
    for (const ImplementationChange& c : d.implementations) {
      char count[32];
      std::snprintf(count, sizeof count, " %6lld  ", static_cast<long long>(c.pairs));
      o += "  " + c.backend + std::string(c.backend.size() < 14 ? 14 - c.backend.size() : 0, ' ') +
           count + said(c.a) + " -> " + said(c.b) + "\n";
    }
  }
  o += "\nPERFORMANCE (median time ratio B/A per backend and op; noise from the per-case "
       "spread)\n";
  if (d.perf.empty()) {
    o += "  not judged: no group of enough cases timed at >= 1 ms in both runs (" +
         std::to_string(d.perf_untimed) + " pairs untimed or too short)\n";
  } else {
    char head[200];
    std::snprintf(head, sizeof head, "  %-14s %-34s %6s %9s %10s %8s  %s\n", "backend", "op",
                  "pairs", "B/A", "threshold", "sigma", "change");
    o += head;
    for (const PerfGroup& g : d.perf) {
      char line[300];
      std::snprintf(line, sizeof line, "  %-14s %-34s %6lld %9.3f %10.3f %8.3f  %s\n",
                    g.backend.c_str(), g.op.c_str(), static_cast<long long>(g.pairs),
                    g.median_ratio, g.threshold, g.sigma,
                    g.change == PerfGroup::Change::slower   ? "SLOWER"
                    : g.change == PerfGroup::Change::faster ? "faster"
                                                            : "within noise");
      o += line;
    }
  }
  o += "\n";
  if (d.regression()) {
    o += "REGRESSION: " + std::to_string(d.new_failures.size()) + " new failure(s), " +
         std::to_string(d.bound_growth.size()) + " bound-usage growth(s), " +
         std::to_string(d.slower_groups()) + " slower group(s)\n";
  } else {
    o += "no regression (" + std::to_string(d.fixed.size()) + " fixed)\n";
  }
  return o;
}

std::string diff_json(const DiffResult& d, const std::string& a_name, const std::string& b_name) {
  using namespace json;
  Value o = Value::object();
  o["a"] = a_name;
  o["b"] = b_name;
  o["regression"] = d.regression();
  o["matched"] = d.matched;
  o["only_a"] = d.only_a;
  o["only_b"] = d.only_b;
  for (auto [name, cs] :
       {std::pair<const char*, const std::vector<Change>*>{"new_failures", &d.new_failures},
        {"fixed", &d.fixed},
        {"bound_growth", &d.bound_growth},
        {"other_changes", &d.other}}) {
    Value a = Value::array();
    for (const Change& c : *cs) a.push_back(change_json(c));
    o[name] = a;
  }
  Value perf = Value::array();
  for (const PerfGroup& g : d.perf) {
    Value x = Value::object();
    x["backend"] = g.backend;
    x["op"] = g.op;
    x["pairs"] = g.pairs;
    x["median_ratio"] = g.median_ratio;
    x["threshold"] = g.threshold;
    x["sigma"] = g.sigma;
    x["change"] = g.change == PerfGroup::Change::slower   ? "slower"
                  : g.change == PerfGroup::Change::faster ? "faster"
                                                          : "none";
    perf.push_back(x);
  }
  o["performance"] = perf;
  o["perf_untimed"] = d.perf_untimed;
  Value impl = Value::array();
  for (const ImplementationChange& c : d.implementations) {
    Value x = Value::object();
    x["backend"] = c.backend;
    x["a"] = c.a;
    x["b"] = c.b;
    x["pairs"] = c.pairs;
    impl.push_back(x);
  }
  o["implementation_changes"] = impl;
  return dump(o, 1) + "\n";
}

}  // namespace convcheck::reports
