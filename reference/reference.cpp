#include "reference/reference.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/layout.h"
#include "reference/ops.h"

namespace convcheck {

namespace {

bool in_fast_range(double v, DType t) {
  if (!std::isfinite(v)) return false;
  if (t != DType::f64 || v == 0) return true;
  const double a = std::fabs(v);
  return a >= 0x1p-480 && a <= 0x1p480;
}

std::vector<double> canonical_operand(const Problem& p, const Geometry& g, Role r,
                                      const Operands& ops, bool* fast_ok) {
  std::vector<double> out = load_canonical(p, g, r, ops.get(r), op_name(p.op), stored_nchw(p, r));
  bool ok = true;
  for (double x : out) ok = ok && in_fast_range(x, p.dtype);
  *fast_ok = *fast_ok && ok;
  return out;
}

ref::Outputs evaluate(const Problem& p, const Geometry& g, const Operands& ops, ref::Mode mode,
                      OpIO* io_out) {
  const OpIO io = op_io(p.op);
  *io_out = io;
  ref::Canonical c;
  for (Role r : {io.a, io.b}) {
    c.get(r) = canonical_operand(p, g, r, ops, &c.fast_ok);
  }
  ref::Outputs out;
  ref::run_op(p.op, g, p.dtype, c, mode, out);
  return out;
}

}  // namespace

ReferenceResult reference_compute(const Problem& p, const Operands& operands) {
  return reference_compute(p, geometry(p), operands);
}

ReferenceResult reference_compute(const Problem& p, const Geometry& g, const Operands& operands) {
  OpIO io;
  ref::Outputs out = evaluate(p, g, operands, ref::Mode::exact, &io);
  ReferenceResult res;
  res.result =
      Tensor(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
  const int64_t n = res.result.size();
  res.exact_hi.resize(n);
  res.exact_lo.resize(n);
  res.magnitude.resize(n);
  res.terms.resize(n);
  const std::array<int64_t, 4> s = logical_shape(g, io.result_like);
  const bool nchw = stored_nchw(p, io.result_like);
  for (int64_t e = 0; e < n; ++e) {
    const int64_t i = storage_offset(e, s, nchw);
    res.result.set(i, out.value[e]);  // exact: value is representable in the dtype
    res.exact_hi[i] = out.hi[e];
    res.exact_lo[i] = out.lo[e];
    res.magnitude[i] = out.magnitude[e];
    res.terms[i] = out.terms[e];
  }
  res.exact_fallbacks = out.fallbacks;
  return res;
}

Tensor naive_double_compute(const Problem& p, const Operands& operands) {
  if (p.dtype == DType::i32) {
    throw InvalidArgument("naive_double_compute: i32 has no double-rounding baseline");
  }
  const Geometry g = geometry(p);
  OpIO io;
  ref::Outputs out = evaluate(p, g, operands, ref::Mode::naive, &io);
  Tensor t(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
  store_canonical(out.value, logical_shape(g, io.result_like), stored_nchw(p, io.result_like),
                  view(t));
  return t;
}

}  // namespace convcheck
