#include "tools/commands.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <utility>

#include "core/admission.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/npy.h"
#include "core/problem.h"
#include "reference/reference.h"
#include "tools/fills.h"

namespace po = boost::program_options;

namespace convcheck::cli {

namespace {

const char* kUsage =
    "usage: convcheck <command> [options]\n"
    "\n"
    "commands:\n"
    "  list                                   backends (with availability), ops, dtypes\n"
    "  compute PROBLEM --backend B [--input F] [--filter F] [--out-backprop F] --output F\n"
    "                                         run one op on .npy operands (only the two it reads)\n"
    "  operands PROBLEM --fill ones|ramp|random [--seed S] --dir D\n"
    "                                         write the operands PROBLEM reads as D/<role>.npy\n"
    "  inspect FILE.npy [--all]               print a .npy file's dtype, shape, stats and values\n"
    "\n"
    "PROBLEM is a descriptor, e.g. "
    "'conv2d_backprop_input:input=2x7x7x128,filter=3x3x128x64,stride=2x2,padding=SAME'.\n"
    "exit codes: 0 ok, 1 a check failed, 2 bad usage or input, 3 backend unavailable.\n";

// Parses `args` against `desc` with one positional argument named `positional` (if non-null).
po::variables_map parse(const Args& args, const po::options_description& desc,
                        const char* positional) {
  po::positional_options_description pos;
  if (positional) pos.add(positional, 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  po::notify(vm);
  return vm;
}

std::string require(const po::variables_map& vm, const char* key, const char* what) {
  if (!vm.count(key)) throw InvalidArgument(std::string("missing ") + what);
  return vm[key].as<std::string>();
}

const char* option_of(Role r) {
  switch (r) {
    case Role::input:
      return "input";
    case Role::filter:
      return "filter";
    case Role::out_backprop:
      return "out-backprop";
  }
  return "?";
}

}  // namespace

void register_builtin_backends() {
  static bool done = false;
  if (done) return;
  done = true;
  register_reference_backend(Registry::instance());
}

int cmd_list(const Args& args) {
  if (!args.empty()) throw InvalidArgument("list takes no arguments, got '" + args[0] + "'");
  std::cout << "backends:\n";
  for (const Registry::Entry& e : Registry::instance().entries()) {
    std::string availability = "available";
    if (e.name.back() != ':') {
      Status s = e.factory("")->available();
      if (!s.ok()) availability = "unavailable: " + s.reason();
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
  return kOk;
}

int cmd_compute(const Args& args) {
  po::options_description desc("compute");
  desc.add_options()("problem", po::value<std::string>(), "descriptor")(
      "backend", po::value<std::string>(), "backend name")("input", po::value<std::string>(),
                                                           "input .npy")(
      "filter", po::value<std::string>(), "filter .npy")("out-backprop", po::value<std::string>(),
                                                         "out_backprop .npy")(
      "output", po::value<std::string>(), "result .npy to write");
  po::variables_map vm = parse(args, desc, "problem");
  const Problem p = parse_problem(require(vm, "problem", "PROBLEM (a descriptor)"));
  const Geometry g = geometry(p);
  const std::string backend_name = require(vm, "backend", "--backend");
  const std::string output = require(vm, "output", "--output FILE");

  // design §8: compute passes only the two operands its op reads.
  const OpIO io = op_io(p.op);
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    const bool reads = r == io.a || r == io.b;
    if (reads && !vm.count(option_of(r))) {
      throw InvalidArgument(std::string(op_name(p.op)) + " reads " + role_name(io.a) + " and " +
                            role_name(io.b) + ": missing --" + option_of(r));
    }
    if (!reads && vm.count(option_of(r))) {
      throw InvalidArgument(std::string(op_name(p.op)) + " reads only " + role_name(io.a) +
                            " and " + role_name(io.b) + ", but --" + option_of(r) + " was given");
    }
  }

  std::unique_ptr<Backend> backend = Registry::instance().make(backend_name);
  if (Status s = backend->available(); !s.ok()) {
    std::cerr << "convcheck: backend '" << backend_name << "' is unavailable: " << s.reason()
              << "\n";
    return kUnavailable;
  }
  if (Status s = backend->can_implement(p); !s.ok()) {
    std::cerr << "convcheck: backend '" << backend_name << "' cannot implement " << to_string(p)
              << ": " << s.reason() << "\n";
    return kUnavailable;
  }

  Tensor tensors[2];
  ConstTensorView views[2];
  Operands ops;
  int k = 0;
  for (Role r : {io.a, io.b}) {
    const std::string path = vm[option_of(r)].as<std::string>();
    tensors[k] = read_npy(path, storage_layout(p, r));
    if (tensors[k].dtype() != p.dtype) {
      throw InvalidArgument(std::string(role_name(r)) + ": file " + path + " has dtype " +
                            dtype_name(tensors[k].dtype()) + " ('" + npy_descr(tensors[k].dtype()) +
                            "'), expected " + dtype_name(p.dtype) + " ('" + npy_descr(p.dtype) +
                            "') for " + to_string(p));
    }
    check_operand_shape(p, g, r, tensors[k].shape(), path);
    views[k] = view(std::as_const(tensors[k]));
    ops.set(r, &views[k]);
    ++k;
  }
  Tensor result(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
  backend->run(p, g, ops, view(result));
  write_npy(output, result);
  std::cout << "wrote " << output << ": " << result_name(p.op) << " "
            << shape_string(result.shape()) << " " << dtype_name(p.dtype) << " "
            << layout_name(result.layout()) << " (backend " << backend_name << ")\n";
  return kOk;
}

int cmd_operands(const Args& args) {
  po::options_description desc("operands");
  desc.add_options()("problem", po::value<std::string>(), "descriptor")(
      "fill", po::value<std::string>()->default_value("ramp"), "ones | ramp | random")(
      "seed", po::value<uint64_t>()->default_value(1), "seed for random")(
      "dir", po::value<std::string>(), "output directory");
  po::variables_map vm = parse(args, desc, "problem");
  const Problem p = parse_problem(require(vm, "problem", "PROBLEM (a descriptor)"));
  const Geometry g = geometry(p);
  const std::string dir = require(vm, "dir", "--dir DIR");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InvalidArgument("cannot create directory " + dir + ": " + ec.message());
  const OpIO io = op_io(p.op);
  for (Role r : {io.a, io.b}) {
    Tensor t(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
    fill_tensor(t, vm["fill"].as<std::string>(), vm["seed"].as<uint64_t>() + static_cast<int>(r));
    const std::string path = dir + "/" + role_name(r) + ".npy";
    write_npy(path, t);
    std::cout << "wrote " << path << ": " << role_name(r) << " " << shape_string(t.shape()) << " "
              << dtype_name(p.dtype) << " " << layout_name(t.layout()) << "\n";
  }
  return kOk;
}

int cmd_inspect(const Args& args) {
  po::options_description desc("inspect");
  desc.add_options()("file", po::value<std::string>(), ".npy file")("all", "print every value");
  po::variables_map vm = parse(args, desc, "file");
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
  std::cout << path << ": dtype " << dtype_name(t.dtype()) << ", shape " << shape_string(t.shape())
            << ", " << t.size() << " elements\n";
  if (t.size() > 0) {
    std::cout << "  sum " << sum << ", min " << lo << ", max " << hi << ", nonzero " << nonzero
              << ", NaN " << nan << "\n";
  }
  const int64_t shown = vm.count("all") ? t.size() : std::min<int64_t>(t.size(), 16);
  const int64_t row = t.shape().empty() ? 1 : std::max<int64_t>(1, t.shape().back());
  for (int64_t i = 0; i < shown; ++i) {
    std::cout << (i % row == 0 ? "  " : " ") << t.get(i) << ((i + 1) % row == 0 ? "\n" : "");
  }
  if (shown % row != 0) std::cout << "\n";
  if (shown < t.size()) std::cout << "  ... (" << t.size() - shown << " more; --all prints all)\n";
  return kOk;
}

int run(int argc, char** argv) {
  std::ios::sync_with_stdio(true);
  if (argc < 2) {
    std::cerr << kUsage;
    return kBadInput;
  }
  const std::string command = argv[1];
  const Args args(argv + 2, argv + argc);
  try {
    register_builtin_backends();
    if (command == "list") return cmd_list(args);
    if (command == "compute") return cmd_compute(args);
    if (command == "operands") return cmd_operands(args);
    if (command == "inspect") return cmd_inspect(args);
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return kOk;
    }
    std::cerr << "convcheck: unknown command '" << command << "'\n" << kUsage;
    return kBadInput;
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
