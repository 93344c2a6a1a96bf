#include "tools/commands.h"

#include <omp.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <utility>

#include "bench/harness.h"
#include "comparators/comparators.h"
#include "core/admission.h"
#include "core/backend.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/npy.h"
#include "core/problem.h"
#include "core/suite.h"
#include "gpu/gpu.h"
#include "mutants/mutants.h"
#include "optimized/dispatch.h"
#include "optimized/optimized.h"
#include "oracle/oracle.h"
#include "plugins/plugins.h"
#include "properties/fuzz.h"
#include "reference/reference.h"
#include "reports/results.h"
#include "reports/summary.h"
#include "tools/in_process_backends.h"
#include "tools/options.h"
#include "tools/verify.h"

namespace po = boost::program_options;

namespace convcheck::cli {

namespace {

// The commands, once: dispatch, the usage text, each command's --help (with its option table,
// tools/options.h) and which take --max-bytes come from this table. `synopsis` may continue on
// lines of its own ("\n" then 7 spaces); "{oracle fills}" and "{operands fills}" in it become the
// fills' names (oracle/fills.h); `summary` (may be empty, may have several lines) is printed from
// column 41 in the usage and under the synopsis in --help; `example` lines follow "convcheck ".
struct Command {
  CommandHelp help;
  int (*fn)(const Args&);
};

const char* const kRunDetails =
    "Writes, in DIR:\n"
    "  results.jsonl  one JSON object per (case, backend), appended as each case ends\n"
    "  run.json       what was run, where and when (the only file with wall-clock times)\n"
    "  summary.json   verdict counts by op, dtype and backend; coverage; environment\n"
    "  junit.xml      one testcase per (case, backend)\n"
    "  report.html    one self-contained page\n"
    "\n"
    "Progress goes to stderr (one updating line on a terminal, else a line per 10 % or 30 s).\n"
    "A failing run prints its first failures with their repro lines after the counts.\n"
    "SIGINT/SIGTERM (or a closed stdout, SIGPIPE): stops after the case in flight, writes the\n"
    "reports of what finished and exits 130/143/141; --resume continues. A second signal ends\n"
    "the process at once (results.jsonl keeps every finished case).\n"
    "exit codes: 0 all pass (unsupported and mistrusted do not fail a run), 1 a failure, crash or\n"
    "timeout, 2 bad usage or input, 3 a named backend is unavailable, 130/143/141 interrupted.\n";

#define CONVCHECK_BI "'conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1'"
// clang-format off
const Command kCommands[] = {
    {{"list", "list", "backends (with availability), ops, dtypes", "list", false, ""}, cmd_list},
    {{"compute",
      "compute PROBLEM --backend B [--input F] [--filter F] [--out-backprop F] --output F",
      "run one op on .npy operands (only the two it reads)",
      "operands " CONVCHECK_BI " --fill ramp --dir ops\n"
      "compute " CONVCHECK_BI " --backend reference --filter ops/filter.npy "
      "--out-backprop ops/out_backprop.npy --output dx.npy", true, ""}, cmd_compute},
    {{"operands", "operands PROBLEM --fill {operands fills} [--seed S] --dir D",
      "write the operands PROBLEM reads as D/<role>.npy",
      "operands 'conv2d:input=1x5x5x2,filter=3x3x2x4,padding=SAME' --fill random --seed 7 --dir ops",
      true, ""}, cmd_operands},
    {{"inspect", "inspect FILE.npy [--all]",
      "print a .npy file's dtype, shape, stats and values", "inspect dx.npy --all", true, ""},
     cmd_inspect},
    {{"check",
      "check PROBLEM [--backends a,b] [--seed S] [--fill {oracle fills}] [--repeat N] [--json]\n"
      "       [--after PROBLEM2 [--after-seed S2] [--after-fill F2]]",
      "judge backends on one case against the exact reference\n"
      "(--after: run each backend on PROBLEM2 first, unjudged, to\n"
      "replay a sequence; default seed and fill: the case's)",
      "check 'conv2d_backprop_input:input=2x7x7x8,filter=3x3x8x4,stride=2x2,padding=SAME' "
      "--backends reference,optimized --fill real", true, ""}, cmd_check},
    {{"verify",
      "verify PROBLEM [--input F] [--filter F] [--out-backprop F] --result F\n"
      "       [--contract f32|tf32|f16|bf16|f64|exact|i32[,...]] [--json]",
      "judge a result computed elsewhere (a .npy file)",
      "verify " CONVCHECK_BI " --filter ops/filter.npy --out-backprop ops/out_backprop.npy "
      "--result dx.npy --contract f32,exact", true, ""}, cmd_verify},
    {{"fuzz",
      "fuzz [--backends a,b] [--cases N | --time SECONDS] [--seed S] [--out DIR] [--shard K/N]\n"
      "       [--resume]",
      "random cases; each failure shrunk to a minimal repro",
      "fuzz --backends reference,optimized --cases 200 --seed 7 --out fuzz-7\n"
      "fuzz --backends reference,optimized --cases 200 --seed 7 --out fuzz-7 --resume", true, ""},
     cmd_fuzz},
    {{"bench",
      "bench --suite NAME|FILE --backends a,b [--threads T[,T2...]] [--reps N] [--warmup W] [--json]",
      "", "bench --suite perf_cpu --backends optimized,onednn --reps 5", true, ""}, cmd_bench},
    {{"run",
      "run --suite NAME|FILE [--backends a,b|NAME=IMPL] [--out DIR] [--resume] [--shard K/N]",
      "a suite through the oracle; writes results.jsonl,\n"
      "summary.json, junit.xml, report.html in DIR",
      "run --suite smoke --backends reference,optimized --out /tmp/smoke\n"
      "run --suite smoke --backends reference,optimized --out /tmp/smoke --resume", true,
      kRunDetails},
     cmd_run},
    {{"report", "report html DIR | diff A B [--json] | merge DIR... --out DIR [--allow-partial]",
      "re-render, compare two runs, merge shards",
      "report html /tmp/smoke\nreport diff /tmp/smoke-v1 /tmp/smoke\n"
      "report merge shard-1 shard-2 --out merged", false, ""}, cmd_report},
};

// `report`'s own commands: their help (tools/report.cpp dispatches them).
const CommandHelp kReportCommands[] = {
    {"report html", "report html DIR",
     "re-render summary.json, junit.xml and report.html from DIR/results.jsonl and run.json",
     "report html /tmp/smoke", false, ""},
    {"report diff", "report diff A B [--json]",
     "compare run B with run A (records matched by descriptor, seed, fill, backend): new\n"
     "failures, fixed cases, bound usage grown > 2x and > 0.5, and per backend and op a median\n"
     "slowdown beyond the run-to-run noise measured from the per-case spread; exit 1 on a\n"
     "regression, 0 otherwise",
     "report diff /tmp/smoke-v1 /tmp/smoke", false, ""},
    {"report merge", "report merge DIR... --out DIR [--allow-partial]",
     "join the directories of `run --shard K/N` runs of one suite and backend set into one\n"
     "report; every shard 1..N must be present and complete (exit 2 naming those that are\n"
     "not), or --allow-partial writes a report marked incomplete",
     "report merge shard-1 shard-2 shard-3 --out merged", false, ""},
};
// clang-format on
#undef CONVCHECK_BI

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands)
    if (name == c.help.name) return &c;
  return nullptr;
}

// The fills each --fill takes, one a line with its help (oracle/fills.h).
std::string fill_help() {
  std::string o;
  for (const auto& [use, who] : {std::pair{kOracleFill, "check; a suite line's --fill F"},
                                 std::pair{kOperandsFill, "operands"}}) {
    o += std::string("\n--fill (") + who + "):\n";
    for (const FillInfo& f : fills())
      if (f.uses & use) o += "  " + (f.name + std::string(10, ' ')).substr(0, 10) + f.help + "\n";
  }
  return o;
}

std::string usage() {
  constexpr std::size_t kColumn = 41;
  std::string o =
      "usage: convcheck <command> [options]\n"
      "       convcheck <command> --help     the command's options, their defaults, an example\n"
      "       convcheck --version            version, commit, compiler, ISA, CUDA and oneDNN\n"
      "\ncommands:\n";
  for (const Command& c : kCommands) {
    std::string synopsis = "  " + synopsis_text(c.help);
    const std::size_t last_line = synopsis.rfind('\n') + 1;  // 0 when there is one line
    std::string summary = c.help.summary;
    if (summary.empty()) {
      o += synopsis + "\n";
      continue;
    }
    if (synopsis.size() - last_line < kColumn - 1) {
      synopsis.resize(last_line + kColumn, ' ');
    } else {
      synopsis += "\n" + std::string(kColumn, ' ');
    }
    for (std::size_t nl = summary.find('\n'); nl != std::string::npos;
         nl = summary.find('\n', nl + 1))
      summary.insert(nl + 1, kColumn, ' ');
    o += synopsis + summary + "\n";
  }
  o += fill_help();
  std::string takers;
  for (const Command& c : kCommands)
    if (c.help.takes_max_bytes) takers += (takers.empty() ? "" : ", ") + std::string(c.help.name);
  o +=
      "\n"
      "PROBLEM is a descriptor, e.g. "
      "'conv2d_backprop_input:input=2x7x7x128,filter=3x3x128x64,stride=2x2,padding=SAME'.\n"
      "Backends: see `list`; plugin:PATH runs a third-party kernel (plugins/convcheck_plugin.h)\n"
      "in a sandbox; --plugin-timeout S (any command, default 60) limits each call into a plugin;\n"
      "--plugin-sandbox strict|basic|off (any command; default: the strongest available, `list`)\n"
      "chooses how its host is confined (README: Security model).\n"
      "--shard K/N takes case i (suite or fuzz stream order, from 0) when i mod N == K-1.\n"
      "--max-bytes N[K|M|G|T|P] (" +
      takers +
      "):\n"
      "refuse, before allocating, a problem or .npy file whose tensors would need more than N\n"
      "bytes (default: half of physical memory; check, fuzz and run count the oracle's copies).\n"
      "exit codes: 0 ok, 1 a check failed, 2 bad usage or input, 3 backend unavailable;\n"
      "run and fuzz: 130/143/141 when stopped by SIGINT/SIGTERM/a closed stdout (rerun with\n"
      "--resume).\n";
  return o;
}

std::string require(const po::variables_map& vm, const char* key, const char* what) {
  if (!vm.count(key)) throw InvalidArgument(std::string("missing ") + what);
  return vm[key].as<std::string>();
}

}  // namespace

const CommandHelp* command_help(const std::string& name) {
  if (const Command* c = find_command(name)) return &c->help;
  for (const CommandHelp& c : kReportCommands)
    if (name == c.name) return &c;
  return nullptr;
}

std::string synopsis_text(const CommandHelp& c) {
  std::string s = c.synopsis;
  for (const auto& [slot, use] :
       {std::pair{"{oracle fills}", kOracleFill}, std::pair{"{operands fills}", kOperandsFill}}) {
    const std::size_t at = s.find(slot);
    if (at != std::string::npos) s.replace(at, std::strlen(slot), fill_names(use, "|", "|"));
  }
  return s;
}

void register_builtin_backends() {
  static bool done = false;
  if (done) return;
  done = true;
  register_in_process_backends(Registry::instance());
  register_plugin_backends(Registry::instance());
}

int cmd_list(const Args& args) {
  parse_options("list", args.empty() || args[0] == "--help" || args[0] == "-h" ? args : Args{},
                po::options_description("list"));  // --help
  if (!args.empty()) throw InvalidArgument("list takes no arguments, got '" + args[0] + "'");
  std::cout << "backends:\n";
  // A backend refused by its configuration (e.g. CONVCHECK_OPTIMIZED_ISA above the CPU) is shown
  // as refused, the listing finishes, and then list exits 2 with the reason like any command.
  std::string refused;
  for (const Registry::Entry& e : Registry::instance().entries()) {
    std::string availability = "available";
    if (e.name.back() != ':') {
      std::unique_ptr<Backend> b;
      try {
        b = e.factory("");
      } catch (const InvalidArgument& err) {
        availability = std::string("refused: ") + err.what();
        if (refused.empty()) refused = err.what();
      }
      if (b) {
        Status s = b->available();
        if (!s.ok())
          availability = "unavailable: " + s.reason();
        else if (!b->isa().empty())
          availability += "; kernels: " + b->isa();
      }
    } else {
      availability = "family (name it as " + e.name + "<arg>)";
    }
    std::cout << "  " << e.name << "  [" << availability << "]  " << e.description << "\n";
  }
  std::cout << "ops (dtypes):\n";
  for (Op op : kAllOps) {
    std::cout << "  " << op_name(op) << " (";
    bool first = true;
    for (DType t : kAllDTypes) {
      if (!op_takes_dtype(op, t)) continue;
      std::cout << (first ? "" : ", ") << dtype_name(t);
      first = false;
    }
    std::cout << ")\n";
  }
  std::cout << "formats: NHWC, NCHW; padding: VALID, SAME, T:B:L:R\n";
  std::cout << "cpu: " << cpu_features().describe() << "\n";
  {
    namespace sb = plugin_sandbox;
    const sb::Mode m = plugin_sandbox_mode();
    std::cout << "plugin sandbox: " << sb::describe(m, sb::planned(m)) << "\n";
    for (const auto& [what, why] : sb::missing_here())
      std::cout << "  " << what << " unavailable: " << why << "\n";
  }
  std::cout << "optimized kernels: " << opt::isa_summary() << "\n";
  const SuitesDir suites = suites_location();
  std::cout << "suites (" << suites.dir << ", " << suites.source << "):";
  for (const std::string& n : suite_names()) std::cout << " " << n;
  std::cout << "\n";
  if (!refused.empty()) throw InvalidArgument(refused);
  return kOk;
}

Tensor read_npy_of_dtype(const std::string& what, const std::string& path, const Problem& p,
                         Layout layout) {
  Tensor t = read_npy(path, layout);
  if (t.dtype() != p.dtype)
    throw InvalidArgument(what + ": file " + path + " has dtype " + dtype_name(t.dtype()) + " ('" +
                          npy_descr(t.dtype()) + "'), expected " + dtype_name(p.dtype) + " ('" +
                          npy_descr(p.dtype) + "') for " + to_string(p));
  return t;
}

void OperandFiles::read(const std::string& path, const Problem& p, const Geometry& g, Role r) {
  Tensor t = read_npy_of_dtype(role_name(r), path, p, storage_layout(p, r));
  check_operand_shape(p, g, r, t.shape(), path);
  tensors[count] = std::move(t);
  views[count] = view(std::as_const(tensors[count]));
  ops.set(r, &views[count]);
  ++count;
}

void add_operand_options(po::options_description& desc) {
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    std::string readers;  // the ops that read role r (core/op_traits.h)
    for (Op op : kAllOps) {
      const OpIO io = op_io(op);
      if (io.a == r || io.b == r)
        readers += (readers.empty() ? "" : ", ") + std::string(op_name(op));
    }
    desc.add_options()(
        role_option(r), po::value<std::string>()->value_name("F"),
        (std::string(role_name(r)) + " .npy (required when the op reads it: " + readers + ")")
            .c_str());
  }
}

int cmd_compute(const Args& args) {
  po::options_description desc("compute");
  // clang-format off
  desc.add_options()
      ("problem", po::value<std::string>(), "descriptor")
      ("backend", po::value<std::string>()->value_name("B"), "backend name, see `list` (required)")
      ("output", po::value<std::string>()->value_name("F"),
       "result .npy to write (required)");
  // clang-format on
  add_operand_options(desc);
  po::variables_map vm = parse_options("compute", args, desc, "problem");
  const CheckedProblem checked(parse_problem(require(vm, "problem", "PROBLEM (a descriptor)")));
  const Problem& p = checked.problem();
  const Geometry& g = checked.geometry();
  require_memory(p, g, MemoryUse::compute);  // before anything is read or allocated
  const std::string backend_name = require(vm, "backend", "--backend");
  const std::string output = require(vm, "output", "--output FILE");

  // design §8: compute passes only the two operands its op reads.
  const OpIO io = op_io(p.op);
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    const bool reads = r == io.a || r == io.b;
    if (reads && !vm.count(role_option(r))) {
      throw InvalidArgument(std::string(op_name(p.op)) + " reads " + role_name(io.a) + " and " +
                            role_name(io.b) + ": missing --" + role_option(r));
    }
    if (!reads && vm.count(role_option(r))) {
      throw InvalidArgument(std::string(op_name(p.op)) + " reads only " + role_name(io.a) +
                            " and " + role_name(io.b) + ", but --" + role_option(r) + " was given");
    }
  }

  std::unique_ptr<Backend> backend = Registry::instance().make(backend_name);
  if (Status s = backend->available(); !s.ok()) {
    std::cerr << "convcheck: backend '" << backend_name << "' is unavailable: " << s.reason()
              << "\n";
    return kUnavailable;
  }
  if (Status s = backend->can_implement(checked); !s.ok()) {
    std::cerr << "convcheck: backend '" << backend_name << "' cannot implement " << to_string(p)
              << ": " << s.reason() << "\n";
    return kUnavailable;
  }

  OperandFiles in;
  for (Role r : {io.a, io.b}) in.read(vm[role_option(r)].as<std::string>(), p, g, r);
  Tensor result(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
  backend->run(checked, in.ops, view(result));
  write_npy(output, result);
  std::cout << "wrote " << output << ": " << result_name(p.op) << " "
            << shape_string(result.shape()) << " " << dtype_name(p.dtype) << " "
            << layout_name(result.layout()) << " (backend " << backend_name << ")\n";
  return kOk;
}

int cmd_operands(const Args& args) {
  po::options_description desc("operands");
  const std::string fills = "TF's test fill: " + fill_names(kOperandsFill, ", ", " or ");
  // clang-format off
  desc.add_options()
      ("problem", po::value<std::string>(), "descriptor")
      ("fill", po::value<std::string>()->value_name("F")->default_value("ramp"), fills.c_str())
      ("seed", po::value<uint64_t>()->value_name("S")->default_value(1), "seed of the random fill")
      ("dir", po::value<std::string>()->value_name("D"),
       "output directory, created if missing (required)");
  // clang-format on
  po::variables_map vm = parse_options("operands", args, desc, "problem");
  const Problem p = parse_problem(require(vm, "problem", "PROBLEM (a descriptor)"));
  const Geometry g = geometry(p);
  require_memory(p, g, MemoryUse::compute);
  const std::string dir = require(vm, "dir", "--dir DIR");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InvalidArgument("cannot create directory " + dir + ": " + ec.message());
  const std::string fill_text = vm["fill"].as<std::string>();
  const std::optional<FillKind> fill = parse_fill(fill_text, kOperandsFill);
  if (!fill) {
    throw InvalidArgument("unknown fill '" + fill_text + "'; expected " +
                          fill_names(kOperandsFill));
  }
  const OpIO io = op_io(p.op);
  for (Role r : {io.a, io.b}) {
    Tensor t(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
    fill_tensor(t, *fill, r, vm["seed"].as<uint64_t>());
    const std::string path = dir + "/" + role_name(r) + ".npy";
    write_npy(path, t);
    std::cout << "wrote " << path << ": " << role_name(r) << " " << shape_string(t.shape()) << " "
              << dtype_name(p.dtype) << " " << layout_name(t.layout()) << "\n";
  }
  return kOk;
}

namespace {

// A value as numpy prints it: every NaN as "nan" (iostreams write "-nan" for a set sign bit).
struct AsNumpy {
  double v;
};
std::ostream& operator<<(std::ostream& os, AsNumpy x) {
  return std::isnan(x.v) ? os << "nan" : os << x.v;
}

}  // namespace

int cmd_inspect(const Args& args) {
  po::options_description desc("inspect");
  desc.add_options()("file", po::value<std::string>(), ".npy file")(
      "all", "print every value (default: the first 16)");
  po::variables_map vm = parse_options("inspect", args, desc, "file");
  const std::string path = require(vm, "file", "FILE.npy");
  const Tensor t = read_npy(path);
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  int64_t nonzero = 0, nan = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = t.get(i);
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    nonzero += v != 0;
  }
  // The stats skip NaNs as numpy's nansum, nanmin and nanmax do (min and max of none: nan).
  std::cout << path << ": dtype " << dtype_name(t.dtype()) << ", shape " << shape_string(t.shape())
            << ", " << t.size() << " elements\n";
  if (t.size() > 0) {
    const bool any = nan < t.size();
    std::cout << "  sum " << AsNumpy{sum} << ", min " << AsNumpy{any ? lo : NAN} << ", max "
              << AsNumpy{any ? hi : NAN} << ", nonzero " << nonzero << ", NaN " << nan << "\n";
  }
  const int64_t shown = vm.count("all") ? t.size() : std::min<int64_t>(t.size(), 16);
  const int64_t row = t.shape().empty() ? 1 : std::max<int64_t>(1, t.shape().back());
  for (int64_t i = 0; i < shown; ++i) {
    std::cout << (i % row == 0 ? "  " : " ") << AsNumpy{t.get(i)}
              << ((i + 1) % row == 0 ? "\n" : "");
  }
  if (shown % row != 0) std::cout << "\n";
  if (shown < t.size()) std::cout << "  ... (" << t.size() - shown << " more; --all prints all)\n";
  return kOk;
}

// The backends a command runs (commands.h).
std::optional<Chosen> choose_backends(const po::variables_map& vm) {
  Chosen c;
  if (vm.count("backends")) {
    std::string names = vm["backends"].as<std::string>();
    std::size_t start = 0;
    while (start <= names.size()) {
      std::size_t comma = names.find(',', start);
      std::string name =
          names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (name.empty()) throw InvalidArgument("--backends: empty backend name in '" + names + "'");
      std::unique_ptr<Backend> b = Registry::instance().make(name);
      if (Status s = b->available(); !s.ok()) {
        std::cerr << "convcheck: backend '" << name << "' is unavailable: " << s.reason() << "\n";
        return std::nullopt;
      }
      c.list.push_back(b.get());
      c.owned.push_back(std::move(b));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    for (const Registry::Entry& e : Registry::instance().entries()) {
      if (e.name.back() == ':') continue;  // families are named explicitly
      std::unique_ptr<Backend> b = e.factory("");
      if (Status s = b->available(); !s.ok()) {
        c.skipped.push_back(e.name + " (unavailable: " + s.reason() + ")");
        continue;
      }
      c.list.push_back(b.get());
      c.owned.push_back(std::move(b));
    }
  }
  return c;
}

namespace {

const char* const kBackendsHelp =
    "comma-separated backends, see `list` (default: every available non-family backend)";

FillKind fill_option(const po::variables_map& vm) {
  const std::string f = vm["fill"].as<std::string>();
  std::optional<FillKind> k = parse_fill(f);
  if (!k) throw InvalidArgument("--fill " + f + ": expected " + fill_names(kOracleFill));
  return *k;
}

}  // namespace

int cmd_check(const Args& args) {
  po::options_description desc("check");
  const std::string fills = "the operands' fill: " + fill_names(kOracleFill, ", ", " or ");
  // clang-format off
  desc.add_options()
      ("problem", po::value<std::string>(), "descriptor")
      ("backends", po::value<std::string>()->value_name("a,b"), kBackendsHelp)
      ("seed", po::value<uint64_t>()->value_name("S")->default_value(1), "the case's seed")
      ("fill", po::value<std::string>()->value_name("F")->default_value("exact"), fills.c_str())
      ("repeat", po::value<int>()->value_name("N")->default_value(2),
       "runs per backend, 2 to 1000 (a difference between runs is nondeterminism)")
      ("json", "print the case report as JSON (default: text)")
      ("after", po::value<std::string>()->value_name("PROBLEM2"),
       "a case run first on each backend, unjudged (default: none)")
      ("after-seed", po::value<uint64_t>()->value_name("S2"), "its seed (default: --seed)")
      ("after-fill", po::value<std::string>()->value_name("F2"), "its fill (default: --fill)");
  // clang-format on
  po::variables_map vm = parse_options("check", args, desc, "problem");
  OracleOptions options;
  options.runs = vm["repeat"].as<int>();
  if (options.runs < 2 || options.runs > 1000)
    throw InvalidArgument("--repeat " + std::to_string(options.runs) +
                          ": expected a number of runs per backend from 2 to 1000");
  Case c;
  c.problem = parse_problem(require(vm, "problem", "PROBLEM (a descriptor)"));
  require_memory(c.problem, geometry(c.problem), MemoryUse::oracle);
  c.seed = vm["seed"].as<uint64_t>();
  c.fill = fill_option(vm);
  // --after: the state a sequence leaves a backend in (the state relation's repro lines).
  std::optional<Case> after;
  if (vm.count("after")) {
    after = c;
    after->problem = parse_problem(vm["after"].as<std::string>());
    require_memory(after->problem, geometry(after->problem), MemoryUse::oracle);
    if (vm.count("after-seed")) after->seed = vm["after-seed"].as<uint64_t>();
    if (vm.count("after-fill")) {
      const std::string f = vm["after-fill"].as<std::string>();
      const std::optional<FillKind> k = parse_fill(f);
      if (!k) throw InvalidArgument("--after-fill " + f + ": expected " + fill_names(kOracleFill));
      after->fill = *k;
    }
  } else if (vm.count("after-seed") || vm.count("after-fill")) {
    throw InvalidArgument("--after-seed and --after-fill need --after PROBLEM2");
  }
  std::optional<Chosen> chosen = choose_backends(vm);
  if (!chosen) return kUnavailable;
  std::vector<std::string> after_notes;
  if (after) {
    for (Backend* b : chosen->list) {
      const std::string why = run_unjudged(*b, *after);
      if (!why.empty()) after_notes.push_back(b->name() + ": the --after case did not run: " + why);
    }
  }
  CaseReport r = run_case(c, chosen->list, options);
  if (after) {
    // A failure may need the --after case: replay both (a state relation's own sequence stays;
    // what follows the case's own line, such as --repeat, is kept).
    for (BackendRecord& b : r.records) {
      const std::string own = repro_line(c, b.backend);
      if (b.repro.rfind(own, 0) == 0 && b.repro.find(" --after ") == std::string::npos)
        b.repro = repro_line(c, b.backend, *after) + b.repro.substr(own.size());
    }
  }
  if (vm.count("json")) {
    std::cout << to_json(r) << "\n";
  } else {
    if (after)
      std::cout << "after " << to_string(after->problem) << "  seed " << after->seed << "  fill "
                << fill_name(after->fill) << " (run first, unjudged)\n";
    for (const std::string& n : after_notes) std::cout << "  note: " << n << "\n";
    std::cout << to_text(r);
    for (const std::string& s : chosen->skipped) std::cout << "  skipped " << s << "\n";
    // The counts, and which failed, last: what a person (or a CI log) reads first.
    std::string failed;
    int n = 0;
    for (const BackendRecord& b : r.records) {
      if (!is_failure(b.verdict)) continue;
      ++n;
      failed += (failed.empty() ? "" : ", ") + b.backend + " " + verdict_name(b.verdict) +
                (b.check.empty() ? "" : " [" + b.check + "]");
    }
    if (n > 0)
      std::cout << "check: " << n << " of " << r.records.size() << " backend"
                << (r.records.size() == 1 ? "" : "s") << " failed: " << failed
                << " (each repro line above reruns one)\n";
  }
  for (const BackendRecord& b : r.records)
    if (is_failure(b.verdict)) return kCheckFailed;
  return kOk;
}

int cmd_fuzz(const Args& args) {
  po::options_description desc("fuzz");
  // clang-format off
  desc.add_options()
      ("backends", po::value<std::string>()->value_name("a,b"), kBackendsHelp)
      ("cases", po::value<int64_t>()->value_name("N"),
       "number of cases (default: 100 unless --time is given)")
      ("time", po::value<double>()->value_name("SECONDS"),
       "draw cases for this long instead (default: off)")
      ("seed", po::value<uint64_t>()->value_name("S")->default_value(1), "seed of the case stream")
      ("out", po::value<std::string>()->value_name("DIR"),
       "keep DIR/failures.jsonl and DIR/fuzz.json (default: none, so no --resume)")
      ("shard", po::value<std::string>()->value_name("K/N"),
       "run case i of the stream when i mod N == K-1 (default: 1/1)")
      ("resume", "continue the campaign recorded in --out DIR/fuzz.json (default: off)");
  // clang-format on
  po::variables_map vm = parse_options("fuzz", args, desc, nullptr);
  if (memory_limit() < kFuzzMemoryBytes) {  // generated problems stay below this (core/limits.h)
    throw ResourceLimit("fuzz needs a memory limit of at least " + format_bytes(kFuzzMemoryBytes) +
                        " (its generated cases stay below that), got --max-bytes " +
                        std::to_string(memory_limit()));
  }
  FuzzOptions o;
  o.seed = vm["seed"].as<uint64_t>();
  if (vm.count("cases") && vm.count("time"))
    throw InvalidArgument("give --cases or --time, not both");
  if (vm.count("cases")) {
    o.cases = vm["cases"].as<int64_t>();
    if (o.cases <= 0)
      throw InvalidArgument("--cases must be positive, got " + std::to_string(o.cases));
  }
  if (vm.count("time")) {
    o.seconds = vm["time"].as<double>();
    // A deadline past a week would overflow the clock's arithmetic long before it mattered.
    constexpr double kWeek = 7 * 24 * 3600;
    if (!(o.seconds > 0) || !(o.seconds <= kWeek))
      throw InvalidArgument("--time must be positive seconds, at most " +
                            std::to_string(static_cast<long>(kWeek)) + " (a week)");
    o.cases = INT64_MAX;
  }
  FuzzState state;  // scale-out and resume (tools/run.cpp)
  state.seed = o.seed;
  state.shard = vm.count("shard") ? vm["shard"].as<std::string>() : "1/1";
  shard_of(state.shard, &o.shard_k, &o.shard_n);
  state.limit = o.seconds > 0 ? "time" : "cases " + std::to_string(o.cases);
  if (vm.count("resume") && !vm.count("out"))
    throw InvalidArgument("--resume needs --out DIR (where the campaign's fuzz.json is)");
  // One campaign (or run) per --out, like `run` (reports/summary.h): exit 2 naming the holder.
  std::optional<reports::OutputLock> lock;
  if (vm.count("out")) {
    const std::string dir = vm["out"].as<std::string>();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InvalidArgument("cannot create directory " + dir + ": " + ec.message());
    lock.emplace(dir, vm.count("resume") ? "fuzz --resume" : "fuzz");
    reports::remove_stale_temporaries(dir);
  }
  std::optional<Chosen> chosen = choose_backends(vm);
  if (!chosen) return kUnavailable;
  for (Backend* b : chosen->list) state.backends.push_back(b->name());
  if (vm.count("resume")) {
    resume_fuzz_state(vm["out"].as<std::string>(), &state);
    o.first_case = state.next_case;
    std::vector<Backend*> still;  // backends that failed before are not fuzzed further
    for (Backend* b : chosen->list)
      if (std::find(state.failed.begin(), state.failed.end(), b->name()) == state.failed.end())
        still.push_back(b);
    chosen->list = still;
  }
  std::ofstream jsonl;
  if (vm.count("out")) {
    const std::string dir = vm["out"].as<std::string>();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InvalidArgument("cannot create directory " + dir + ": " + ec.message());
    jsonl.open(dir + "/failures.jsonl", std::ios::app);
    if (!jsonl) throw InvalidArgument("cannot open " + dir + "/failures.jsonl for writing");
  }
  InterruptGuard interrupt;  // from the first line on stdout: a closed pipe is an interrupt
  std::string names;
  for (Backend* b : chosen->list) names += (names.empty() ? "" : ",") + b->name();
  std::cout << "fuzz: backends " << names << ", seed " << o.seed << ", "
            << (o.seconds > 0 ? std::to_string(o.seconds) + " s"
                              : std::to_string(o.cases) + " cases")
            << (o.shard_n > 1 ? ", shard " + state.shard : "")
            << (o.first_case > 0 ? ", resuming at case " + std::to_string(o.first_case) : "")
            << std::endl;  // now, while a closed stdout is an interrupt
  for (const std::string& s : chosen->skipped) std::cout << "fuzz: skipped " << s << "\n";
  o.stop = [] { return InterruptGuard::signal() != 0; };
  // This shard's cases of the stream, and those before the resumed case (as `run` counts).
  auto shard_cases = [&](int64_t end) {
    return reports::count_planned(end, reports::Shard{o.shard_k, o.shard_n});
  };
  const int64_t before = shard_cases(o.first_case);
  Progress progress("fuzz", "failing backend", o.seconds > 0 ? 0 : shard_cases(o.cases), before,
                    o.seconds);
  const FuzzSummary summary = fuzz(
      chosen->list, o,
      [&](int64_t done) {
        progress.update(before + done, static_cast<int64_t>(state.failed.size()));
      },
      [&](const FuzzFailure& f) {
        progress.finish();  // the terminal's progress line, before the failure's lines
        std::cout << "FAIL " << f.backend << " [" << f.record.check << "] " << f.record.reason
                  << "\n"
                  << "  minimal (" << f.shrink_steps << " shrink steps): " << f.repro << "\n"
                  << "  first found: " << repro_line(f.original, f.backend) << std::endl;
        state.failed.push_back(f.backend);
        if (jsonl) {
          CaseReport r;
          r.c = f.minimal;
          r.records.push_back(f.record);
          jsonl << to_json(r) << "\n" << std::flush;
        }
      });
  progress.finish();
  state.next_case = summary.next_case;
  state.cases_run += summary.cases;
  state.interrupted = InterruptGuard::signal() != 0;
  if (vm.count("out")) write_fuzz_state(vm["out"].as<std::string>(), state);
  // Stdout closed under us (SIGPIPE): the closing lines go where someone may still read them.
  std::ostream& out = InterruptGuard::signal() == SIGPIPE ? std::cerr : std::cout;
  out << "fuzz: " << summary.cases << " cases, " << summary.failures.size() << " failing backend"
      << (summary.failures.size() == 1 ? "" : "s") << ", " << summary.unsupported
      << " unsupported (case, backend) pairs\n";
  if (state.interrupted) {
    out << "fuzz: interrupted (signal " << InterruptGuard::signal() << ") before case "
        << state.next_case << "; "
        << (vm.count("out") ? "rerun with --resume to continue"
                            : "give --out DIR to be able to --resume")
        << std::endl;
    return 128 + InterruptGuard::signal();
  }
  out << std::flush;
  return state.failed.empty() ? kOk : kCheckFailed;
}

namespace {

// " a-b": a MedianInterval's ends for the bench table ("" where there is none).
std::string interval_text(const MedianInterval& m, const char* format) {
  if (m.level <= 0) return "";
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, format, m.lo);
  std::snprintf(hi, sizeof hi, format, m.hi);
  return std::string(", ") + lo + "-" + hi;
}

}  // namespace

int cmd_bench(const Args& args) {
  po::options_description desc("bench");
  // clang-format off
  desc.add_options()
      ("suite", po::value<std::string>()->value_name("NAME|FILE"),
       "a suite in suites/ (perf_cpu, perf_gpu, ...) or a suite file (required)")
      ("backends", po::value<std::string>()->value_name("a,b"),
       "comma-separated backends; the second is the comparator (required)")
      ("threads", po::value<std::string>()->value_name("T[,T2...]"),
       "OpenMP threads (default: all); several counts are interleaved in each round, and each "
       "later count's records have the speedup over the first")
      ("reps", po::value<int>()->value_name("N")->default_value(10), "timed runs per backend")
      ("warmup", po::value<int>()->value_name("W")->default_value(2),
       "untimed runs per backend first")
      ("json", "one JSON object per (problem, backend) (default: a table)");
  // clang-format on
  po::variables_map vm = parse_options("bench", args, desc, nullptr);
  const Suite suite = read_suite(require(vm, "suite", "--suite NAME|FILE"));
  for (const SuiteEntry& e : suite.entries) {  // every problem, before any is measured
    try {
      require_memory(e.problem, geometry(e.problem), MemoryUse::bench);
    } catch (const ResourceLimit& err) {
      throw ResourceLimit(suite.path + ":" + std::to_string(e.line) + ": " + err.what());
    }
  }
  if (!vm.count("backends")) throw InvalidArgument("missing --backends (e.g. optimized,onednn)");
  BenchOptions o;
  o.reps = vm["reps"].as<int>();
  o.warmup = vm["warmup"].as<int>();
  constexpr int kMaxReps = 1000000;  // each timed run's figure is kept: bounded memory
  if (o.reps < 1 || o.warmup < 0 || o.reps > kMaxReps || o.warmup > kMaxReps)
    throw InvalidArgument("--reps must be from 1 and --warmup from 0, both at most " +
                          std::to_string(kMaxReps) + "; got --reps " + std::to_string(o.reps) +
                          " --warmup " + std::to_string(o.warmup));
  o.threads = {omp_get_max_threads()};
  if (vm.count("threads")) {
    const std::string text = vm["threads"].as<std::string>();
    o.threads = parse_thread_counts(text, "--threads " + text,
                                    "expected a thread count or a list of them (1,2)");
    for (int t : o.threads)
      if (std::count(o.threads.begin(), o.threads.end(), t) > 1)
        throw InvalidArgument("--threads " + text + ": " + std::to_string(t) + " is listed twice");
  }
  omp_set_num_threads(o.threads.front());
  std::optional<Chosen> chosen = choose_backends(vm);
  if (!chosen) return kUnavailable;
  std::vector<Peaks> peaks;
  for (int t : o.threads) peaks.push_back(measure_peaks(t));
  const bool json = vm.count("json");
  const bool several = o.threads.size() > 1;
  if (!json) {
    for (const Peaks& pk : peaks)
      std::cout << "bench " << suite.name << ": " << pk.threads << " thread"
                << (pk.threads > 1 ? "s" : "") << ", f32 FMA peak " << pk.fma_gflops << " GFLOP/s ("
                << pk.isa << "), triad " << pk.bandwidth_gbs << " GB/s, medians of " << o.reps
                << " interleaved runs after " << o.warmup << " warm-up\n";
    if (o.reps >= 2 && (chosen->list.size() >= 2 || several)) {  // a paired ratio or a speedup
      char level[32];
      std::snprintf(level, sizeof level, "%.1f",
                    100 * median_rank(static_cast<std::size_t>(o.reps)).level);
      std::cout << "paired ratios and speedups: the median over rounds, then a distribution-free "
                << level << " % interval for it (order statistics of the rounds)\n";
    }
    std::cout << "cpu: " << cpu_features().describe() << "; kernels:";
    for (Backend* b : chosen->list)
      std::cout << " " << b->name() << "=" << (b->isa().empty() ? "-" : b->isa());
    std::cout << "\n";
  }
  // (op, threads) -> sums of log ratio and of log paired ratio, count
  struct LogSums {
    double ratio = 0, paired = 0;
    int count = 0;
  };
  std::map<std::pair<std::string, int>, LogSums> log_ratio;
  const std::size_t B = chosen->list.size();
  for (const SuiteEntry& e : suite.entries) {
    const std::vector<BenchRecord> rs = bench_problem(e.problem, e.tag, chosen->list, o, peaks);
    for (std::size_t j = 0; j < rs.size(); ++j) {
      const BenchRecord& r = rs[j];
      if (json) {
        std::cout << bench_json(r, peaks[j / B]) << std::endl;
        continue;
      }
      if (j == 0) std::cout << r.problem << (r.tag.empty() ? "" : "  [" + r.tag + "]") << "\n";
      const std::string who =
          several ? r.backend + " " + std::to_string(r.threads) + "t" : r.backend;
      // Pieces of bounded length from snprintf; the backend's name and reason as they are.
      std::string line = "  " + who + std::string(who.size() < 12 ? 12 - who.size() : 0, ' ');
      if (!r.ran) {
        line += " not run: " + r.reason;
      } else {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      " median %9.3f ms (min %9.3f, max %9.3f)  %8.1f GFLOP/s (useful %8.1f)"
                      "  %5.1f%% peak  %5.1f%% bw",
                      r.median_ms, r.min_ms, r.max_ms, r.gflops, r.useful_gflops, r.pct_peak,
                      r.pct_bandwidth);
        line += buf;
        // Depthwise ops (bandwidth-bound): also against the triad at the round's footprint
        // (bench/harness.h, footprint_bytes); every record has it in --json.
        if (r.pct_footprint_bandwidth > 0 && op_traits(e.problem.op).depthwise) {
          std::snprintf(buf, sizeof buf, " (%.1f%% at size)", r.pct_footprint_bandwidth);
          line += buf;
        }
        if (r.ratio > 0) {
          std::snprintf(buf, sizeof buf, "  x%.3f (paired %.3f", r.ratio, r.paired_ratio);
          line += buf + interval_text(r.paired_interval, "%.3f") + ")";
        }
        if (r.speedup > 0) {
          std::snprintf(buf, sizeof buf, "  %.2fx", r.speedup);
          line += buf + interval_text(r.speedup_interval, "%.2f") + " over " +
                  std::to_string(r.speedup_base) + "t";
        }
      }
      line += "\n";
      std::cout << line << bench_text_note(r) << std::flush;
      if (j % B == 0 && B >= 2 && r.ran && rs[j + 1].ran) {
        LogSums& acc = log_ratio[{op_name(e.problem.op), r.threads}];
        acc.ratio += std::log(r.ratio);
        acc.paired += std::log(r.paired_ratio);
        acc.count += 1;
      }
    }
  }
  if (!json && !log_ratio.empty()) {
    std::cout << "geometric mean throughput " << chosen->list[0]->name() << " / "
              << chosen->list[1]->name() << ":\n";
    for (const auto& [key, acc] : log_ratio)
      std::cout << "  " << key.first << (several ? " (" + std::to_string(key.second) + "t)" : "")
                << ": " << std::exp(acc.ratio / acc.count) << " (paired "
                << std::exp(acc.paired / acc.count) << ") over " << acc.count << " problem"
                << (acc.count > 1 ? "s" : "") << "\n";
  }
  return kOk;
}

namespace {

// --max-bytes N (issue 8), common to the commands that allocate a problem's tensors: sets the
// process-wide memory limit (core/limits.h) that they check before allocating, and that the .npy
// reader and the oracle's run_case check too. Taken out of `args` here so that each command's own
// options stay as they were; other commands reject it as an unknown option.
void take_max_bytes(const std::string& command, Args& args) {
  const Command* c = find_command(command);
  if (c == nullptr || !c->help.takes_max_bytes) return;
  const std::string flag = "--max-bytes";
  for (std::size_t i = 0; i < args.size();) {
    std::string value;
    if (args[i] == flag) {
      if (i + 1 >= args.size()) throw InvalidArgument(flag + " needs a value, e.g. --max-bytes 8G");
      value = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i + 2));
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
      continue;
    }
    set_memory_limit(parse_byte_size(value, flag));
  }
}

}  // namespace

int run(int argc, char** argv) {
  std::ios::sync_with_stdio(true);
  if (argc < 2) {
    std::cerr << usage();
    return kBadInput;
  }
  const std::string command = argv[1];
  Args args(argv + 2, argv + argc);
  try {
    register_builtin_backends();
    check_thread_environment();  // before the first parallel region (libgomp crashed on 10^5)
    take_plugin_timeout(args);   // global options: --plugin-timeout S, --plugin-sandbox MODE
    take_plugin_sandbox(args);
    take_max_bytes(command, args);
    if (const Command* c = find_command(command)) return c->fn(args);
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << usage();
      return kOk;
    }
    if (command == "--version" || command == "version") {
      std::cout << version_text();
      return kOk;
    }
    std::vector<std::string> names;
    for (const Command& c : kCommands) names.push_back(c.help.name);
    const std::string near = nearest(command, names);
    std::cerr << "convcheck: unknown command '" << command << "'"
              << (near.empty() ? "" : "; did you mean " + near + "?") << "\n"
              << usage();
    return kBadInput;
  } catch (const HelpShown& h) {
    std::cout << h.text;
    return kOk;
  } catch (const InvalidArgument& e) {
    std::cerr << "convcheck " << command << ": error: " << e.what() << "\n";
    return kBadInput;
  } catch (const po::error& e) {
    std::cerr << "convcheck " << command << ": error: " << e.what() << "\n";
    return kBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "convcheck " << command << ": error: out of memory\n";
    return kBadInput;
  } catch (const std::exception& e) {
    // Not the user's fault: a bug in convcheck. Say so rather than crash.
    std::cerr << "convcheck " << command << ": internal error: " << e.what() << "\n";
    return kInternal;
  }
}

}  // namespace convcheck::cli
