#define BOOST_TEST_MODULE cudnn_layout
// The layouts the "cudnn" comparator gives cuDNN (comparators/cudnn_layout.h: filter transposes,
// layout changes, the explicit remainder of asymmetric padding, groups, depthwise as groups),
// checked on every machine, with or without CUDA: each problem runs through a host model of cuDNN's
// three convolutions (cross-correlation on packed NHWC/KRSC or NCHW/KCRS tensors, symmetric pads,
// dilation, groups), with the staging copies made as comparators/cudnn.cpp's execute() makes them,
// and the oracle holds the result to the exact reference (exact fill: bitwise). Both layouts cuDNN
// may be given are run for every problem. What this cannot check is cuDNN itself:
// tests/test_cudnn.cpp does that on a device.
#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "comparators/cudnn_layout.h"
#include "oracle/oracle.h"
#include "tests/backend_cases.h"

using namespace convcheck;
using namespace convcheck::backend_cases;
namespace bdata = boost::unit_test::data;

namespace {

namespace model {

using cudnn_layout::Dims;
using cudnn_layout::layout_for;
using cudnn_layout::packed;
using cudnn_layout::Staging;
using cudnn_layout::View;
using Plan = cudnn_layout::Layout;  // (convcheck::Layout is a tensor's storage order)
using Buffer = std::vector<double>;

// cudnnTransformTensor with alpha 1, beta 0: dst = src between two strided views.
void transform(const View& src, const Buffer& s, const View& dst, Buffer& d) {
  const Dims& n = src.dims;
  for (int64_t a = 0; a < n.n; ++a)
    for (int64_t b = 0; b < n.c; ++b)
      for (int64_t c = 0; c < n.h; ++c)
        for (int64_t e = 0; e < n.w; ++e) d.at(dst.at(a, b, c, e)) = s.at(src.at(a, b, c, e));
}

// cuDNN's convolutions on packed tensors of the layout's format: x (L.x), w (L.w, KRSC or KCRS),
// y (L.y); cross-correlation, symmetric pads, dilation, groups. `kind`: 0 forward (y = x * w),
// 1 backward data (x = dy * w), 2 backward filter (w = x * dy); the written tensor starts at 0.
void convolve(int kind, const Plan& L, const Geometry& g, Buffer& x, Buffer& w, Buffer& y) {
  const View xv{L.x, packed(L.format, L.x), 0}, yv{L.y, packed(L.format, L.y), 0},
      wv{L.w, packed(L.format, L.w), 0};
  Buffer& out = kind == 0 ? y : kind == 1 ? x : w;
  std::fill(out.begin(), out.end(), 0.0);
  const int64_t per_group = L.y.c / L.groups;
  for (int64_t n = 0; n < L.y.n; ++n)
    for (int64_t k = 0; k < L.y.c; ++k)
      for (int64_t oh = 0; oh < L.y.h; ++oh)
        for (int64_t ow = 0; ow < L.y.w; ++ow)
          for (int64_t c = 0; c < L.w.c; ++c)
            for (int64_t r = 0; r < L.w.h; ++r)
              for (int64_t s = 0; s < L.w.w; ++s) {
                const int64_t ih = oh * g.sh + r * g.dh - L.pad_h,
                              iw = ow * g.sw + s * g.dw - L.pad_w;
                if (ih < 0 || ih >= L.x.h || iw < 0 || iw >= L.x.w) continue;
                const int64_t ci = (k / per_group) * L.w.c + c;
                const int64_t xi = xv.at(n, ci, ih, iw), wi = wv.at(k, c, r, s),
                              yi = yv.at(n, k, oh, ow);
                if (kind == 0) y.at(yi) += x.at(xi) * w.at(wi);
                if (kind == 1) x.at(xi) += y.at(yi) * w.at(wi);
                if (kind == 2) w.at(wi) += x.at(xi) * y.at(yi);
              }
}

// The comparator's run() with the model in place of the device: the same layout, the same
// staging, the same order of copies as comparators/cudnn.cpp's execute(), for cuDNN seeing
// `format`.
class ModelBackend final : public Backend {
 public:
  explicit ModelBackend(Format f) : format_(f) {}
  std::string name() const override { return std::string("cudnn-model-") + format_name(format_); }
  Status can_implement(const CheckedProblem& p) const override {
    if (p.problem().dtype == DType::i32) return Status::Error("model: no int32");
    return Status::Ok();
  }
  NumericContract contract(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    NumericContract c;  // sums in double, one rounding into the dtype
    c.name = "model";
    c.u_acc = std::ldexp(1.0, -53);
    c.u_out = p.dtype == DType::f64 ? 0 : std::ldexp(1.0, -float_format(p.dtype).precision);
    return c;
  }
  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const int64_t count = element_count(result.shape);
    auto load = [](const ConstTensorView* v) {
      Buffer b(static_cast<std::size_t>(v ? element_count(v->shape) : 0));
      for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = load_element(v->data, v->dtype, static_cast<int64_t>(i));
      return b;
    };
    Buffer user_x = load(in.input), user_w = load(in.filter), user_dy = load(in.out_backprop);
    Buffer res(static_cast<std::size_t>(count), 0.0);
    const bool empty = role_elements(g, Role::input) == 0 || role_elements(g, Role::filter) == 0 ||
                       role_elements(g, Role::out_backprop) == 0;
    if (!empty) {
      const Plan L = layout_for(p, g, format_);
      // Operands: staged copies (a zeroed buffer, then the interior), or the caller's buffer.
      auto stage_in = [](const Staging& st, const Buffer& user) {
        if (!st.staged) return user;
        Buffer b(static_cast<std::size_t>(st.buffer_elements), 0.0);
        transform(st.user, user, st.conv, b);
        return b;
      };
      // A result cuDNN writes into a staging buffer is copied out of its conv view.
      auto stage_out = [&](const Staging& st, const Buffer& b) {
        if (st.staged)
          transform(st.conv, b, st.user, res);
        else
          res = b;
      };
      switch (op_io(p.op).result_like) {
        case Role::out_backprop: {  // forward
          Buffer x = stage_in(L.xs, user_x), w = stage_in(L.ws, user_w);
          Buffer y(static_cast<std::size_t>(L.ys.staged ? L.ys.buffer_elements : count));
          convolve(0, L, g, x, w, y);
          stage_out(L.ys, y);
          break;
        }
        case Role::input: {  // backward data
          Buffer w = stage_in(L.ws, user_w), dy = stage_in(L.ys, user_dy);
          Buffer dx(static_cast<std::size_t>(L.xs.staged ? L.xs.buffer_elements : count));
          convolve(1, L, g, dx, w, dy);
          stage_out(L.xs, dx);
          break;
        }
        case Role::filter: {  // backward filter
          Buffer x = stage_in(L.xs, user_x), dy = stage_in(L.ys, user_dy);
          Buffer dw(static_cast<std::size_t>(L.ws.staged ? L.ws.buffer_elements : count));
          convolve(2, L, g, x, dw, dy);
          stage_out(L.ws, dw);
          break;
        }
      }
    }
    BOOST_REQUIRE_EQUAL(res.size(), static_cast<std::size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      store_element(result.data, result.dtype, i, res[static_cast<std::size_t>(i)]);
  }

 private:
  Format format_;
};

}  // namespace model

}  // namespace

// The layouts, staging copies and padding remainders of comparators/cudnn_layout.h through the host
// model of cuDNN, both layouts cuDNN may be given, every op: exact (bitwise) and real fills pass.
BOOST_DATA_TEST_CASE(layouts_through_a_host_model_of_cudnn_pass,
                     bdata::make(comparator_f32_problems()), text) {
  for (Format f : {Format::NHWC, Format::NCHW}) {
    model::ModelBackend b(f);
    for (FillKind fill : {FillKind::exact, FillKind::real}) {
      Case c;
      c.problem = parse_problem(text);
      c.seed = 3;
      c.fill = fill;
      const CaseReport r = run_case(c, {&b});
      BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass",
                 text << " (cuDNN sees " << format_name(f) << ") --fill " << fill_name(fill) << ": "
                      << r.records.at(0).check << " " << r.records.at(0).reason);
    }
  }
}

// Other dtypes and empty operands take the same layouts.
BOOST_DATA_TEST_CASE(layouts_of_other_dtypes_pass, bdata::make(comparator_other_dtype_problems()),
                     text) {
  for (Format f : {Format::NHWC, Format::NCHW}) {
    model::ModelBackend b(f);
    Case c;
    c.problem = parse_problem(text);
    c.fill = FillKind::exact;
    const CaseReport r = run_case(c, {&b});
    BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass",
               text << " (cuDNN sees " << format_name(f) << "): " << r.records.at(0).check << " "
                    << r.records.at(0).reason);
  }
}

// The layout arithmetic by hand on two problems.
BOOST_AUTO_TEST_CASE(layout_arithmetic) {
  using cudnn_layout::layout_for;
  {  // SAME with an odd total (1, after): no cuDNN pad, one explicit row and column after
    const Problem p = parse_problem("conv2d:input=2x6x6x3,filter=2x2x3x4,padding=SAME");
    const cudnn_layout::Layout L = layout_for(p, geometry(p), Format::NHWC);
    BOOST_TEST(L.pad_h == 0);
    BOOST_TEST(L.pad_w == 0);
    BOOST_TEST(L.pad_copy);
    BOOST_TEST(L.x.h == 7);
    BOOST_TEST(L.x.w == 7);
    BOOST_TEST(L.xs.staged);
    BOOST_TEST(L.xs.conv.offset == 0);
    BOOST_TEST(L.xs.conv.strides.h == 7 * 3);  // NHWC rows of the padded width
    BOOST_TEST(!L.ys.staged);                  // NHWC output straight into the caller's buffer
    BOOST_TEST(L.ws.staged);                   // HWIO -> KRSC
    BOOST_TEST(L.ws.conv.strides.n == 2 * 2 * 3);
    BOOST_TEST(L.ws.user.strides.n == 1);
    BOOST_TEST(L.ws.user.strides.c == 4);
  }
  {  // explicit 3:1:0:2 in NCHW: cuDNN pads 1 and 0; 2 rows before, 2 columns after
    const Problem p = parse_problem(
        "conv2d_backprop_input:input=1x5x6x2,filter=3x3x2x2,padding=3:1:0:2,format=NCHW");
    const cudnn_layout::Layout L = layout_for(p, geometry(p), Format::NCHW);
    BOOST_TEST(L.pad_h == 1);
    BOOST_TEST(L.pad_w == 0);
    BOOST_TEST(L.x.h == 5 + 2);
    BOOST_TEST(L.x.w == 6 + 2);
    BOOST_TEST(L.xs.conv.offset == 2 * 8);  // two padded rows of 8
    BOOST_TEST(L.xs.user.strides.h == 6);
  }
  {  // depthwise RSCM [3,3,4,2] is HWIO [3,3,1,8] with 4 groups; NCHW without padding: no copy
    const Problem p = parse_problem("depthwise_conv2d:input=1x5x5x4,filter=3x3x4x2,format=NCHW");
    const cudnn_layout::Layout L = layout_for(p, geometry(p), Format::NCHW);
    BOOST_TEST(L.groups == 4);
    BOOST_TEST(L.w.n == 8);
    BOOST_TEST(L.w.c == 1);
    BOOST_TEST(!L.xs.staged);
    BOOST_TEST(!L.ys.staged);
    BOOST_TEST(L.ws.staged);
  }
}
