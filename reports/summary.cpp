#include "reports/summary.h"

#include <fcntl.h>
#include <sys/file.h>
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
      {"batch_gt_1", "a batch of more than one image"},
      {"channel_tail",
       "a channel count (input or output) not a multiple of 16: a vector kernel's tail"},
      {"output_remainder",
       "input rows or columns past the last window (the padded extent minus the filter's is not a "
       "multiple of the stride): read by no output"},
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
  if (g.N > 1) out.push_back("batch_gt_1");
  if (g.C % 16 != 0 || g.O % 16 != 0) out.push_back("channel_tail");
  const int64_t rest_h = g.H + g.pad_top + g.pad_bottom - g.eff_h;
  const int64_t rest_w = g.W + g.pad_left + g.pad_right - g.eff_w;
  if ((rest_h >= 0 && rest_h % g.sh != 0) || (rest_w >= 0 && rest_w % g.sw != 0))
    out.push_back("output_remainder");
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

// "backends": [{name, implementation}], "skipped_backends": [{name, reason}] (run.json and
// summary.json alike).
void add_backends(json::Value& o, const RunInfo& info) {
  json::Value& backends = o["backends"] = json::Value::array();
  for (const BackendLabel& b : info.backends)
    backends.push_back({{"name", b.name}, {"implementation", b.implementation}});
  json::Value& skipped = o["skipped_backends"] = json::Value::array();
  for (const auto& [name, reason] : info.skipped)
    skipped.push_back({{"name", name}, {"reason", reason}});
}

}  // namespace

json::Value environment() {
  using namespace json;
  Value e = Value::object();
  int cores = 0;
  e["cpu"] = cpu_model(&cores);
  e["cores"] = cores;
  e["cpu_features"] = cpu_features().describe();
  e["gpu"] = gpu_description();
  e["compiler"] = build_info::compiler();
  e["boost"] = boost_version();
  e["eigen"] = build_info::kEigen;
  e["rapidcheck"] = build_info::kRapidCheck;
  e["onednn"] = build_info::kOneDnn;
  e["cuda"] = build_info::kCuda;
  e["cudnn"] = build_info::kCudnn;
  e["commit"] = build_info::commit();
  return e;
}

int64_t count_planned(int64_t total, const Shard& s) {
  if (total <= s.k - 1) return 0;
  return (total - (s.k - 1) + s.n - 1) / s.n;
}

int64_t RunInfo::planned_cases() const {
  if (merged_shards.empty()) return count_planned(suite_cases, shard);
  int64_t n = 0;
  for (const Shard& s : merged_shards) n += count_planned(suite_cases, s);
  return n;
}

bool is_complete(const RunInfo& info, int64_t recorded) {
  return !info.partial &&
         recorded >= info.planned_cases() * static_cast<int64_t>(info.backends.size());
}

json::Value run_json(const RunInfo& info, int64_t recorded) {
  using namespace json;
  Value o = Value::object();
  o["format"] = "convcheck-run/1";
  Value suite = Value::object();
  suite["name"] = info.suite;
  suite["path"] = info.suite_path;
  suite["cases"] = info.suite_cases;
  o["suite"] = suite;
  add_backends(o, info);
  o["shard"] = to_string(info.shard);
  Value merged = Value::array();
  for (const Shard& s : info.merged_shards) merged.push_back(to_string(s));
  o["merged_shards"] = merged;
  o["environment"] = info.environment;
  o["started"] = info.started;
  o["finished"] = info.finished;
  o["elapsed_s"] = info.elapsed_s;
  o["interrupted"] = info.interrupted;
  o["complete"] = is_complete(info, recorded);
  o["command"] = info.command;
  if (info.partial) {
    o["partial"] = true;
    o["missing_shards"] = info.missing_shards;
    o["incomplete_shards"] = info.incomplete_shards;
  }
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
    for (const json::Value& b : json::array_of(o, "backends"))
      info.backends.push_back({json::string_of(b, "name"), json::string_of(b, "implementation")});
    for (const json::Value& b : json::array_of(o, "skipped_backends"))
      info.skipped.emplace_back(json::string_of(b, "name"), json::string_of(b, "reason"));
    info.shard = parse_shard(json::string_of(o, "shard"));
    for (const json::Value& s : json::array_of(o, "merged_shards")) {
      if (!s.is_string()) throw std::runtime_error("merged_shards holds a non-string");
      info.merged_shards.push_back(parse_shard(s.get<std::string>()));
    }
    info.environment = json::field(o, "environment");
    info.started = json::string_of(o, "started");
    info.finished = json::string_of(o, "finished");
    info.elapsed_s = json::number_of(o, "elapsed_s");
    info.interrupted = json::bool_of(o, "interrupted");
    info.command = json::string_of(o, "command");
    // Written by merges with --allow-partial only (and absent from older run.json files).
    if (o.contains("partial")) {
      info.partial = json::bool_of(o, "partial");
      for (const char* key : {"missing_shards", "incomplete_shards"})
        for (const json::Value& v : json::array_of(o, key)) {
          if (!v.is_string()) throw std::runtime_error(std::string(key) + " holds a non-string");
          (key[0] == 'm' ? info.missing_shards : info.incomplete_shards)
              .push_back(v.get<std::string>());
        }
    }
  } catch (const std::exception& e) {
    throw InvalidArgument(path + ": not a convcheck run.json: " + e.what());
  }
  return info;
}

std::string summary_json(const RunInfo& info, const std::vector<Record>& records) {
  using namespace json;
  Value o = Value::object();
  o["format"] = "convcheck-summary/1";
  o["suite"] = info.suite;
  add_backends(o, info);

  std::set<std::string> cases;
  for (const Record& r : records) cases.insert(r.case_key());
  const int64_t planned = info.planned_cases();
  const int64_t planned_pairs = planned * static_cast<int64_t>(info.backends.size());
  Value c = Value::object();
  c["planned"] = planned;
  c["recorded"] = cases.size();
  o["cases"] = c;
  Value p = Value::object();
  p["planned"] = planned_pairs;
  p["recorded"] = records.size();
  o["pairs"] = p;
  o["complete"] = is_complete(info, static_cast<int64_t>(records.size()));

  std::map<std::string, int64_t> verdicts;
  std::map<std::string, std::map<std::string, int64_t>> by_backend;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int64_t> counts;
  for (Verdict v : kAllVerdicts) verdicts[verdict_name(v)] = 0;
  for (const BackendLabel& b : info.backends)
    for (Verdict v : kAllVerdicts) by_backend[b.name][verdict_name(v)] = 0;
  for (const Record& r : records) {
    const char* v = verdict_name(r.result.verdict);
    ++verdicts[v];
    ++by_backend[r.backend][v];
    ++counts[{r.op, r.dtype, r.backend, v}];
  }
  Value vs = Value::object();
  for (Verdict v : kAllVerdicts) vs[verdict_name(v)] = verdicts[verdict_name(v)];
  o["verdicts"] = vs;
  Value bb = Value::object();
  for (const auto& [name, m] : by_backend) {
    Value x = Value::object();
    for (Verdict verdict : kAllVerdicts) {
      const char* v = verdict_name(verdict);
      auto it = m.find(v);
      x[v] = it == m.end() ? 0 : it->second;
    }
    bb[name] = x;
  }
  o["by_backend"] = bb;
  Value cs = Value::array();
  for (const auto& [k, n] : counts) {
    Value x = Value::object();
    x["op"] = std::get<0>(k);
    x["dtype"] = std::get<1>(k);
    x["backend"] = std::get<2>(k);
    x["verdict"] = std::get<3>(k);
    x["count"] = n;
    cs.push_back(x);
  }
  o["counts"] = cs;

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
    if (r.result.verdict != Verdict::unsupported) s.ran = true;
  }
  Value cov = Value::object();
  Value classes = Value::array();
  Value not_run = Value::array(), not_run_by_op = Value::array();
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
    Value x = Value::object();
    x["class"] = cc.name;
    x["description"] = cc.description;
    x["cases"] = total;
    x["ran"] = ran;
    Value ops = Value::object();
    for (Op op : kAllOps) {
      auto it = by_op.find(op_name(op));
      if (it == by_op.end()) continue;
      Value y = Value::object();
      y["cases"] = it->second.first;
      y["ran"] = it->second.second;
      ops[op_name(op)] = y;
      if (it->second.second == 0) not_run_by_op.push_back(cc.name + "/" + op_name(op));
    }
    x["by_op"] = ops;
    classes.push_back(x);
    if (ran == 0) not_run.push_back(cc.name);
  }
  cov["classes"] = classes;
  cov["not_run"] = not_run;
  cov["not_run_by_op"] = not_run_by_op;
  o["coverage"] = cov;
  o["environment"] = info.environment;
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

namespace {
// write_file_atomic's temporary: "." + the target's name + kTempInfix + mkstemp's 6 characters.
constexpr const char* kTempInfix = ".tmp-";
}  // namespace

const char* const kWriteTestPrefix = ".convcheck-write-test-";

int remove_stale_temporaries(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::size_t at = name.rfind(kTempInfix);
    const bool temporary = name.size() > 1 && name[0] == '.' && at != std::string::npos &&
                           name.size() == at + std::strlen(kTempInfix) + 6;
    // `run`'s probe of a writable --out (tools/run.cpp, check_writable), killed before its unlink.
    const bool write_test = name.rfind(kWriteTestPrefix, 0) == 0;
    if (!temporary && !write_test) continue;
    std::error_code rm;
    if (e.is_regular_file(rm) && std::filesystem::remove(e.path(), rm)) ++removed;
  }
  return removed;
}

OutputLock::OutputLock(const std::string& dir, const std::string& command) {
  const std::string path = dir + "/" + kFileName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0)
    throw InvalidArgument("cannot open the lock file " + path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char holder[256] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    std::string who = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK)
      throw InvalidArgument("cannot lock " + path + ": " + std::strerror(err));
    throw InvalidArgument(dir + " is in use by another convcheck process (" +
                          (who.empty() ? std::string("pid unknown") : who) + ", holding " + path +
                          "): one run per output directory; wait for it " +
                          "to finish, or choose another --out directory");
  }
  // Ours now (a stale file from a killed run is simply overwritten): say who holds it.
  const std::string who = "pid " + std::to_string(::getpid()) + ", " + command + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, who.data(), who.size(), 0) < 0) {
    // The lock holds without the note; the refusal then says "pid unknown".
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock; the file stays (removing it would race)
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
