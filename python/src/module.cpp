// The `convcheck._convcheck` extension module (issue 17): the oracle, the reference, the fuzz
// driver and the registered backends, in process, for Python. Thin: every fact it uses has its
// home in the C++ libraries (Problem and its parser: core/problem.h; fills and the case's
// operands: oracle/; named contracts: oracle/contracts.h; judging: oracle/oracle.h's
// judge_result, as `convcheck verify`; fuzzing and shrinking: properties/fuzz.h; coverage classes:
// reports/summary.h). The Python package (python/convcheck/__init__.py) wraps it.
//
// Arrays cross the boundary as "raw" arrays: C-contiguous, host memory, bf16 as its uint16 bits.
// The Python side (convcheck/_glue.py) turns DLPack objects (torch, jax), device arrays and
// ml_dtypes.bfloat16 arrays into raw ones (_to_raw) and raw results into the user's view
// (_from_raw).
//
// The GIL is released while C++ computes; a Python function run as a backend (PyBackend)
// re-acquires it for each call. A Python exception in it becomes the `crashed` verdict carrying
// the exception's last traceback line; convcheck.Unsupported declines the problem.
//
// nanobind rather than pybind11 (README "From Python"): its ndarray type speaks DLPack natively,
// so PyTorch and JAX arrays arrive without a copy, and it builds faster and smaller.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "comparators/comparators.h"
#include "core/admission.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/json.h"
#include "core/problem.h"
#include "core/suite.h"
#include "core/tensor.h"
#include "gpu/gpu.h"
#include "mutants/mutants.h"
#include "optimized/optimized.h"
#include "oracle/contracts.h"
#include "oracle/fills.h"
#include "oracle/oracle.h"
#include "properties/fuzz.h"
#include "reference/reference.h"
#include "reports/results.h"
#include "reports/summary.h"
#include "tools/in_process_backends.h"

namespace nb = nanobind;
using namespace convcheck;

namespace {

using RawArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

nb::dlpack::dtype dl_dtype(DType t) {
  switch (t) {
    case DType::f16:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::bf16:
      return nb::dtype<uint16_t>();  // raw bits; _from_raw views them as ml_dtypes.bfloat16
    case DType::f32:
      return nb::dtype<float>();
    case DType::f64:
      return nb::dtype<double>();
    case DType::i32:
      return nb::dtype<int32_t>();
  }
  return nb::dtype<float>();
}

std::string dl_name(const nb::dlpack::dtype& d) {
  const char* code = d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int)      ? "int"
                     : d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt)   ? "uint"
                     : d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float)  ? "float"
                     : d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) ? "bfloat"
                                                                                      : "other";
  return std::string(code) + std::to_string(d.bits);
}

// Whether array dtype `d` holds values of `t` (bf16: the raw uint16 bits, or DLPack's bfloat16).
bool holds(const nb::dlpack::dtype& d, DType t) {
  if (d.lanes != 1) return false;
  if (t == DType::bf16)
    return d.bits == 16 && (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ||
                            d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat));
  return d == dl_dtype(t);
}

// A new numpy array (raw: bf16 as uint16) owning a copy of `t`'s data.
nb::object to_raw_numpy(Tensor t) {
  auto* owned = new Tensor(std::move(t));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  return nb::cast(nb::ndarray<nb::numpy>(owned->data(), shape.size(), shape.data(), owner, nullptr,
                                         dl_dtype(owned->dtype())));
}

Shape shape_of(const RawArray& a) {
  Shape s;
  for (size_t i = 0; i < a.ndim(); ++i) s.push_back(static_cast<int64_t>(a.shape(i)));
  return s;
}

// Checks raw array `a` as role `r` of `p` (dtype and storage shape, with TF's messages) and views
// it without a copy.
ConstTensorView view_of(const RawArray& a, const CheckedProblem& cp, Role r, const char* what) {
  const Problem& p = cp.problem();
  if (!holds(a.dtype(), p.dtype))
    throw InvalidArgument(std::string(what) + ": array has dtype " + dl_name(a.dtype()) +
                          ", expected " + dtype_name(p.dtype) + " for " + to_string(p));
  const Shape got = shape_of(a);
  check_operand_shape(p, cp.geometry(), r, got, what);
  return {a.data(), p.dtype, got, storage_layout(p, r)};
}

// The operands an op reads from a dict role name -> raw array; the arrays stay owned by the dict.
struct HeldOperands {
  std::vector<RawArray> arrays;
  ConstTensorView views[2];
  Operands ops;
};
void hold_operands(const CheckedProblem& cp, const nb::dict& d, HeldOperands& h) {
  const Problem& p = cp.problem();
  const OpIO io = op_io(p.op);
  int n = 0;
  for (Role r : {io.a, io.b}) {
    if (!d.contains(role_name(r)))
      throw InvalidArgument(std::string(op_name(p.op)) + " reads " + role_name(io.a) + " and " +
                            role_name(io.b) + ": missing '" + role_name(r) + "'");
    h.arrays.push_back(nb::cast<RawArray>(d[role_name(r)]));
    h.views[n] = view_of(h.arrays.back(), cp, r, role_name(r));
    h.ops.set(r, &h.views[n]);
    ++n;
  }
}

Role parse_role_name(const std::string& s) {
  for (Role r : {Role::input, Role::filter, Role::out_backprop})
    if (s == role_name(r)) return r;
  throw InvalidArgument("unknown role '" + s + "': expected input, filter or out_backprop");
}

FillKind fill_of(const std::string& s) {
  const std::optional<FillKind> f = parse_fill(s, kOracleFill);
  if (!f) throw InvalidArgument("unknown fill '" + s + "': expected " + fill_names(kOracleFill));
  return *f;
}

std::string padding_text(const Padding& p) {
  if (p.kind == PaddingKind::VALID) return "VALID";
  if (p.kind == PaddingKind::SAME) return "SAME";
  return std::to_string(p.top) + ":" + std::to_string(p.bottom) + ":" + std::to_string(p.left) +
         ":" + std::to_string(p.right);
}

// The module's Python half (convcheck/_glue.py): helpers the backend calls back into.
nb::object py_helper(const char* name) {
  return nb::module_::import_("convcheck._glue").attr(name);
}

// The last non-empty line of a Python exception's text (its traceback's "Type: message").
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return text;
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// A Python callable fn(problem, **operands) -> array as a Backend (issue 17). Each call gets fresh
// copies of the two operands (checked unchanged afterwards: operand_modified) and, when fn takes
// `out`, a result array holding the oracle's poison inside guard bands (an element left unwritten
// keeps the poison: unwritten; a write past either end: out_of_bounds). The oracle's own reruns
// compare two runs bit for bit (determinism). can_implement() asks fn once per problem, on zero
// operands, whether it raises convcheck.Unsupported (or cannot take the op's operands by name).
class PyBackend final : public Backend {
 public:
  struct Filter {
    std::set<std::string> ops, dtypes, formats;  // empty: any
  };
  PyBackend(nb::object fn, std::string name, std::string contract, bool deterministic,
            Filter filter)
      : fn_(std::move(fn)),
        name_(std::move(name)),
        contract_(std::move(contract)),
        deterministic_(deterministic),
        filter_(std::move(filter)) {
    nb::gil_scoped_acquire gil;
    wants_out_ = nb::cast<bool>(py_helper("_takes_out")(fn_));
  }
  ~PyBackend() override {
    nb::gil_scoped_acquire gil;
    fn_.reset();
  }
  std::string name() const override { return name_; }
  bool reads_caller_memory() const override { return false; }  // it reads copies

  Status can_implement(const CheckedProblem& cp) const override {
    const Problem& p = cp.problem();
    auto excluded = [](const std::set<std::string>& s, const std::string& v) {
      return !s.empty() && !s.count(v);
    };
    if (excluded(filter_.ops, op_name(p.op)))
      return Status::Error(std::string("op ") + op_name(p.op) + " not among the ops asked for");
    if (excluded(filter_.dtypes, dtype_name(p.dtype)))
      return Status::Error(std::string("dtype ") + dtype_name(p.dtype) +
                           " not among the dtypes asked for");
    if (excluded(filter_.formats, format_name(p.format)))
      return Status::Error(std::string("format ") + format_name(p.format) +
                           " not among the formats asked for");
    try {
      parse_contracts(contract_, p);
    } catch (const InvalidArgument& e) {
      return Status::Error(e.what());
    }
    const std::string key = to_string(p);
    auto it = declined_.find(key);
    if (it != declined_.end()) return it->second;
    Status s = probe(cp);
    declined_.emplace(key, s);
    return s;
  }

  NumericContract contract(const CheckedProblem& cp) const override {
    NumericContract k = parse_contracts(contract_, cp.problem()).front().contract;
    k.deterministic = deterministic_;
    return k;
  }

 private:
  // fn on zero operands: declined (Unsupported) or not. Any other exception is left for the real
  // run to report.
  Status probe(const CheckedProblem& cp) const {
    nb::gil_scoped_acquire gil;
    const Problem& p = cp.problem();
    const OpIO io = op_io(p.op);
    std::vector<std::string> names{role_name(io.a), role_name(io.b)};
    if (wants_out_) names.push_back("out");
    nb::object refused = py_helper("_signature_refuses")(fn_, names);
    if (!refused.is_none()) return Status::Error(nb::cast<std::string>(refused));
    nb::dict kwargs;
    for (Role r : {io.a, io.b})
      kwargs[role_name(r)] = from_raw(
          to_raw_numpy(Tensor(p.dtype, storage_shape(p, cp.geometry(), r), storage_layout(p, r))),
          p.dtype);
    try {
      fn_(nb::cast(p), **kwargs);
    } catch (nb::python_error& e) {
      if (e.matches(py_helper("Unsupported"))) return Status::Error(unsupported_reason(e));
    }
    return Status::Ok();
  }

  static std::string unsupported_reason(nb::python_error& e) {
    std::string why = nb::cast<std::string>(nb::str(e.value()));
    return why.empty() ? "declined (convcheck.Unsupported)" : why;
  }

  static nb::object from_raw(nb::object raw, DType t) {
    return py_helper("_from_raw")(raw, dtype_name(t));
  }

  void compute(const CheckedProblem& cp, const Operands& in, TensorView result) override {
    nb::gil_scoped_acquire gil;
    const Problem& p = cp.problem();
    const OpIO io = op_io(p.op);
    nb::dict kwargs;
    std::vector<std::pair<Role, nb::object>> copies;
    for (Role r : {io.a, io.b}) {
      const ConstTensorView* v = in.get(r);
      Tensor t(v->dtype, v->shape, v->layout);
      if (t.bytes()) std::memcpy(t.data(), v->data, t.bytes());
      nb::object raw = to_raw_numpy(std::move(t));
      copies.emplace_back(r, raw);
      kwargs[role_name(r)] = from_raw(raw, p.dtype);
    }
    // `out`: the poisoned result inside guard bands of a fixed pattern.
    const std::size_t w = dtype_size(p.dtype);
    const int64_t n = element_count(result.shape);
    const int64_t guard = std::max<int64_t>(1, 64 / static_cast<int64_t>(w));
    nb::object out_raw = nb::none(), out_whole;
    if (wants_out_) {
      Tensor whole(p.dtype, {n + 2 * guard});
      auto* b = static_cast<unsigned char*>(whole.data());
      for (std::size_t i = 0; i < whole.bytes(); ++i) b[i] = static_cast<unsigned char>(0xA5 ^ i);
      if (n) std::memcpy(b + guard * w, result.data, static_cast<std::size_t>(n) * w);
      out_whole = to_raw_numpy(std::move(whole));
      out_raw = py_helper("_shaped_slice")(out_whole, guard, n, nb::cast(result.shape));
      kwargs["out"] = from_raw(out_raw, p.dtype);
    }
    nb::object got;
    try {
      got = fn_(nb::cast(p), **kwargs);
      got = py_helper("_result_raw")(got, out_raw, dtype_name(p.dtype));
    } catch (nb::python_error& e) {
      if (e.matches(py_helper("Unsupported")))
        throw std::runtime_error("raised convcheck.Unsupported(" + unsupported_reason(e) +
                                 ") for a problem it had accepted");
      throw std::runtime_error("python: " + last_line(e.what()));
    }
    for (auto& [r, raw] : copies) {
      const RawArray a = nb::cast<RawArray>(raw);
      const ConstTensorView* v = in.get(r);
      const std::size_t bytes = static_cast<std::size_t>(element_count(v->shape)) * w;
      if (bytes && std::memcmp(a.data(), v->data, bytes) != 0) {
        std::size_t i = 0;
        while (std::memcmp(static_cast<const char*>(a.data()) + i * w,
                           static_cast<const char*>(v->data) + i * w, w) == 0)
          ++i;
        throw GuardViolation("operand_modified", std::string("the function wrote into its ") +
                                                     role_name(r) + " argument (element " +
                                                     std::to_string(i) + " changed)");
      }
    }
    if (wants_out_) {
      const RawArray a = nb::cast<RawArray>(out_whole);
      const auto* b = static_cast<const unsigned char*>(a.data());
      const std::size_t total = static_cast<std::size_t>(n + 2 * guard) * w;
      for (std::size_t i = 0; i < total; ++i) {
        const bool in_guard =
            i < static_cast<std::size_t>(guard) * w || i >= static_cast<std::size_t>(guard + n) * w;
        if (in_guard && b[i] != static_cast<unsigned char>(0xA5 ^ i))
          throw GuardViolation(
              "out_of_bounds",
              "the function wrote outside `out` (a guard byte " +
                  std::string(i < static_cast<std::size_t>(guard) * w ? "before" : "after") +
                  " it changed)");
      }
    }
    const RawArray a = nb::cast<RawArray>(got);
    const Shape shape = shape_of(a);
    if (!holds(a.dtype(), p.dtype) || shape != result.shape)
      throw std::runtime_error("the function returned " + dl_name(a.dtype()) + " " +
                               shape_string(shape) + ", expected " + dtype_name(p.dtype) + " " +
                               shape_string(result.shape) + " (" + result_name(p.op) + " in " +
                               layout_name(result.layout) + ")");
    if (n) std::memcpy(result.data, a.data(), static_cast<std::size_t>(n) * w);
  }

  nb::object fn_;
  std::string name_, contract_;
  bool deterministic_;
  Filter filter_;
  bool wants_out_ = false;
  mutable std::map<std::string, Status> declined_;
};

// A record in its one JSON form (oracle/oracle.h's to_json), which the Python side reads back;
// written by core/json.h's dump, so that a NaN or infinite figure (an offender's exact value) is
// "nan", "inf" or "-inf", as in every file convcheck writes (nlohmann's own dump writes null, and
// the Python side could not tell a NaN from an infinity).
std::string record_json(const BackendRecord& b) {
  return json::dump(to_json(b));
}

nb::dict case_dict(const Case& c) {
  nb::dict d;
  d["problem"] = nb::cast(c.problem);
  d["fill"] = fill_name(c.fill);
  d["seed"] = c.seed;
  return d;
}

Case make_case(const Problem& p, const std::string& fill, uint64_t seed) {
  Case c;
  c.problem = p;
  c.fill = fill_of(fill);
  c.seed = seed;
  return c;
}

PyBackend::Filter filter_of(const std::vector<std::string>& ops,
                            const std::vector<std::string>& dtypes,
                            const std::vector<std::string>& formats) {
  PyBackend::Filter f;
  for (const std::string& s : ops) {
    if (!parse_op(s)) throw InvalidArgument("unknown op '" + s + "'");
    f.ops.insert(s);
  }
  for (const std::string& s : dtypes) {
    if (!parse_dtype(s)) throw InvalidArgument("unknown dtype '" + s + "'");
    f.dtypes.insert(s);
  }
  for (const std::string& s : formats) {
    if (s != "NHWC" && s != "NCHW")
      throw InvalidArgument("unknown format '" + s + "': expected NHWC or NCHW");
    f.formats.insert(s);
  }
  return f;
}

}  // namespace

NB_MODULE(_convcheck, m) {
  m.doc() = "convcheck's oracle in process (python/src/module.cpp)";
  // A kernel may keep Problem objects alive in a daemon thread or a global when the interpreter
  // exits (the "returns before its thread finishes" kernel does): not a leak of ours to report.
  nb::set_leak_warnings(false);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  // The command line's backends but plugins; the package is built without CUDA (pyproject.toml).
  register_in_process_backends(Registry::instance());

  nb::class_<Problem>(m, "Problem")
      .def("__init__",
           [](Problem* self, const std::string& text) { new (self) Problem(parse_problem(text)); })
      .def_static("parse", [](const std::string& text) { return parse_problem(text); })
      .def("__str__", [](const Problem& p) { return to_string(p); })
      .def("__repr__", [](const Problem& p) { return "Problem('" + to_string(p) + "')"; })
      .def("__eq__", [](const Problem& a, const Problem& b) { return a == b; })
      .def("__hash__", [](const Problem& p) { return std::hash<std::string>()(to_string(p)); })
      .def_prop_ro("op", [](const Problem& p) { return std::string(op_name(p.op)); })
      .def_prop_ro("input", [](const Problem& p) { return p.input; })
      .def_prop_ro("filter", [](const Problem& p) { return p.filter; })
      .def_prop_ro("stride",
                   [](const Problem& p) {
                     return std::array<int64_t, 2>{p.stride_h, p.stride_w};
                   })
      .def_prop_ro("dilation",
                   [](const Problem& p) {
                     return std::array<int64_t, 2>{p.dilation_h, p.dilation_w};
                   })
      .def_prop_ro("padding", [](const Problem& p) { return padding_text(p.padding); })
      .def_prop_ro("format", [](const Problem& p) { return std::string(format_name(p.format)); })
      .def_prop_ro("dtype", [](const Problem& p) { return std::string(dtype_name(p.dtype)); })
      .def_prop_ro("reads",
                   [](const Problem& p) {
                     const OpIO io = op_io(p.op);
                     return std::vector<std::string>{role_name(io.a), role_name(io.b)};
                   })
      .def_prop_ro("result_role",
                   [](const Problem& p) { return std::string(role_name(op_io(p.op).result_like)); })
      .def("validate", [](const Problem& p) { CheckedProblem cp(p); })
      .def(
          "logical_shape",
          [](const Problem& p, const std::string& role) {
            return logical_shape(geometry(p), parse_role_name(role));
          },
          nb::arg("role"))
      .def(
          "storage_shape",
          [](const Problem& p, const std::string& role) {
            const Geometry g = geometry(p);
            return storage_shape(p, g, parse_role_name(role));
          },
          nb::arg("role"))
      .def("geometry",
           [](const Problem& p) {
             const Geometry g = geometry(p);
             nb::dict d;
             const std::pair<const char*, int64_t> fields[] = {{"N", g.N},
                                                               {"H", g.H},
                                                               {"W", g.W},
                                                               {"C", g.C},
                                                               {"KH", g.KH},
                                                               {"KW", g.KW},
                                                               {"Cf", g.Cf},
                                                               {"O", g.O},
                                                               {"G", g.G},
                                                               {"M", g.M},
                                                               {"OH", g.OH},
                                                               {"OW", g.OW},
                                                               {"sh", g.sh},
                                                               {"sw", g.sw},
                                                               {"dh", g.dh},
                                                               {"dw", g.dw},
                                                               {"pad_top", g.pad_top},
                                                               {"pad_bottom", g.pad_bottom},
                                                               {"pad_left", g.pad_left},
                                                               {"pad_right", g.pad_right}};
             for (const auto& [k, v] : fields) d[k] = v;
             d["depthwise"] = g.depthwise;
             return d;
           })
      .def("output_size", [](const Problem& p) {
        const Geometry g = geometry(p);
        return std::array<int64_t, 2>{g.OH, g.OW};
      });

  m.def("fill_names", [] {
    std::vector<std::string> out;
    for (FillKind f : kAllFills) out.push_back(fill_name(f));
    return out;
  });
  m.def("backend_names", [] {
    std::vector<std::string> out;
    for (const Registry::Entry& e : Registry::instance().entries()) out.push_back(e.name);
    return out;
  });
  // The instruction set a backend's code runs with (Backend::isa(), as bench and run.json record
  // it), e.g. "avx512"; "" where the question does not apply.
  m.def("backend_isa",
        [](const std::string& name) { return Registry::instance().make(name)->isa(); });
  // An offender's values in the oracle's words (Verdict's str says them as the CLI does).
  m.def("exact_and_bound", &exact_and_bound);
  m.def("format_value", &format_value);
  m.def("tf_admission",
        [](const Problem& p) { return json::dump(to_json(tf_admission(p, geometry(p)))); });
  m.def("coverage_classes", [](const Problem& p) { return reports::classes_of(p); });
  m.def("coverage_class_names", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const reports::CoverageClass& c : reports::coverage_classes())
      out.emplace_back(c.name, c.description);
    return out;
  });

  m.def("suite", [](const std::string& name_or_path) {
    nb::list out;
    for (const reports::RunCase& rc : reports::suite_cases(read_suite(name_or_path))) {
      nb::dict d = case_dict(rc.c);
      d["tag"] = rc.tag;
      d["line"] = rc.line;
      out.append(d);
    }
    return out;
  });

  m.def(
      "fuzz_cases",
      [](uint64_t seed, int64_t first, int64_t n) {
        nb::list out;
        for (const Case& c : fuzz_cases(seed, first, n)) out.append(case_dict(c));
        return out;
      },
      nb::arg("seed"), nb::arg("first"), nb::arg("n"));

  m.def(
      "operands",
      [](const Problem& p, const std::string& fill, uint64_t seed, const std::string& contract) {
        const Case c = make_case(p, fill, seed);
        std::vector<NumericContract> ks;
        if (!contract.empty()) ks.push_back(parse_contracts(contract, p).front().contract);
        ByRole<Tensor> roles;
        {
          nb::gil_scoped_release nogil;
          roles = case_operands(c, ks);
        }
        nb::dict out;
        const OpIO io = op_io(p.op);
        for (Role r : {io.a, io.b}) out[role_name(r)] = to_raw_numpy(std::move(roles.get(r)));
        return out;
      },
      nb::arg("problem"), nb::arg("fill"), nb::arg("seed"), nb::arg("contract") = "");

  m.def(
      "compute",
      [](const Problem& p, const nb::dict& operands, const std::string& backend) {
        const CheckedProblem cp(p);
        HeldOperands h;
        hold_operands(cp, operands, h);
        std::unique_ptr<Backend> b = Registry::instance().make(backend);
        if (Status s = b->available(); !s.ok())
          throw InvalidArgument("backend " + backend + " is unavailable: " + s.reason());
        if (Status s = b->can_implement(cp); !s.ok())
          throw InvalidArgument("backend " + backend + " cannot implement " + to_string(p) + ": " +
                                s.reason());
        const Role rr = op_io(p.op).result_like;
        Tensor result(p.dtype, storage_shape(p, cp.geometry(), rr), storage_layout(p, rr));
        {
          nb::gil_scoped_release nogil;
          b->run(cp, h.ops, view(result));
        }
        return to_raw_numpy(std::move(result));
      },
      nb::arg("problem"), nb::arg("operands"), nb::arg("backend") = "reference");

  m.def(
      "judge",
      [](const Problem& p, const nb::dict& operands, const nb::object& result_obj,
         const std::string& contract) {
        const CheckedProblem cp(p);
        HeldOperands h;
        hold_operands(cp, operands, h);
        const RawArray ra = nb::cast<RawArray>(result_obj);
        const Role rr = op_io(p.op).result_like;
        const Shape want = storage_shape(p, cp.geometry(), rr);
        if (!holds(ra.dtype(), p.dtype))
          throw InvalidArgument("result: array has dtype " + dl_name(ra.dtype()) + ", expected " +
                                dtype_name(p.dtype) + " for " + to_string(p));
        if (shape_of(ra) != want)
          throw InvalidArgument("result: array has shape " + shape_string(shape_of(ra)) +
                                ", expected " + shape_string(want) + " (" + result_name(p.op) +
                                " in " + layout_name(storage_layout(p, rr)) + ") for " +
                                to_string(p));
        Tensor result(p.dtype, want, storage_layout(p, rr));
        if (result.bytes()) std::memcpy(result.data(), ra.data(), result.bytes());
        nb::list out;
        for (const NamedContract& c : parse_contracts(contract, p)) {
          BackendRecord r;
          {
            nb::gil_scoped_release nogil;
            r = judge_result(p, h.ops, result, c.contract, c.bitwise, "verify:" + c.name);
          }
          nb::dict d;
          d["record"] = record_json(r);
          d["contract_name"] = c.name;
          out.append(d);
        }
        return out;
      },
      nb::arg("problem"), nb::arg("operands"), nb::arg("result"), nb::arg("contract") = "");

  m.def(
      "check",
      [](nb::object fn, const std::string& name, const Problem& p,
         const std::vector<std::string>& fills, uint64_t seed, const std::string& contract,
         bool deterministic, int runs, bool adjoint, bool metamorphic) {
        const CheckedProblem cp(p);
        parse_contracts(contract, p);  // a bad name is the caller's error, not a verdict
        PyBackend b(std::move(fn), name, contract, deterministic, {});
        OracleOptions options;
        options.runs = runs;
        options.adjoint = adjoint;
        options.metamorphic = metamorphic;
        nb::list out;
        for (const std::string& f : fills) {
          const Case c = make_case(p, f, seed);
          CaseReport rep;
          {
            nb::gil_scoped_release nogil;
            rep = run_case(c, {&b}, options);
          }
          nb::dict d;
          d["record"] = record_json(rep.records.front());
          d["case"] = case_dict(c);
          out.append(d);
        }
        return out;
      },
      nb::arg("fn"), nb::arg("name"), nb::arg("problem"), nb::arg("fills"), nb::arg("seed"),
      nb::arg("contract"), nb::arg("deterministic"), nb::arg("runs"), nb::arg("adjoint"),
      nb::arg("metamorphic"));

  m.def(
      "fuzz",
      [](nb::object fn, const std::string& name, const std::vector<std::string>& ops,
         const std::vector<std::string>& dtypes, const std::vector<std::string>& formats,
         int64_t cases, double seconds, uint64_t seed, const std::string& contract,
         bool deterministic, int max_shrink_steps, int64_t first_case) {
        PyBackend b(std::move(fn), name, contract, deterministic, filter_of(ops, dtypes, formats));
        FuzzOptions options;
        options.cases = cases;
        options.seconds = seconds;
        options.seed = seed;
        options.max_shrink_steps = max_shrink_steps;
        options.first_case = first_case;
        options.stop = [] {
          nb::gil_scoped_acquire gil;
          return PyErr_CheckSignals() != 0;
        };
        FuzzSummary s;
        {
          nb::gil_scoped_release nogil;
          s = convcheck::fuzz({&b}, options);
        }
        if (PyErr_Occurred()) throw nb::python_error();  // KeyboardInterrupt
        nb::dict d;
        d["cases"] = s.cases;
        d["unsupported"] = s.unsupported;
        nb::list failures;
        for (const FuzzFailure& f : s.failures) {
          nb::dict x;
          x["original"] = case_dict(f.original);
          x["minimal"] = case_dict(f.minimal);
          x["record"] = record_json(f.record);
          x["shrink_steps"] = f.shrink_steps;
          x["repro"] = f.repro;
          failures.append(x);
        }
        d["failures"] = failures;
        return d;
      },
      nb::arg("fn"), nb::arg("name"), nb::arg("ops"), nb::arg("dtypes"), nb::arg("formats"),
      nb::arg("cases"), nb::arg("seconds"), nb::arg("seed"), nb::arg("contract"),
      nb::arg("deterministic"), nb::arg("max_shrink_steps"), nb::arg("first_case") = 0);
}
