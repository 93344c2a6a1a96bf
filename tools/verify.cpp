// `convcheck verify`: tools/verify.h has the contract names and the output.
#include "tools/verify.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "core/admission.h"
#include "core/error.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/npy.h"
#include "core/problem.h"
#include "oracle/contracts.h"
#include "oracle/oracle.h"
#include "plugins/plugins.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace convcheck::cli {

namespace {

std::string quote(const std::string& s) {
  if (s.find_first_of(" '\"\\$`") == std::string::npos) return s;
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

// The two operands the op reads, as `compute` takes them; a third is ignored with a note. Adds
// each to the repro line.
void read_operands(const po::variables_map& vm, const Problem& p, const Geometry& g,
                   OperandFiles& in, std::string& repro) {
  const OpIO io = op_io(p.op);
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    const bool reads = r == io.a || r == io.b;
    if (!reads) {
      if (vm.count(role_option(r)))
        std::cerr << "convcheck verify: note: " << op_name(p.op) << " does not read "
                  << role_name(r) << "; --" << role_option(r) << " ignored\n";
      continue;
    }
    if (!vm.count(role_option(r)))
      throw InvalidArgument(std::string(op_name(p.op)) + " reads " + role_name(io.a) + " and " +
                            role_name(io.b) + ": missing --" + role_option(r));
    const std::string path = vm[role_option(r)].as<std::string>();
    in.read(path, p, g, r);
    repro += std::string(" --") + role_option(r) + " " + quote(path);
  }
}

Tensor read_result(const std::string& path, const Problem& p, const Geometry& g) {
  const Role r = op_io(p.op).result_like;
  const Shape want = storage_shape(p, g, r);
  Tensor result = read_npy_of_dtype("result", path, p, storage_layout(p, r));
  if (result.shape() != want)
    throw InvalidArgument("result: file " + path + " has shape " + shape_string(result.shape()) +
                          ", expected " + shape_string(want) + " (" + result_name(p.op) + " in " +
                          layout_name(storage_layout(p, r)) + ") for " + to_string(p));
  return result;
}

void print_verdicts(bool as_json, const Problem& p, const std::string& result_path,
                    const Tensor& result, const std::vector<BackendRecord>& records) {
  const TfAdmission admission = tf_admission(p);
  if (as_json) {
    json::Value o;
    o["command"] = "verify";
    o["problem"] = to_string(p);
    o["result"] = result_path;
    o["tf_admission"] = to_json(admission);
    o["backends"] = json::Value::array();
    for (const BackendRecord& r : records) o["backends"].push_back(to_json(r));
    std::cout << json::dump(o) << "\n";
    return;
  }
  std::cout << to_string(p) << "\n  result " << result_path << ": " << result_name(p.op) << " "
            << shape_string(result.shape()) << " " << dtype_name(p.dtype) << "\n";
  std::cout << "  TF admission: CPU " << admission_kind_name(admission.cpu.kind)
            << (admission.cpu.message.empty() ? "" : " (" + admission.cpu.message + ")") << ", GPU "
            << admission_kind_name(admission.gpu.kind)
            << (admission.gpu.message.empty() ? "" : " (" + admission.gpu.message + ")") << "\n";
  for (const BackendRecord& b : records) {
    std::cout << "  " << b.backend << ": " << verdict_name(b.verdict);
    if (!b.check.empty()) std::cout << " [" << b.check << "]";
    if (!b.reason.empty()) std::cout << " " << b.reason;
    std::cout << "\n    bound usage " << b.bound_usage << ", " << b.mismatches
              << " elements over their bound, contract " << b.contract << "\n";
    if (b.verdict == Verdict::fail) std::cout << "    repro: " << b.repro << "\n";
  }
}

}  // namespace

int cmd_verify(const Args& args) {
  po::options_description desc("verify");
  // clang-format off
  desc.add_options()
      ("problem", po::value<std::string>(), "descriptor")
      ("result", po::value<std::string>()->value_name("F"), "the result .npy to judge (required)")
      ("contract", po::value<std::string>()->value_name("C[,C...]"),
       "f32, tf32, f16, bf16, f64, exact or i32; several give a record each (default: f32 for "
       "f16, bf16 and f32, f64 for f64, i32 for i32)")
      ("json", "print the records as JSON (default: text)");
  // clang-format on
  add_operand_options(desc);  // a third operand is accepted and ignored, with a note
  po::variables_map vm = parse_options("verify", args, desc, "problem");
  if (!vm.count("problem")) throw InvalidArgument("missing PROBLEM (a descriptor)");
  const Problem p = parse_problem(vm["problem"].as<std::string>());
  const Geometry g = geometry(p);
  require_memory(p, g, MemoryUse::compute);  // refused before any operand is read (issue 8)
  if (!vm.count("result")) throw InvalidArgument("missing --result FILE");
  const std::string result_path = vm["result"].as<std::string>();
  const std::vector<NamedContract> contracts =
      parse_contracts(vm.count("contract") ? vm["contract"].as<std::string>() : "", p);

  OperandFiles in;
  std::string repro = "convcheck verify " + quote(to_string(p));
  read_operands(vm, p, g, in, repro);
  const Tensor result = read_result(result_path, p, g);
  repro += " --result " + quote(result_path);

  std::vector<BackendRecord> records;
  bool any_failed = false;
  for (const NamedContract& c : contracts) {
    BackendRecord r = judge_result(p, in.ops, result, c.contract, c.bitwise, "verify:" + c.name);
    r.repro = repro + " --contract " + c.name;
    any_failed = any_failed || r.verdict == Verdict::fail;
    records.push_back(std::move(r));
  }
  print_verdicts(vm.count("json") > 0, p, result_path, result, records);
  return any_failed ? kCheckFailed : kOk;
}

// Seconds past which a deadline would overflow the clocks' arithmetic (a week is plenty).
constexpr double kMaxPluginTimeout = 7 * 24 * 3600;

double parse_timeout(const std::string& what, const std::string& value) {
  char* end = nullptr;
  const double s = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != 0 || !(s > 0) || !std::isfinite(s) || s > kMaxPluginTimeout)
    throw InvalidArgument(what + " " + value + ": expected a positive number of seconds, at most " +
                          std::to_string(static_cast<long>(kMaxPluginTimeout)) + " (a week)");
  return s;
}

namespace {

// A global option, `FLAG V` or `FLAG=V` wherever it stands, after its environment variable `env`:
// each value is given to `set` (the flag's last one wins) and the flag is taken out of `args`.
template <class Set>
void take_global(Args& args, const std::string& flag, const char* env, const std::string& needs,
                 Set set) {
  if (const char* e = std::getenv(env); e && *e) set(env, e);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string value;
    std::size_t n = 0;  // arguments taken
    if (args[i] == flag) {
      if (i + 1 >= args.size()) throw InvalidArgument(flag + " needs " + needs);
      value = args[i + 1];
      n = 2;
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
      n = 1;
    } else {
      continue;
    }
    set(flag, value);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
               args.begin() + static_cast<std::ptrdiff_t>(i + n));
    --i;
  }
}

}  // namespace

void take_plugin_timeout(Args& args) {
  take_global(args, "--plugin-timeout", "CONVCHECK_PLUGIN_TIMEOUT", "a number of seconds",
              [](const std::string& what, const std::string& value) {
                set_plugin_timeout(parse_timeout(what, value));
              });
}

void take_plugin_sandbox(Args& args) {
  namespace sb = plugin_sandbox;
  take_global(args, "--plugin-sandbox", "CONVCHECK_PLUGIN_SANDBOX", "a mode: " + sb::mode_names(),
              [](const std::string& what, const std::string& value) {
                const std::optional<sb::Mode> m = sb::parse_mode(value);
                if (!m)
                  throw InvalidArgument(what + " " + value + ": expected " + sb::mode_names());
                set_plugin_sandbox(*m);  // refuses a mode this machine cannot give, naming why
              });
}

}  // namespace convcheck::cli
