// The one JSON form of the oracle's records (check --json, verify --json, results.jsonl).
#include "core/json.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/json_reader.h"
#include "core/problem.h"
#include "oracle/oracle.h"

namespace convcheck {

namespace {

json::Value relations_json(const std::vector<RelationResult>& rs) {
  json::Value a = json::Value::array();
  for (const RelationResult& r : rs) {
    json::Value o;
    o["name"] = r.name;
    o["applicable"] = r.applicable;
    o["passed"] = r.applicable ? json::Value(r.passed) : json::Value();
    o["residual"] = r.residual;
    o["slack"] = r.slack;
    o["detail"] = r.detail;
    // nan_footprint's two counts, where it found NaN out of place (absent: none, or another
    // relation, or a rerun failure, which the detail names).
    if (r.nan_extra != 0 || r.nan_missing != 0) {
      o["nan_extra"] = r.nan_extra;
      o["nan_missing"] = r.nan_missing;
    }
    a.push_back(std::move(o));
  }
  return a;
}

std::vector<RelationResult> relations_of(const json::Object& o, const char* key) {
  std::vector<RelationResult> out;
  for (const json::Node node : json::array_of(o, key)) {
    const json::Object x(node);
    RelationResult r;
    r.name = json::string_of(x, "name");
    r.applicable = json::bool_of(x, "applicable");
    r.passed = r.applicable && json::bool_of(x, "passed");
    r.residual = json::number_of(x, "residual");
    r.slack = json::number_of(x, "slack");
    r.detail = json::string_of(x, "detail");
    if (x.find("nan_extra") || x.find("nan_missing")) {
      r.nan_extra = json::integer_of(x, "nan_extra");
      r.nan_missing = json::integer_of(x, "nan_missing");
      for (const auto& [key, value] :
           {std::pair{"nan_extra", r.nan_extra}, std::pair{"nan_missing", r.nan_missing}})
        if (value < 0) throw std::runtime_error(std::string("field \"") + key + "\" is negative");
    }
    out.push_back(std::move(r));
  }
  return out;
}

json::Value offender_json(const Offender& f) {
  json::Value o;
  o["coord"] = json::Value::array();
  for (int64_t c : f.coord) o["coord"].push_back(c);
  o["index"] = f.index;
  o["ref"] = f.ref;
  o["got"] = f.got;
  o["bound"] = f.bound;
  return o;
}

Offender offender_of(const json::Object& f) {
  Offender o;
  auto bad = [] {
    return std::runtime_error("field \"first_offender.coord\" is not an array of 4 integers");
  };
  simdjson::dom::array coord;
  if (json::field(f, "coord").get(coord) != simdjson::SUCCESS || coord.size() != 4) throw bad();
  std::size_t k = 0;
  for (const json::Node c : coord) {
    // An integer above INT64_MAX is simdjson's UINT64, and not one of these.
    if (c.get(o.coord[k++]) != simdjson::SUCCESS) throw bad();
  }
  o.index = json::integer_of(f, "index");
  o.ref = json::number_of(f, "ref");
  o.got = json::number_of(f, "got");
  o.bound = json::number_of(f, "bound");
  return o;
}

// Cells to 3 significant digits: a map is a picture, and the file stays small.
json::Value error_map_json(const ErrorMap& m) {
  json::Value o;
  o["rows"] = m.rows;
  o["cols"] = m.cols;
  o["slice"] = m.slice;
  o["extent"] = json::Value::array({m.extent[0], m.extent[1]});
  o["cell"] = json::Value::array({m.cell[0], m.cell[1]});
  json::Value usage = json::Value::array();
  for (const std::vector<double>& row : m.usage) {
    json::Value r = json::Value::array();
    for (double u : row) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", u);
      r.push_back(std::isfinite(u) ? std::strtod(buf, nullptr) : u);
    }
    usage.push_back(std::move(r));
  }
  o["usage"] = std::move(usage);
  return o;
}

ErrorMap error_map_of(const json::Object& o) {
  ErrorMap m;
  m.rows = json::string_of(o, "rows");
  m.cols = json::string_of(o, "cols");
  m.slice = json::string_of(o, "slice");
  auto pair = [&](const char* key, std::array<int64_t, 2>& out) {
    simdjson::dom::array a = json::array_of(o, key);
    if (a.size() != 2)
      throw std::runtime_error(std::string("field \"error_map.") + key +
                               "\" is not an array of 2 integers");
    std::size_t k = 0;
    for (const json::Node x : a)
      if (x.get(out[k++]) != simdjson::SUCCESS)
        throw std::runtime_error(std::string("field \"error_map.") + key +
                                 "\" is not an array of 2 integers");
  };
  pair("extent", m.extent);
  pair("cell", m.cell);
  for (const json::Node row : json::array_of(o, "usage")) {
    simdjson::dom::array cells;
    if (row.get(cells) != simdjson::SUCCESS)
      throw std::runtime_error("field \"error_map.usage\" is not an array of rows");
    std::vector<double> r;
    for (const json::Node x : cells) {
      double v = 0;
      std::string_view text;
      if (x.get(v) == simdjson::SUCCESS) {
        r.push_back(v);
      } else if (x.get(text) == simdjson::SUCCESS && json::special_number(text)) {
        r.push_back(*json::special_number(text));
      } else {
        throw std::runtime_error("field \"error_map.usage\" holds a cell that is not a number");
      }
    }
    m.usage.push_back(std::move(r));
  }
  return m;
}

json::Value admission_json(const Admission& a) {
  json::Value o;
  o["kind"] = admission_kind_name(a.kind);
  o["message"] = a.message;
  return o;
}

Admission admission_of(const json::Object& o, const char* which) {
  Admission a;
  const std::string_view kind = json::string_of(o, "kind");
  bool known = false;
  for (Admission::Kind k :
       {Admission::Kind::accepted, Admission::Kind::refused, Admission::Kind::differs}) {
    if (kind == admission_kind_name(k)) {
      a.kind = k;
      known = true;
    }
  }
  if (!known)
    throw std::runtime_error(std::string("field \"tf_admission.") + which +
                             ".kind\": unknown kind '" + std::string(kind) + "'");
  a.message = json::string_of(o, "message");
  return a;
}

}  // namespace

json::Value to_json(const BackendRecord& b) {
  json::Value o;
  o["backend"] = b.backend;
  o["verdict"] = verdict_name(b.verdict);
  o["check"] = b.check;
  o["reason"] = b.reason;
  o["contract"] = b.contract;
  o["bound_usage"] = b.bound_usage;
  o["mismatches"] = b.mismatches;
  o["first_offender"] = b.first ? offender_json(*b.first) : json::Value();
  o["error_map"] = b.error_map ? error_map_json(*b.error_map) : json::Value();
  o["adjoint"] = relations_json(b.adjoint);
  o["metamorphic"] = relations_json(b.metamorphic);
  o["ms"] = b.ms;
  if (!b.note.empty()) o["note"] = b.note;
  if (!b.output.empty()) o["output"] = b.output;
  o["repro"] = b.repro;
  return o;
}

BackendRecord backend_record_from_json(const json::Object& o) {
  BackendRecord b;
  const std::string_view verdict = json::string_of(o, "verdict");
  const std::optional<Verdict> v = parse_verdict(verdict);
  if (!v)
    throw std::runtime_error("field \"verdict\": unknown verdict '" + std::string(verdict) + "'");
  b.verdict = *v;
  b.check = json::string_of(o, "check");
  b.reason = json::string_of(o, "reason");
  b.contract = json::string_of(o, "contract");
  b.bound_usage = json::number_of(o, "bound_usage");
  b.mismatches = json::integer_of(o, "mismatches");
  const json::Node f = json::field(o, "first_offender");
  if (!f.is_null()) b.first = offender_of(json::Object(f));
  // Absent in records written before issue 19.
  if (const std::optional<json::Node> m = o.find("error_map"); m && !m->is_null())
    b.error_map = error_map_of(json::Object(*m));
  b.adjoint = relations_of(o, "adjoint");
  b.metamorphic = relations_of(o, "metamorphic");
  b.ms = json::number_of(o, "ms");
  if (o.find("note")) b.note = json::string_of(o, "note");
  if (o.find("output")) b.output = json::string_of(o, "output");
  b.repro = json::string_of(o, "repro");
  return b;
}

json::Value to_json(const TfAdmission& a) {
  json::Value o;
  o["cpu"] = admission_json(a.cpu);
  o["gpu"] = admission_json(a.gpu);
  return o;
}

TfAdmission admission_from_json(const json::Object& o) {
  TfAdmission a;
  a.cpu = admission_of(json::Object(json::field(o, "cpu")), "cpu");
  a.gpu = admission_of(json::Object(json::field(o, "gpu")), "gpu");
  return a;
}

std::string to_json(const CaseReport& r) {
  json::Value o;
  o["problem"] = to_string(r.c.problem);
  o["seed"] = r.c.seed;
  o["fill"] = fill_name(r.c.fill);
  o["tf_admission"] = to_json(r.admission);
  o["odd_one_out"] = r.odd_one_out.empty() ? json::Value() : json::Value(r.odd_one_out);
  o["backends"] = json::Value::array();
  for (const BackendRecord& b : r.records) o["backends"].push_back(to_json(b));
  return json::dump(o);
}

}  // namespace convcheck
