#include "reports/results.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "core/error.h"
#include "reports/json.h"

namespace convcheck::reports {

namespace {

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

json::Value relation_json(const Relation& r) {
  json::Value o = json::make_object();
  json::add(o, "name", json::make_string(r.name));
  json::add(o, "applicable", json::make_bool(r.applicable));
  json::add(o, "passed", r.applicable ? json::make_bool(r.passed) : json::Value{});
  json::add(o, "residual", json::make_number(r.residual));
  json::add(o, "slack", json::make_number(r.slack));
  json::add(o, "detail", json::make_string(r.detail));
  return o;
}

std::vector<Relation> relations_of(const json::Value& o, const char* key) {
  const json::Value& a = json::field(o, key);
  if (!a.is_array()) throw std::runtime_error(std::string("field \"") + key + "\" is not an array");
  std::vector<Relation> out;
  for (const json::Value& x : a.items) {
    Relation r;
    r.name = json::string_of(x, "name");
    r.applicable = json::bool_of(x, "applicable");
    r.passed = r.applicable && json::bool_of(x, "passed");
    r.residual = json::number_of(x, "residual");
    r.slack = json::number_of(x, "slack");
    r.detail = json::string_of(x, "detail");
    out.push_back(std::move(r));
  }
  return out;
}

uint64_t unsigned_of(const json::Value& o, const char* key) {
  const json::Value& v = json::field(o, key);
  if (v.type != json::Value::Type::number || v.s.empty() || v.s[0] == '-' ||
      v.s.find_first_of(".eE") != std::string::npos)
    throw std::runtime_error(std::string("field \"") + key + "\" is not a non-negative integer");
  errno = 0;
  const unsigned long long x = std::strtoull(v.s.c_str(), nullptr, 10);
  if (errno == ERANGE)
    throw std::runtime_error(std::string("field \"") + key + "\" is out of the 64-bit range");
  return x;
}

}  // namespace

uint64_t case_seed(const Problem& p, FillKind fill, int occurrence) {
  std::string text = to_string(p) + "|" + fill_name(fill);
  if (occurrence > 0) text += "|" + std::to_string(occurrence);
  return fnv1a64(text) & 0xffffffffull;
}

std::vector<RunCase> suite_cases(const Suite& suite) {
  std::vector<RunCase> out;
  std::map<std::string, int> seen;
  for (const SuiteEntry& e : suite.entries) {
    std::vector<FillKind> fills;
    if (e.fill) {
      std::optional<FillKind> f = parse_fill(*e.fill);
      if (!f) {
        throw InvalidArgument(suite.path + ":" + std::to_string(e.line) + ": unknown fill '" +
                              *e.fill + "' (expected " + fill_names(kOracleFill) + ")");
      }
      fills.push_back(*f);
    } else {
      fills.assign(std::begin(kDefaultFills), std::end(kDefaultFills));
    }
    for (FillKind f : fills) {
      const std::string id = to_string(e.problem) + "|" + fill_name(f);
      const int occurrence = seen[id]++;
      RunCase rc;
      rc.index = static_cast<int64_t>(out.size());
      rc.c.problem = e.problem;
      rc.c.fill = f;
      rc.c.seed = case_seed(e.problem, f, occurrence);
      rc.tag = e.tag;
      rc.line = e.line;
      out.push_back(std::move(rc));
    }
  }
  return out;
}

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto bad = [&] {
    return InvalidArgument("--shard '" + text +
                           "': expected K/N with 1 <= K <= N (shard K of N, e.g. 2/8)");
  };
  if (slash == std::string::npos || slash == 0 || slash + 1 >= text.size()) throw bad();
  auto integer = [&](const std::string& s) -> int64_t {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      throw bad();
    return std::stoll(s);
  };
  Shard s;
  s.k = integer(text.substr(0, slash));
  s.n = integer(text.substr(slash + 1));
  if (s.n < 1 || s.k < 1 || s.k > s.n) throw bad();
  return s;
}

std::string to_string(const Shard& s) {
  return std::to_string(s.k) + "/" + std::to_string(s.n);
}

std::string Record::case_key() const {
  return descriptor + "|" + std::to_string(seed) + "|" + fill;
}
std::string Record::key() const {
  return case_key() + "|" + backend;
}

bool is_failure(const std::string& verdict) {
  return verdict == "fail" || verdict == "crashed" || verdict == "timeout";
}

std::vector<Record> records_of(const CaseReport& report, const RunCase& rc,
                               const std::vector<std::string>& labels) {
  std::vector<Record> out;
  const Problem& p = report.c.problem;
  std::string odd;
  for (std::size_t i = 0; i < report.records.size(); ++i)
    if (report.records[i].backend == report.odd_one_out && !report.odd_one_out.empty())
      odd = i < labels.size() ? labels[i] : report.odd_one_out;
  for (std::size_t i = 0; i < report.records.size(); ++i) {
    const BackendRecord& b = report.records[i];
    Record r;
    r.case_index = rc.index;
    r.descriptor = to_string(p);
    r.op = op_name(p.op);
    r.dtype = dtype_name(p.dtype);
    r.format = format_name(p.format);
    r.seed = report.c.seed;
    r.fill = fill_name(report.c.fill);
    r.tag = rc.tag;
    r.backend = i < labels.size() ? labels[i] : b.backend;
    r.implementation = b.backend;
    r.verdict = verdict_name(b.verdict);
    r.check = b.check;
    r.reason = b.reason;
    r.contract = b.contract;
    r.bound_usage = b.bound_usage;
    r.mismatches = b.mismatches;
    if (b.first) {
      r.has_offender = true;
      r.offender_coord = b.first->coord;
      r.offender_index = b.first->index;
      r.offender_ref = b.first->ref;
      r.offender_got = b.first->got;
      r.offender_bound = b.first->bound;
    }
    for (const auto* list : {&b.adjoint, &b.metamorphic}) {
      for (const RelationResult& x : *list) {
        Relation y{x.name, x.applicable, x.passed, x.residual, x.slack, x.detail};
        (list == &b.adjoint ? r.adjoint : r.metamorphic).push_back(std::move(y));
      }
    }
    r.ms = b.ms;
    r.cpu_admission = admission_kind_name(report.admission.cpu.kind);
    r.cpu_message = report.admission.cpu.message;
    r.gpu_admission = admission_kind_name(report.admission.gpu.kind);
    r.gpu_message = report.admission.gpu.message;
    r.odd_one_out = odd;
    r.repro = b.repro;
    out.push_back(std::move(r));
  }
  return out;
}

std::string to_jsonl(const Record& r) {
  using namespace json;
  Value o = make_object();
  add(o, "case", make_integer(r.case_index));
  add(o, "descriptor", make_string(r.descriptor));
  add(o, "op", make_string(r.op));
  add(o, "dtype", make_string(r.dtype));
  add(o, "format", make_string(r.format));
  Value seed;
  seed.type = Value::Type::number;
  seed.s = std::to_string(r.seed);
  seed.n = static_cast<double>(r.seed);
  add(o, "seed", seed);
  add(o, "fill", make_string(r.fill));
  add(o, "tag", make_string(r.tag));
  add(o, "backend", make_string(r.backend));
  add(o, "implementation", make_string(r.implementation));
  add(o, "verdict", make_string(r.verdict));
  add(o, "check", make_string(r.check));
  add(o, "reason", make_string(r.reason));
  add(o, "contract", make_string(r.contract));
  add(o, "bound_usage", make_number(r.bound_usage));
  add(o, "mismatches", make_integer(r.mismatches));
  if (r.has_offender) {
    Value f = make_object();
    Value coord = make_array();
    for (int64_t c : r.offender_coord) coord.items.push_back(make_integer(c));
    add(f, "coord", coord);
    add(f, "index", make_integer(r.offender_index));
    add(f, "ref", make_number(r.offender_ref));
    add(f, "got", make_number(r.offender_got));
    add(f, "bound", make_number(r.offender_bound));
    add(o, "first_offender", f);
  } else {
    add(o, "first_offender", Value{});
  }
  for (const auto* list : {&r.adjoint, &r.metamorphic}) {
    Value a = make_array();
    for (const Relation& x : *list) a.items.push_back(relation_json(x));
    add(o, list == &r.adjoint ? "adjoint" : "metamorphic", a);
  }
  add(o, "ms", make_number(r.ms));
  Value adm = make_object();
  Value cpu = make_object(), gpu = make_object();
  add(cpu, "kind", make_string(r.cpu_admission));
  add(cpu, "message", make_string(r.cpu_message));
  add(gpu, "kind", make_string(r.gpu_admission));
  add(gpu, "message", make_string(r.gpu_message));
  add(adm, "cpu", cpu);
  add(adm, "gpu", gpu);
  add(o, "tf_admission", adm);
  add(o, "odd_one_out", r.odd_one_out.empty() ? Value{} : make_string(r.odd_one_out));
  add(o, "repro", make_string(r.repro));
  return dump(o);
}

Record parse_record(const std::string& line) {
  const json::Value o = json::parse(line);
  if (!o.is_object()) throw std::runtime_error("not a JSON object");
  Record r;
  r.case_index = json::integer_of(o, "case");
  r.descriptor = json::string_of(o, "descriptor");
  try {
    const Problem p = parse_problem(r.descriptor);
    r.op = op_name(p.op);
    r.dtype = dtype_name(p.dtype);
    r.format = format_name(p.format);
  } catch (const InvalidArgument& e) {
    throw std::runtime_error("field \"descriptor\": " + std::string(e.what()));
  }
  r.seed = unsigned_of(o, "seed");
  r.fill = json::string_of(o, "fill");
  if (!parse_fill(r.fill))
    throw std::runtime_error("field \"fill\": unknown fill '" + r.fill + "'");
  r.tag = json::string_of(o, "tag");
  r.backend = json::string_of(o, "backend");
  r.implementation = json::string_of(o, "implementation");
  r.verdict = json::string_of(o, "verdict");
  if (std::find_if(std::begin(kVerdicts), std::end(kVerdicts),
                   [&](const char* v) { return r.verdict == v; }) == std::end(kVerdicts))
    throw std::runtime_error("field \"verdict\": unknown verdict '" + r.verdict + "'");
  r.check = json::string_of(o, "check");
  r.reason = json::string_of(o, "reason");
  r.contract = json::string_of(o, "contract");
  r.bound_usage = json::number_of(o, "bound_usage");
  r.mismatches = json::integer_of(o, "mismatches");
  const json::Value& f = json::field(o, "first_offender");
  if (!f.is_null()) {
    r.has_offender = true;
    const json::Value& coord = json::field(f, "coord");
    if (!coord.is_array() || coord.items.size() != 4)
      throw std::runtime_error("field \"first_offender.coord\" is not an array of 4 integers");
    for (int k = 0; k < 4; ++k) {
      json::Value wrap = json::make_object();
      json::add(wrap, "c", coord.items[k]);
      r.offender_coord[k] = json::integer_of(wrap, "c");
    }
    r.offender_index = json::integer_of(f, "index");
    r.offender_ref = json::number_of(f, "ref");
    r.offender_got = json::number_of(f, "got");
    r.offender_bound = json::number_of(f, "bound");
  }
  r.adjoint = relations_of(o, "adjoint");
  r.metamorphic = relations_of(o, "metamorphic");
  r.ms = json::number_of(o, "ms");
  const json::Value& adm = json::field(o, "tf_admission");
  r.cpu_admission = json::string_of(json::field(adm, "cpu"), "kind");
  r.cpu_message = json::string_of(json::field(adm, "cpu"), "message");
  r.gpu_admission = json::string_of(json::field(adm, "gpu"), "kind");
  r.gpu_message = json::string_of(json::field(adm, "gpu"), "message");
  const json::Value& odd = json::field(o, "odd_one_out");
  if (!odd.is_null()) r.odd_one_out = json::string_of(o, "odd_one_out");
  r.repro = json::string_of(o, "repro");
  return r;
}

ReadResult read_results(const std::string& path) {
  ReadResult out;
  std::ifstream f(path, std::ios::binary);
  if (!f) return out;
  std::ostringstream text;
  text << f.rdbuf();
  const std::string all = text.str();
  std::size_t pos = 0;
  for (int line = 1; pos < all.size(); ++line) {
    const std::size_t nl = all.find('\n', pos);
    const bool last = nl == std::string::npos;
    const std::string s = all.substr(pos, last ? std::string::npos : nl - pos);
    if (s.find_first_not_of(" \t\r") == std::string::npos) {
      if (!last) out.valid_bytes = nl + 1;
      pos = last ? all.size() : nl + 1;
      continue;
    }
    try {
      out.records.push_back(parse_record(s));
    } catch (const std::exception& e) {
      if (last) {
        // A run killed mid-write leaves its last line without a newline: ignore that line.
        out.truncated_tail = true;
        break;
      }
      throw InvalidArgument(path + ":" + std::to_string(line) + ": malformed record: " + e.what());
    }
    if (last) {
      // Complete record without a newline: keep it; appends must add the newline first.
      out.valid_bytes = all.size();
      break;
    }
    out.valid_bytes = nl + 1;
    pos = nl + 1;
  }
  return out;
}

std::vector<Record> deduplicate(std::vector<Record> records, const std::string& where) {
  std::unordered_map<std::string, std::size_t> at;
  std::vector<Record> out;
  for (Record& r : records) {
    const std::string k = r.key();
    auto it = at.find(k);
    if (it == at.end()) {
      at.emplace(k, out.size());
      out.push_back(std::move(r));
      continue;
    }
    Record& prev = out[it->second];
    if (prev.verdict != r.verdict) {
      throw InvalidArgument(where + ": case " + r.case_key() + " on backend " + r.backend +
                            " is recorded twice with different verdicts (" + prev.verdict +
                            " and " + r.verdict + ")");
    }
    prev = std::move(r);
  }
  return out;
}

}  // namespace convcheck::reports
