#include "reports/summary.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/version.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/backend.h"
#include "core/cpu.h"
#include "core/error.h"
#include "reports/build_info.h"

namespace convcheck::reports {

const std::vector<CoverageClass>& coverage_classes() {
  static const std::vector<CoverageClass> classes = {
      {"stride_gt_filter", "a stride larger than the filter (some input pixels never read)"},
      {"same_odd_padding", "SAME padding with an odd total (the extra element after)"},
      {"explicit_pad_gt_extent", "an explicit pad larger than the filter extent - 1"},
      {"dilation_gt_1", "dilation > 1"},
      {"stride_and_dilation", "stride > 1 and dilation > 1 together"},
      {"groups_gt_1", "grouped convolution (C / Cf > 1)"},
      {"multiplier_gt_1", "depthwise multiplier > 1"},
      {"empty", "an empty tensor (an operand or the result has no elements)"},
      {"nchw", "NCHW format"},
      {"dtype_f16", "dtype f16"},
      {"dtype_bf16", "dtype bf16"},
      {"dtype_f32", "dtype f32"},
      {"dtype_f64", "dtype f64"},
      {"dtype_i32", "dtype i32"},
  };
  return classes;
}

bool class_applies(const std::string& cls, Op op) {
  if (cls == "groups_gt_1") return !is_depthwise(op);
  if (cls == "multiplier_gt_1") return is_depthwise(op);
  if (cls.rfind("dtype_", 0) == 0) {
    for (DType t : kAllDTypes)
      if (cls == std::string("dtype_") + dtype_name(t)) return op_takes_dtype(op, t);
    return false;
  }
  return true;
}

std::vector<std::string> classes_of(const Problem& p) {
  const Geometry g = geometry(p);
  std::vector<std::string> out;
  if (g.sh > g.KH || g.sw > g.KW) out.push_back("stride_gt_filter");
  if (p.padding.kind == PaddingKind::SAME &&
      (((g.pad_top + g.pad_bottom) % 2) != 0 || ((g.pad_left + g.pad_right) % 2) != 0))
    out.push_back("same_odd_padding");
  if (p.padding.kind == PaddingKind::EXPLICIT &&
      (g.pad_top > g.eff_h - 1 || g.pad_bottom > g.eff_h - 1 || g.pad_left > g.eff_w - 1 ||
       g.pad_right > g.eff_w - 1))
    out.push_back("explicit_pad_gt_extent");
  const bool dilated = g.dh > 1 || g.dw > 1;
  if (dilated) out.push_back("dilation_gt_1");
  if (dilated && (g.sh > 1 || g.sw > 1)) out.push_back("stride_and_dilation");
  if (!g.depthwise && g.G > 1) out.push_back("groups_gt_1");
  if (g.depthwise && g.M > 1) out.push_back("multiplier_gt_1");
  if (role_elements(g, Role::input) == 0 || role_elements(g, Role::filter) == 0 ||
      role_elements(g, Role::out_backprop) == 0)
    out.push_back("empty");
  if (p.format == Format::NCHW) out.push_back("nchw");
  out.push_back(std::string("dtype_") + dtype_name(p.dtype));
  return out;
}

namespace {

std::string cpu_model(int* cores) {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model = "unknown";
  int n = 0;
  while (std::getline(f, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    if (key == "processor") ++n;
    if (key == "model name" && model == "unknown") {
      model = line.substr(colon + 1);
      model.erase(0, model.find_first_not_of(' '));
    }
  }
  *cores = n;
  return model;
}

std::string gpu_description() {
  for (const Registry::Entry& e : Registry::instance().entries()) {
    if (e.name != "gpu") continue;
    try {
      std::unique_ptr<Backend> b = e.factory("");
      const Status s = b->available();
      if (!s.ok()) return "none (gpu backend unavailable: " + s.reason() + ")";
      const Backend::DevicePeaks peaks = b->device_peaks();
      if (!peaks.device.empty()) return peaks.device;
      return "available (" + e.description + ")";
    } catch (const std::exception& ex) {
      return std::string("unknown (gpu backend failed: ") + ex.what() + ")";
    }
  }
  return "none (no gpu backend registered)";
}

std::string boost_version() {
  std::string v = BOOST_LIB_VERSION;
  for (char& c : v)
    if (c == '_') c = '.';
  return v;
}

int64_t count_planned(int64_t total, const Shard& s) {
  if (total <= s.k - 1) return 0;
  return (total - (s.k - 1) + s.n - 1) / s.n;
}

}  // namespace

json::Value environment() {
  using namespace json;
  Value e = make_object();
  int cores = 0;
  add(e, "cpu", make_string(cpu_model(&cores)));
  add(e, "cores", make_number(cores));
  add(e, "cpu_features", make_string(cpu_features().describe()));
  add(e, "gpu", make_string(gpu_description()));
#if defined(__clang__)
  add(e, "compiler", make_string(std::string("clang ") + __VERSION__));
#elif defined(__GNUC__)
  add(e, "compiler", make_string(std::string("g++ ") + __VERSION__));
#else
  add(e, "compiler", make_string(__VERSION__));
#endif
  add(e, "boost", make_string(boost_version()));
  add(e, "eigen", make_string(build_info::kEigen));
  add(e, "rapidcheck", make_string(build_info::kRapidCheck));
  add(e, "onednn", make_string(build_info::kOneDnn));
  add(e, "cuda", make_string(build_info::kCuda));
  add(e, "cudnn", make_string(build_info::kCudnn));
  add(e, "commit", make_string(build_info::commit()));
  return e;
}

int64_t RunInfo::planned_cases() const {
  if (merged_shards.empty()) return count_planned(suite_cases, shard);
  int64_t n = 0;
  for (const Shard& s : merged_shards) n += count_planned(suite_cases, s);
  return n;
}

json::Value run_json(const RunInfo& info) {
  using namespace json;
  Value o = make_object();
  add(o, "format", make_string("convcheck-run/1"));
  Value suite = make_object();
  add(suite, "name", make_string(info.suite));
  add(suite, "path", make_string(info.suite_path));
  add(suite, "cases", make_number(static_cast<double>(info.suite_cases)));
  add(o, "suite", suite);
  Value backends = make_array();
  for (const BackendLabel& b : info.backends) {
    Value x = make_object();
    add(x, "name", make_string(b.name));
    add(x, "implementation", make_string(b.implementation));
    backends.items.push_back(x);
  }
  add(o, "backends", backends);
  Value skipped = make_array();
  for (const auto& [name, reason] : info.skipped) {
    Value x = make_object();
    add(x, "name", make_string(name));
    add(x, "reason", make_string(reason));
    skipped.items.push_back(x);
  }
  add(o, "skipped_backends", skipped);
  add(o, "shard", make_string(to_string(info.shard)));
  Value merged = make_array();
  for (const Shard& s : info.merged_shards) merged.items.push_back(make_string(to_string(s)));
  add(o, "merged_shards", merged);
  add(o, "environment", info.environment);
  add(o, "started", make_string(info.started));
  add(o, "finished", make_string(info.finished));
  add(o, "elapsed_s", make_number(info.elapsed_s));
  add(o, "interrupted", make_bool(info.interrupted));
  add(o, "command", make_string(info.command));
  return o;
}

RunInfo parse_run_json(const std::string& text, const std::string& path) {
  RunInfo info;
  try {
    const json::Value o = json::parse(text);
    if (json::string_of(o, "format") != "convcheck-run/1")
      throw std::runtime_error("unknown format '" + json::string_of(o, "format") + "'");
    const json::Value& suite = json::field(o, "suite");
    info.suite = json::string_of(suite, "name");
    info.suite_path = json::string_of(suite, "path");
    info.suite_cases = json::integer_of(suite, "cases");
    for (const json::Value& b : json::field(o, "backends").items)
      info.backends.push_back({json::string_of(b, "name"), json::string_of(b, "implementation")});
    for (const json::Value& b : json::field(o, "skipped_backends").items)
      info.skipped.emplace_back(json::string_of(b, "name"), json::string_of(b, "reason"));
    info.shard = parse_shard(json::string_of(o, "shard"));
    for (const json::Value& s : json::field(o, "merged_shards").items) {
      if (!s.is_string()) throw std::runtime_error("merged_shards holds a non-string");
      info.merged_shards.push_back(parse_shard(s.s));
    }
    info.environment = json::field(o, "environment");
    info.started = json::string_of(o, "started");
    info.finished = json::string_of(o, "finished");
    info.elapsed_s = json::number_of(o, "elapsed_s");
    info.interrupted = json::bool_of(o, "interrupted");
    info.command = json::string_of(o, "command");
  } catch (const std::exception& e) {
    throw InvalidArgument(path + ": not a convcheck run.json: " + e.what());
  }
  return info;
}

std::string summary_json(const RunInfo& info, const std::vector<Record>& records) {
  using namespace json;
  Value o = make_object();
  add(o, "format", make_string("convcheck-summary/1"));
  add(o, "suite", make_string(info.suite));
  Value backends = make_array();
  for (const BackendLabel& b : info.backends) {
    Value x = make_object();
    add(x, "name", make_string(b.name));
    add(x, "implementation", make_string(b.implementation));
    backends.items.push_back(x);
  }
  add(o, "backends", backends);
  Value skipped = make_array();
  for (const auto& [name, reason] : info.skipped) {
    Value x = make_object();
    add(x, "name", make_string(name));
    add(x, "reason", make_string(reason));
    skipped.items.push_back(x);
  }
  add(o, "skipped_backends", skipped);

  std::set<std::string> cases;
  for (const Record& r : records) cases.insert(r.case_key());
  const int64_t planned = info.planned_cases();
  const int64_t planned_pairs = planned * static_cast<int64_t>(info.backends.size());
  Value c = make_object();
  add(c, "planned", make_number(static_cast<double>(planned)));
  add(c, "recorded", make_number(static_cast<double>(cases.size())));
  add(o, "cases", c);
  Value p = make_object();
  add(p, "planned", make_number(static_cast<double>(planned_pairs)));
  add(p, "recorded", make_number(static_cast<double>(records.size())));
  add(o, "pairs", p);
  add(o, "complete", make_bool(static_cast<int64_t>(records.size()) >= planned_pairs));

  std::map<std::string, int64_t> verdicts;
  std::map<std::string, std::map<std::string, int64_t>> by_backend;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int64_t> counts;
  for (const char* v : kVerdicts) verdicts[v] = 0;
  for (const BackendLabel& b : info.backends)
    for (const char* v : kVerdicts) by_backend[b.name][v] = 0;
  for (const Record& r : records) {
    ++verdicts[r.verdict];
    ++by_backend[r.backend][r.verdict];
    ++counts[{r.op, r.dtype, r.backend, r.verdict}];
  }
  Value vs = make_object();
  for (const char* v : kVerdicts) add(vs, v, make_number(static_cast<double>(verdicts[v])));
  add(o, "verdicts", vs);
  Value bb = make_object();
  for (const auto& [name, m] : by_backend) {
    Value x = make_object();
    for (const char* v : kVerdicts) {
      auto it = m.find(v);
      add(x, v, make_number(static_cast<double>(it == m.end() ? 0 : it->second)));
    }
    add(bb, name, x);
  }
  add(o, "by_backend", bb);
  Value cs = make_array();
  for (const auto& [k, n] : counts) {
    Value x = make_object();
    add(x, "op", make_string(std::get<0>(k)));
    add(x, "dtype", make_string(std::get<1>(k)));
    add(x, "backend", make_string(std::get<2>(k)));
    add(x, "verdict", make_string(std::get<3>(k)));
    add(x, "count", make_number(static_cast<double>(n)));
    cs.items.push_back(x);
  }
  add(o, "counts", cs);

  // Coverage: per case (not per pair). A case "ran" when some backend executed it.
  struct Seen {
    std::string op;
    std::vector<std::string> classes;
    bool ran = false;
  };
  std::map<std::string, Seen> seen;
  for (const Record& r : records) {
    Seen& s = seen[r.case_key()];
    if (s.op.empty()) {
      s.op = r.op;
      try {
        s.classes = classes_of(parse_problem(r.descriptor));
      } catch (const InvalidArgument&) {
        // An invalid problem in a record (hand-edited file): it belongs to no class.
      }
    }
    if (r.verdict != "unsupported") s.ran = true;
  }
  Value cov = make_object();
  Value classes = make_array();
  Value not_run = make_array(), not_run_by_op = make_array();
  for (const CoverageClass& cc : coverage_classes()) {
    std::map<std::string, std::pair<int64_t, int64_t>> by_op;  // op -> cases, ran
    for (Op op : kAllOps)
      if (class_applies(cc.name, op)) by_op[op_name(op)] = {0, 0};
    int64_t total = 0, ran = 0;
    for (const auto& [key, s] : seen) {
      if (std::find(s.classes.begin(), s.classes.end(), cc.name) == s.classes.end()) continue;
      ++total;
      ran += s.ran;
      auto& x = by_op[s.op];
      ++x.first;
      x.second += s.ran;
    }
    Value x = make_object();
    add(x, "class", make_string(cc.name));
    add(x, "description", make_string(cc.description));
    add(x, "cases", make_number(static_cast<double>(total)));
    add(x, "ran", make_number(static_cast<double>(ran)));
    Value ops = make_object();
    for (Op op : kAllOps) {
      auto it = by_op.find(op_name(op));
      if (it == by_op.end()) continue;
      Value y = make_object();
      add(y, "cases", make_number(static_cast<double>(it->second.first)));
      add(y, "ran", make_number(static_cast<double>(it->second.second)));
      add(ops, op_name(op), y);
      if (it->second.second == 0)
        not_run_by_op.items.push_back(make_string(cc.name + "/" + op_name(op)));
    }
    add(x, "by_op", ops);
    classes.items.push_back(x);
    if (ran == 0) not_run.items.push_back(make_string(cc.name));
  }
  add(cov, "classes", classes);
  add(cov, "not_run", not_run);
  add(cov, "not_run_by_op", not_run_by_op);
  add(o, "coverage", cov);
  add(o, "environment", info.environment);
  return dump(o, 1) + "\n";
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  const std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  std::string tmp = dir + "/." + target.filename().string() + ".tmp-XXXXXX";
  auto fail = [&](const std::string& what) {
    return InvalidArgument("cannot write " + path + ": " + what + ": " + std::strerror(errno));
  };
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw fail("cannot create a temporary file in " + dir);
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const InvalidArgument e = fail("write");
      ::close(fd);
      ::unlink(tmp.c_str());
      throw e;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) {
    const InvalidArgument e = fail("fsync");
    ::close(fd);
    ::unlink(tmp.c_str());
    throw e;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const InvalidArgument e = fail("rename");
    ::unlink(tmp.c_str());
    throw e;
  }
  // The rename itself is durable once the directory is synced.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace convcheck::reports
