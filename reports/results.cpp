#include "reports/results.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include "core/error.h"
#include "core/json.h"
#include "core/json_reader.h"

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
  return descriptor + "|" + std::to_string(seed) + "|" + fill_name(fill);
}
std::string Record::key() const {
  return case_key() + "|" + backend;
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
    Record r;
    r.case_index = rc.index;
    r.descriptor = to_string(p);
    r.op = op_name(p.op);
    r.dtype = dtype_name(p.dtype);
    r.format = format_name(p.format);
    r.seed = report.c.seed;
    r.fill = report.c.fill;
    r.tag = rc.tag;
    r.backend = i < labels.size() ? labels[i] : report.records[i].backend;
    r.result = report.records[i];
    r.admission = report.admission;
    r.odd_one_out = odd;
    out.push_back(std::move(r));
  }
  return out;
}

std::string to_jsonl(const Record& r) {
  json::Value o;
  o["case"] = r.case_index;
  o["descriptor"] = r.descriptor;
  o["op"] = r.op;
  o["dtype"] = r.dtype;
  o["format"] = r.format;
  o["seed"] = r.seed;
  o["fill"] = fill_name(r.fill);
  o["tag"] = r.tag;
  o["backend"] = r.backend;
  o["implementation"] = r.result.backend;
  // The oracle's record, its backend named above, the case's admission and odd one out before
  // its repro line.
  json::Value b = to_json(r.result);
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (it.key() == "backend") continue;
    if (it.key() == "repro") {
      o["tf_admission"] = to_json(r.admission);
      o["odd_one_out"] = r.odd_one_out.empty() ? json::Value() : json::Value(r.odd_one_out);
    }
    o[it.key()] = std::move(it.value());
  }
  return json::dump(o);
}

namespace {

// The one mapping of a results.jsonl line to a Record (the oracle's part: oracle/json.cpp).
Record record_of(json::Reader& reader, std::string_view line) {
  const json::Node node = reader.parse(line);
  if (!node.is_object()) throw std::runtime_error("not a JSON object");
  const json::Object o(node);
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
  r.seed = json::unsigned_of(o, "seed");
  const std::string_view fill = json::string_of(o, "fill");
  const std::optional<FillKind> f = parse_fill(fill);
  if (!f) throw std::runtime_error("field \"fill\": unknown fill '" + std::string(fill) + "'");
  r.fill = *f;
  r.tag = json::string_of(o, "tag");
  r.backend = json::string_of(o, "backend");
  r.result = backend_record_from_json(o);
  r.result.backend = json::string_of(o, "implementation");
  r.admission = admission_from_json(json::Object(json::field(o, "tf_admission")));
  if (!json::field(o, "odd_one_out").is_null()) r.odd_one_out = json::string_of(o, "odd_one_out");
  return r;
}

}  // namespace

Record parse_record(const std::string& line) {
  json::Reader reader;
  return record_of(reader, line);
}

ReadResult read_results(const std::string& path) {
  ReadResult out;
  std::ifstream f(path, std::ios::binary);
  if (!f) return out;
  // The file in one buffer of its size, read straight into it (it may be gigabytes: no stream
  // copy, no regrowth); blocks are appended for a file whose size is not known.
  std::string all;
  const std::streamoff size = f.rdbuf()->pubseekoff(0, std::ios::end, std::ios::in);
  f.rdbuf()->pubseekoff(0, std::ios::beg, std::ios::in);
  const std::size_t block = size > 0 ? static_cast<std::size_t>(size) + 1 : std::size_t{1} << 22;
  for (std::size_t got = block; got == block;) {  // a short read is the end of the file
    const std::size_t at = all.size();
    all.resize(at + block);
    got = static_cast<std::size_t>(
        f.rdbuf()->sgetn(all.data() + at, static_cast<std::streamsize>(block)));
    all.resize(at + got);
  }
  // One Record a line: reserving them saves moving every record as the vector grows.
  out.records.reserve(static_cast<std::size_t>(std::count(all.begin(), all.end(), '\n')) + 1);
  json::Reader reader;  // one parser for every line: its buffers are allocated once
  std::size_t pos = 0;
  for (int line = 1; pos < all.size(); ++line) {
    const std::size_t nl = all.find('\n', pos);
    const bool last = nl == std::string::npos;
    const std::string_view s =
        std::string_view(all).substr(pos, last ? std::string::npos : nl - pos);
    if (s.find_first_not_of(" \t\r") == std::string::npos) {
      if (!last) out.valid_bytes = nl + 1;
      pos = last ? all.size() : nl + 1;
      continue;
    }
    try {
      out.records.push_back(record_of(reader, s));
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
    if (prev.result.verdict != r.result.verdict) {
      throw InvalidArgument(where + ": case " + r.case_key() + " on backend " + r.backend +
                            " is recorded twice with different verdicts (" +
                            verdict_name(prev.result.verdict) + " and " +
                            verdict_name(r.result.verdict) + ")");
    }
    prev = std::move(r);
  }
  return out;
}

}  // namespace convcheck::reports
