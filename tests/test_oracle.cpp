// The oracle on hand-made backends: the reference passes every check; each kind of fault gets its
// own verdict and check name; exact fills are exact; the odd one out is named.
#define BOOST_TEST_MODULE oracle
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "core/hash.h"
#include "core/op_traits.h"
#include "mutants/mutants.h"
#include "optimized/optimized.h"
#include "oracle/internal.h"
#include "oracle/oracle.h"
#include "reference/reference.h"

using namespace convcheck;

namespace {

std::unique_ptr<Backend> reference_backend() {
  static bool registered = false;
  if (!registered) register_reference_backend(Registry::instance());
  registered = true;
  return Registry::instance().make("reference");
}

std::unique_ptr<Backend> optimized_backend() {
  static bool registered = false;
  if (!registered) register_optimized_backend(Registry::instance());
  registered = true;
  return Registry::instance().make("optimized");
}

// The reference with a twist applied to its result (or around its run).
class Twisted : public Backend {
 public:
  using Twist = std::function<void(const Problem&, TensorView&)>;
  Twisted(std::string name, Twist twist, NumericContract contract = {})
      : name_(std::move(name)),
        twist_(std::move(twist)),
        ref_(reference_backend()),
        contract_(contract) {}
  std::string name() const override { return name_; }
  Status available() const override { return available_; }
  Status can_implement(const CheckedProblem&) const override { return Status::Ok(); }
  NumericContract contract(const CheckedProblem& p) const override {
    return contract_.name.empty() ? ref_->contract(p) : contract_;
  }
  void compute(const CheckedProblem& p, const Operands& in, TensorView out) override {
    ref_->run(p, in, out);
    twist_(p.problem(), out);
  }
  Status available_ = Status::Ok();

 private:
  std::string name_;
  Twist twist_;
  std::unique_ptr<Backend> ref_;
  NumericContract contract_;
};

int64_t elements(const TensorView& v) {
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  return n;
}

Case make_case(const std::string& text, FillKind fill, uint64_t seed = 3) {
  Case c;
  c.problem = parse_problem(text);
  c.seed = seed;
  c.fill = fill;
  return c;
}

// Where a deliberately wrong read goes, so that no compiler drops it.
std::atomic<unsigned> g_read_sink{0};

const BackendRecord& only(const CaseReport& r) {
  BOOST_REQUIRE_EQUAL(r.records.size(), 1u);
  return r.records[0];
}

const char* const kProblems[] = {
    "conv2d_backprop_input:input=2x7x6x4,filter=3x2x2x6,stride=2x1,padding=SAME",
    "conv2d_backprop_filter:input=2x6x7x3,filter=2x3x3x4,dilation=2x1,padding=1:2:0:3,format=NCHW",
    "conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME,dtype=f16",
    "conv2d:input=2x5x5x4,filter=2x2x2x4,stride=1x2,dtype=bf16",
    "conv2d_backprop_input:input=1x6x6x2,filter=3x3x2x2,stride=2x2,dtype=i32",
    "depthwise_conv2d_backprop_input:input=1x7x5x3,filter=3x2x3x2,stride=2x1,dilation=1x2,padding="
    "SAME",
    "depthwise_conv2d_backprop_filter:input=2x5x6x2,filter=2x2x2x3,padding=2:0:1:1,dtype=f64",
    "depthwise_conv2d:input=1x4x4x2,filter=2x2x2x2,format=NCHW",
};

// A contract of f32 accumulation over n terms, any order.
NumericContract f32_linear() {
  NumericContract c;
  c.name = "f32-linear";
  c.u_acc = 0x1p-24;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference_passes)

BOOST_AUTO_TEST_CASE(every_check_on_every_fill) {
  auto ref = reference_backend();
  for (const char* text : kProblems) {
    for (FillKind fill : kAllFills) {
      const CaseReport r = run_case(make_case(text, fill), {ref.get()});
      const BackendRecord& b = only(r);
      BOOST_TEST_CONTEXT(text << " fill " << fill_name(fill)) {
        BOOST_TEST(verdict_name(b.verdict) == std::string("pass"), b.check << ": " << b.reason);
        int applicable = 0;
        for (const auto* list : {&b.adjoint, &b.metamorphic})
          for (const RelationResult& x : *list) {
            applicable += x.applicable;
            BOOST_TEST((!x.applicable || x.passed), x.name << ": " << x.detail);
          }
        // special fills skip the adjoint, linearity and NaN-footprint checks (non-finite data).
        BOOST_TEST(applicable >= (fill == FillKind::special ? 2 : 3));
        // The reference is the exact value rounded once: within half an ulp.
        BOOST_TEST(b.bound_usage <= 1.0);
        if (fill == FillKind::exact) {
          for (const RelationResult& x : b.adjoint) {
            if (x.applicable) BOOST_TEST(x.residual == 0.0, x.name);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// A record's note is what the backend said of its main run (Backend::last_note), not of the
// page-guarded passes, reruns and relations that run it again.
BOOST_AUTO_TEST_CASE(a_records_note_is_of_the_main_run) {
  class Counting : public Twisted {
   public:
    Counting() : Twisted("counting", [](const Problem&, TensorView&) {}) {}
    void compute(const CheckedProblem& p, const Operands& in, TensorView out) override {
      ++runs_;
      Twisted::compute(p, in, out);
    }
    std::string last_note() const override { return "run " + std::to_string(runs_); }
    int runs_ = 0;
  };
  Counting c;
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::real), {&c});
  BOOST_TEST(verdict_name(only(r).verdict) == std::string("pass"));
  BOOST_TEST(c.runs_ > 3, "the oracle ran it " << c.runs_ << " times");
  BOOST_TEST(only(r).note == "run 1");
}

BOOST_AUTO_TEST_SUITE(faults_get_verdicts)

BOOST_AUTO_TEST_CASE(off_by_a_little_beyond_the_bound) {
  // One element off by one part in 2^20: far beyond the exact contract's half ulp.
  Twisted t("nudge", [](const Problem&, TensorView& v) {
    if (elements(v)) static_cast<float*>(v.data)[elements(v) / 2] *= 1.0f + 0x1p-20f;
  });
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::real), {&t});
  const BackendRecord& b = only(r);
  BOOST_TEST(verdict_name(b.verdict) == std::string("fail"));
  BOOST_TEST(b.check == "compare");
  BOOST_TEST(b.mismatches == 1);
  BOOST_TEST(b.bound_usage > 1.0);
  BOOST_REQUIRE(b.first.has_value());
  BOOST_TEST(b.repro.find("convcheck check '") == 0);
  BOOST_TEST(b.repro.find("--backends nudge --seed 3 --fill real") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(within_a_declared_f32_contract) {
  // The same small nudge passes when the backend declares f32 accumulation over n terms.
  const NumericContract f32 = f32_linear();
  Twisted t(
      "f32ish",
      [](const Problem&, TensorView& v) {
        if (elements(v)) static_cast<float*>(v.data)[elements(v) / 2] *= 1.0f + 0x1p-23f;
      },
      f32);
  const CaseReport b_report = run_case(make_case(kProblems[0], FillKind::real), {&t});
  const BackendRecord& b = only(b_report);
  // The rerun is bitwise and the relations are within 2 tau: everything holds.
  BOOST_TEST(verdict_name(b.verdict) == std::string("pass"), b.check << ": " << b.reason);
}

BOOST_AUTO_TEST_CASE(inf_for_a_finite_exact_value_fails_unless_the_bound_reaches_overflow) {
  // f32 real data is nowhere near 2^128: an Inf is wrong whatever the contract's slack (the
  // comparison lets an Inf through only where |exact| + bound reaches the dtype's overflow
  // threshold; tests/test_eigen.cpp has the f16 case that does).
  const NumericContract loose = f32_linear();
  Twisted t(
      "to_inf",
      [](const Problem&, TensorView& v) {
        if (elements(v)) static_cast<float*>(v.data)[elements(v) / 2] = INFINITY;
      },
      loose);
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::real), {&t});
  const BackendRecord& b = only(r);
  BOOST_TEST(verdict_name(b.verdict) == std::string("fail"));
  BOOST_TEST(b.check == "compare");
}

BOOST_AUTO_TEST_CASE(a_relations_inf_against_a_finite_sum_fails_far_from_overflow) {
  // Two results compared with each other (a relation) may differ by one overflowing where a value
  // the bound allows rounds to Inf (tests/test_eigen.cpp has that f16 case, found by fuzzing);
  // f32 real data is nowhere near 2^128, so an Inf in the derived run is a failure.
  Twisted grouped_inf(
      "grouped_inf",
      [](const Problem& p, TensorView& v) {
        if (p.op == Op::conv2d_backprop_input && elements(v))
          static_cast<float*>(v.data)[elements(v) / 2] = INFINITY;
      },
      f32_linear());
  const CaseReport r = run_case(
      make_case("depthwise_conv2d_backprop_input:input=1x7x5x3,filter=3x2x3x1,padding=SAME",
                FillKind::real),
      {&grouped_inf});
  const BackendRecord& b = only(r);
  BOOST_TEST(verdict_name(b.verdict) == std::string("fail"));
  BOOST_TEST(b.mismatches == 0);
  BOOST_TEST(b.check == "metamorphic:depthwise_grouped", b.check << ": " << b.reason);
  BOOST_TEST(b.reason.find("inf") != std::string::npos, b.reason);
}

// The pair rule itself, on f16 (overflow threshold 65520): an exact 65505 whose Inf's bound is 483
// (the fuzz case of tests/test_eigen.cpp), the pair's allowance 966.
BOOST_AUTO_TEST_CASE(an_overflow_pair_agrees_only_near_the_threshold) {
  using oracle_detail::overflow_pair_within;
  const DType h = DType::f16;
  BOOST_TEST(overflow_pair_within(INFINITY, 65504, 65505, 483, 483, h));
  BOOST_TEST(overflow_pair_within(65504, INFINITY, 65505, 483, 483, h));  // either order
  BOOST_TEST(overflow_pair_within(65472, INFINITY, 65505, 483, 483, h));
  BOOST_TEST(!overflow_pair_within(INFINITY, 60000, 65505, 483, 483, h));   // far below
  BOOST_TEST(!overflow_pair_within(INFINITY, 65504, 60000, 483, 483, h));   // Inf out of reach
  BOOST_TEST(!overflow_pair_within(-INFINITY, 65504, 65505, 483, 483, h));  // sign
  BOOST_TEST(!overflow_pair_within(-INFINITY, -65504, 65505, 483, 483, h));
  BOOST_TEST(!overflow_pair_within(INFINITY, NAN, 65505, 483, 483, h));
  BOOST_TEST(!overflow_pair_within(INFINITY, INFINITY, 65505, 483, 483, h));  // not one of each
  BOOST_TEST(!overflow_pair_within(INFINITY, 65504, INFINITY, 483, 483, h));  // exact infinite
  // An exact value past the threshold: the Inf is right, and a result saturated at 65504 is
  // 1e6 - 483 - 65504 from the nearest value the Inf's bound allows, not 16 from the threshold.
  BOOST_TEST(!overflow_pair_within(INFINITY, 65504, 1e6, 483, 483, h));
  BOOST_TEST(overflow_pair_within(INFINITY, 65504, 66000, 483, 483, h));
  // Each side's own bound: the Inf's decides whether it could overflow, the sum the allowance.
  BOOST_TEST(!overflow_pair_within(INFINITY, 65504, 65505, 10, 483, h));
  BOOST_TEST(overflow_pair_within(65504, INFINITY, 65505, 10, 483, h));
}

BOOST_AUTO_TEST_CASE(non_finite_exact_values_name_what_passes_not_a_bound) {
  // special fills give NaN and Inf results; a bound is meaningless there, so the message says
  // which results pass instead (with the infinity's own sign), and a NaN prints as "nan" whatever
  // its sign bit.
  struct Row {
    const char* name;
    bool nan;  // twist the first NaN result (else the first infinite one) to 1
  };
  const NumericContract loose = f32_linear();
  for (const Row& row : {Row{"nan_gone", true}, Row{"inf_gone", false}}) {
    float was = 0;
    Twisted t(
        row.name,
        [&row, &was](const Problem&, TensorView& v) {
          float* f = static_cast<float*>(v.data);
          for (int64_t i = 0; i < elements(v); ++i)
            if (row.nan ? std::isnan(f[i]) : std::isinf(f[i])) {
              was = f[i];
              f[i] = 1;
              break;
            }
        },
        loose);
    const CaseReport r = run_case(make_case(kProblems[0], FillKind::special), {&t});
    const BackendRecord& b = only(r);
    BOOST_TEST(b.check == "compare", row.name << ": " << b.reason);
    const std::string inf = was < 0 ? "-inf" : "inf";
    const std::string says = row.nan ? "got 1, exact nan (any NaN passes)"
                                     : "got 1, exact " + inf + " (only " + inf + " passes)";
    BOOST_TEST(b.reason.find(says) != std::string::npos, says << " in " << b.reason);
    BOOST_TEST(b.reason.find("bound") == std::string::npos, b.reason);
    BOOST_REQUIRE(b.first.has_value());
    BOOST_TEST(exact_and_bound(b.first->ref, b.first->bound) ==
               says.substr(std::string("got 1, ").size()));
  }
  // A result NaN with its sign bit set where a finite value was exact.
  Twisted neg("neg_nan", [](const Problem&, TensorView& v) {
    float* f = static_cast<float*>(v.data);
    for (int64_t i = 0; i < elements(v); ++i)
      if (std::isfinite(f[i])) {
        f[i] = -std::numeric_limits<float>::quiet_NaN();
        break;
      }
  });
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::special), {&neg});
  const BackendRecord& b = only(r);
  BOOST_TEST(b.check == "compare", b.reason);
  BOOST_TEST(b.reason.find("got nan") != std::string::npos, b.reason);
  BOOST_TEST(b.reason.find("-nan") == std::string::npos, b.reason);
}

BOOST_AUTO_TEST_CASE(exact_fill_demands_bits) {
  const NumericContract f32 = f32_linear();
  Twisted t(
      "ulp",
      [](const Problem&, TensorView& v) {
        float* f = static_cast<float*>(v.data);
        for (int64_t i = 0; i < elements(v); ++i)
          if (f[i] != 0) {
            f[i] = std::nextafter(f[i], INFINITY);
            break;
          }
      },
      f32);
  const CaseReport b_report = run_case(make_case(kProblems[0], FillKind::exact), {&t});
  const BackendRecord& b = only(b_report);
  BOOST_TEST(b.check == "compare");
  BOOST_TEST(b.reason.find("bitwise equality required") != std::string::npos, b.reason);
}

BOOST_AUTO_TEST_CASE(out_of_bounds_unwritten_modified_crashed) {
  Twisted oob("oob", [](const Problem&, TensorView& v) {
    static_cast<unsigned char*>(v.data)[elements(v) * dtype_size(v.dtype) + 3] ^= 1;
  });
  const CaseReport o = run_case(make_case(kProblems[0], FillKind::real), {&oob});
  BOOST_TEST(only(o).check == "out_of_bounds");

  // Restoring the poisoned last element = never writing it.
  Twisted tail("tail", [](const Problem&, TensorView& v) {
    if (elements(v)) static_cast<uint32_t*>(v.data)[elements(v) - 1] = 0x7FA5A5A5u;
  });
  const CaseReport u_report = run_case(make_case(kProblems[0], FillKind::real), {&tail});
  const BackendRecord& u = only(u_report);
  BOOST_TEST(u.check == "unwritten");

  class Scribbler : public Twisted {
   public:
    Scribbler() : Twisted("scribble", [](const Problem&, TensorView&) {}) {}
    void compute(const CheckedProblem& p, const Operands& in, TensorView out) override {
      Twisted::compute(p, in, out);
      const ConstTensorView* f = in.filter;
      const_cast<float*>(static_cast<const float*>(f->data))[0] += 1;
    }
  } scribble;
  const CaseReport sc = run_case(make_case(kProblems[0], FillKind::real), {&scribble});
  BOOST_TEST(only(sc).check == "operand_modified");

  Twisted thrower("thrower", [](const Problem&, TensorView&) { throw std::runtime_error("boom"); });
  const CaseReport c_report = run_case(make_case(kProblems[0], FillKind::real), {&thrower});
  const BackendRecord& c = only(c_report);
  BOOST_TEST(verdict_name(c.verdict) == std::string("crashed"));
  BOOST_TEST(c.reason.find("boom") != std::string::npos);
}

// Readable guard bands cannot see a read; the page-guarded passes can, on any thread, naming the
// buffer and the side, and the SIGSEGV action is the one from before afterwards.
BOOST_AUTO_TEST_CASE(reads_past_either_end_are_out_of_bounds_naming_role_and_side) {
  struct sigaction before {};
  sigaction(SIGSEGV, nullptr, &before);
  static const bool registered = (register_mutant_backends(Registry::instance()), true);
  BOOST_REQUIRE(registered);
  const std::unique_ptr<Backend> over = Registry::instance().make("mutant:over_read_by_one");
  for (const char* d : {"conv2d:input=1x5x5x3,filter=3x3x3x2",
                        "conv2d_backprop_input:input=2x6x6x2,filter=3x3x2x3,dtype=f16"}) {
    const CaseReport r = run_case(make_case(d, FillKind::real), {over.get()});
    const std::string role = op_io(r.c.problem.op).b == Role::filter ? "filter" : "out_backprop";
    BOOST_TEST_CONTEXT(d) {
      BOOST_TEST(only(r).check == "out_of_bounds");
      BOOST_TEST(only(r).reason.find("1 byte past the end of " + role) != std::string::npos,
                 only(r).reason);
    }
  }

  // One element before the start of the first operand, read on a thread of its own.
  class UnderReader : public Twisted {
   public:
    UnderReader() : Twisted("under", [](const Problem&, TensorView&) {}) {}
    void compute(const CheckedProblem& p, const Operands& in, TensorView out) override {
      Twisted::compute(p, in, out);
      const ConstTensorView* v = in.get(op_io(p.problem().op).a);
      std::thread([v] {
        const volatile unsigned char* q = static_cast<const unsigned char*>(v->data);
        g_read_sink ^= q[-static_cast<std::ptrdiff_t>(dtype_size(v->dtype))];
      }).join();
    }
  } reader;
  const CaseReport u = run_case(
      make_case("conv2d_backprop_filter:input=1x5x5x2,filter=2x2x2x2", FillKind::real), {&reader});
  BOOST_TEST(only(u).check == "out_of_bounds");
  BOOST_TEST(only(u).reason.find("4 bytes before the start of input") != std::string::npos,
             only(u).reason);

  // The reference and the optimized backend (OpenMP) read nothing outside their buffers.
  const std::unique_ptr<Backend> ref = reference_backend(), opt = optimized_backend();
  for (const char* d : kProblems) {
    const CaseReport r = run_case(make_case(d, FillKind::real), {ref.get(), opt.get()});
    for (const BackendRecord& b : r.records) BOOST_TEST(b.check != "out_of_bounds", b.reason);
  }
  struct sigaction after {};
  sigaction(SIGSEGV, nullptr, &after);
  BOOST_TEST((after.sa_flags & SA_SIGINFO) == (before.sa_flags & SA_SIGINFO));
  BOOST_TEST(reinterpret_cast<void*>(after.sa_handler) ==
             reinterpret_cast<void*>(before.sa_handler));
}

BOOST_AUTO_TEST_CASE(unsupported_and_mistrusted) {
  Twisted off("off", [](const Problem&, TensorView&) {});
  off.available_ = Status::Error("no CUDA device");
  const CaseReport u_report = run_case(make_case(kProblems[0], FillKind::real), {&off});
  const BackendRecord& u = only(u_report);
  BOOST_TEST(verdict_name(u.verdict) == std::string("unsupported"));
  BOOST_TEST(u.reason == "no CUDA device");
  // An all-zero exact result (filter wider than the input: out_w = 0) cannot tell anything apart.
  auto ref = reference_backend();
  const CaseReport m_report = run_case(
      make_case("conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2", FillKind::real),
      {ref.get()});
  const BackendRecord& m = only(m_report);
  BOOST_TEST(verdict_name(m.verdict) == std::string("mistrusted"));
}

// How a backend answers while declaring what it can do decides its verdict: the kind of answer
// (Status's code, or what it threw), never the wording of its reason.
BOOST_AUTO_TEST_CASE(capability_answers_decide_by_kind_not_wording) {
  class Answering : public Twisted {
   public:
    explicit Answering(std::function<Status()> answer)
        : Twisted("answering", [](const Problem&, TensorView&) {}), answer_(std::move(answer)) {}
    Status can_implement(const CheckedProblem&) const override { return answer_(); }

   private:
    std::function<Status()> answer_;
  };
  struct Row {
    const char* what;
    std::function<Status()> answer;
    const char* verdict;
    const char* check;
  };
  const Row rows[] = {
      {"declines in words that sound like a crash",
       [] { return Status::Error("crashed into an unsupported stride"); }, "unsupported", ""},
      {"declines in words that sound like a timeout",
       [] { return Status::Error("timed out waiting for sm_90 (unsupported)"); }, "unsupported",
       ""},
      {"throws", []() -> Status { throw std::runtime_error("boom"); }, "crashed", "crashed"},
      {"times out", []() -> Status { throw Timeout("no answer within 2 s"); }, "timeout",
       "timeout"},
  };
  for (const Row& row : rows) {
    Answering b(row.answer);
    const CaseReport r = run_case(make_case(kProblems[0], FillKind::real), {&b});
    BOOST_TEST(verdict_name(only(r).verdict) == std::string(row.verdict), row.what);
    BOOST_TEST(only(r).check == row.check, row.what);
  }
}

BOOST_AUTO_TEST_CASE(relations_catch_what_compare_cannot_see) {
  // A backend whose conv2d_transpose is right but whose backprop input is off everywhere: a case of
  // conv2d_transpose passes compare, and the transpose relation (and adjoint) catch it.
  Twisted split("split", [](const Problem& p, TensorView& v) {
    if (p.op == Op::conv2d_backprop_input)
      for (int64_t i = 0; i < elements(v); ++i) static_cast<float*>(v.data)[i] *= 1.5f;
  });
  const CaseReport b_report =
      run_case(make_case("conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME",
                         FillKind::exact),
               {&split});
  const BackendRecord& b = only(b_report);
  BOOST_TEST(verdict_name(b.verdict) == std::string("fail"));
  BOOST_TEST(b.mismatches == 0);
  BOOST_TEST((b.check == "adjoint:conv2d_backprop_input" || b.check.rfind("adjoint:", 0) == 0 ||
              b.check == "metamorphic:transpose"),
             b.check);
}

// nan_footprint counts both ways, as numbers (RelationResult::nan_extra, nan_missing) and in its
// detail: a NaN that reached too far is a different finding from a lost one, and the testbed's
// known-difference excuse (tests/backend_testbed.cpp) takes only the first.
BOOST_AUTO_TEST_CASE(nan_footprint_counts_spread_and_lost_nans) {
  const auto nan_result = [](const CaseReport& r) {
    for (const RelationResult& x : only(r).metamorphic)
      if (x.name == "metamorphic:nan_footprint") return x;
    BOOST_FAIL("no metamorphic:nan_footprint record");
    return RelationResult{};
  };
  const auto floats = [](TensorView& v) { return static_cast<float*>(v.data); };
  // Spread: any NaN in the result makes every element NaN.
  Twisted spread("spread", [&](const Problem&, TensorView& v) {
    bool any = false;
    for (int64_t i = 0; i < elements(v); ++i) any |= std::isnan(floats(v)[i]);
    if (any)
      for (int64_t i = 0; i < elements(v); ++i) floats(v)[i] = NAN;
  });
  // Lost: NaN read back as 0.
  Twisted lost("lost", [&](const Problem&, TensorView& v) {
    for (int64_t i = 0; i < elements(v); ++i)
      if (std::isnan(floats(v)[i])) floats(v)[i] = 0;
  });
  auto ref = reference_backend();
  const Case c = make_case(kProblems[0], FillKind::real);
  const RelationResult clean = nan_result(run_case(c, {ref.get()}));
  BOOST_TEST(clean.passed);
  BOOST_TEST((clean.nan_extra == 0 && clean.nan_missing == 0));
  const int64_t total = 2 * 7 * 6 * 4;  // kProblems[0]'s input_backprop

  // Spread: every element the NaN does not reach is extra; lost: every one it reaches is
  // missing. Together they count each result element once.
  const RelationResult s = nan_result(run_case(c, {&spread}));
  BOOST_TEST(!s.passed);
  BOOST_TEST(s.nan_missing == 0);
  BOOST_TEST(s.nan_extra > 0);
  BOOST_TEST(s.detail.find("(" + std::to_string(s.nan_extra) +
                           " NaN results no term connects, 0 connected results not NaN)") !=
                 std::string::npos,
             s.detail);
  const RelationResult l = nan_result(run_case(c, {&lost}));
  BOOST_TEST(!l.passed);
  BOOST_TEST(l.nan_extra == 0);
  BOOST_TEST(l.nan_missing > 0);
  BOOST_TEST(s.nan_extra + l.nan_missing == total);
}

BOOST_AUTO_TEST_CASE(nondeterminism_is_caught_by_the_rerun) {
  int calls = 0;
  NumericContract loose;  // allow the tiny differences: only determinism should object
  loose.name = "f32-linear";
  loose.u_acc = 0x1p-24;
  Twisted wrapped(
      "flaky",
      [&calls](const Problem&, TensorView& v) {
        if (elements(v) && ++calls % 2 == 0) {
          float* f = static_cast<float*>(v.data);
          f[0] = std::nextafter(f[0], INFINITY);
        }
      },
      loose);
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::real), {&wrapped});
  bool determinism_failed = false;
  for (const RelationResult& x : only(r).metamorphic)
    determinism_failed |= x.name == "metamorphic:determinism" && !x.passed;
  BOOST_TEST(determinism_failed);
  // The verdict names it, with the count and the first differing element, and the repro asks for
  // enough runs to see it again.
  BOOST_TEST(only(r).check == "nondeterministic");
  BOOST_TEST(only(r).reason.find("differs from run 1 in 1 of ") != std::string::npos,
             only(r).reason);
  BOOST_TEST(only(r).reason.find("first at [") != std::string::npos, only(r).reason);
  BOOST_TEST(only(r).repro.find(" --repeat 20") != std::string::npos, only(r).repro);
}

// A racy kernel is `nondeterministic` whatever else its race broke: here every run after the first
// is also wrong by far more than the bound, which compare alone would call `compare`.
BOOST_AUTO_TEST_CASE(nondeterminism_outranks_compare) {
  int calls = 0;
  Twisted wrapped("racy", [&calls](const Problem&, TensorView& v) {
    if (elements(v) && ++calls % 2 == 1) static_cast<float*>(v.data)[0] += 1000;
  });
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::exact), {&wrapped});
  BOOST_TEST(only(r).check == "nondeterministic", only(r).check << ": " << only(r).reason);
  BOOST_TEST(only(r).mismatches == 0);  // decided before the comparison's figures
}

// --repeat N: N runs per backend; a deterministic backend passes however many.
BOOST_AUTO_TEST_CASE(more_runs_for_a_deterministic_backend_still_pass) {
  auto ref = reference_backend();
  OracleOptions options;
  options.runs = 5;
  const CaseReport r = run_case(make_case(kProblems[1], FillKind::real), {ref.get()}, options);
  BOOST_TEST(verdict_name(only(r).verdict) == std::string("pass"));
  bool seen = false;
  for (const RelationResult& x : only(r).metamorphic)
    if (x.name == "metamorphic:determinism") {
      seen = true;
      BOOST_TEST(x.passed);
      BOOST_TEST(x.detail.find("4 reruns") == 0, x.detail);
    }
  BOOST_TEST(seen);
}

// The reference, except that its backprop filter leaves out the last third of the batch (the
// input's images are zero there): a conv2d case compares right, and only the adjoint identity
// fwd = bpf can see the derived run's bug.
class DropsBatch final : public Backend {
 public:
  std::string name() const override { return "drops_batch"; }
  Status can_implement(const CheckedProblem&) const override { return Status::Ok(); }
  NumericContract contract(const CheckedProblem& p) const override { return ref_->contract(p); }

 private:
  void compute(const CheckedProblem& p, const Operands& in, TensorView out) override {
    if (p.problem().op != Op::conv2d_backprop_filter) return ref_->run(p, in, out);
    const ConstTensorView& x = *in.input;
    Tensor kept(x.dtype, x.shape, x.layout);
    const int64_t n = x.shape[0], per_image = element_count(x.shape) / std::max<int64_t>(n, 1);
    const int64_t keep = n - n / 3;
    std::memcpy(kept.data(), x.data,
                static_cast<std::size_t>(keep * per_image) * dtype_size(x.dtype));
    for (int64_t i = keep * per_image; i < kept.size(); ++i) kept.set(i, 0);
    ConstTensorView k = view(static_cast<const Tensor&>(kept));
    Operands dropped = in;
    dropped.input = &k;
    ref_->run(p, dropped, out);
  }
  std::unique_ptr<Backend> ref_ = reference_backend();
};

// 16-bit adjoints bite (issue 15 item 6): on bf16 and f16 real data the identities run on exact
// operands with slack 0, so a derived run that drops a third of the batch fails them.
BOOST_AUTO_TEST_CASE(sixteen_bit_adjoints_see_a_dropped_third_of_the_batch) {
  DropsBatch drops;
  for (const char* dtype : {"bf16", "f16"}) {
    const std::string text =
        std::string("conv2d:input=3x8x8x4,filter=3x3x4x5,padding=SAME,dtype=") + dtype;
    const BackendRecord r = only(run_case(make_case(text, FillKind::real), {&drops}));
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(r.mismatches == 0);  // the case itself is right
      BOOST_TEST(r.check == "adjoint:fwd=bpf", r.check << ": " << r.reason);
      for (const RelationResult& a : r.adjoint) {
        BOOST_TEST_MESSAGE(dtype << " " << a.name << ": " << a.detail);
        BOOST_TEST(a.slack == 0);
        BOOST_TEST(a.detail.find("on exact-fill operands") != std::string::npos, a.detail);
      }
    }
  }
  // The reference still passes them on every 16-bit fill.
  auto ref = reference_backend();
  for (FillKind fill : {FillKind::real, FillKind::scaled, FillKind::cancel, FillKind::tiny}) {
    const BackendRecord r = only(run_case(
        make_case("conv2d_backprop_filter:input=3x8x8x4,filter=3x3x4x5,padding=SAME,dtype=bf16",
                  fill),
        {ref.get()}));
    BOOST_TEST(verdict_name(r.verdict) == std::string("pass"), fill_name(fill) << ": " << r.reason);
  }
}

BOOST_AUTO_TEST_CASE(odd_one_out_is_named) {
  auto a = reference_backend(), b = reference_backend();
  Twisted bad("bad", [](const Problem&, TensorView& v) {
    if (elements(v)) static_cast<float*>(v.data)[0] += 1;
  });
  const CaseReport r = run_case(make_case(kProblems[0], FillKind::exact), {a.get(), &bad, b.get()});
  BOOST_TEST(r.odd_one_out == "bad");
  const CaseReport ok =
      run_case(make_case(kProblems[0], FillKind::exact), {a.get(), b.get(), a.get()});
  BOOST_TEST(ok.odd_one_out.empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reports)

BOOST_AUTO_TEST_CASE(json_carries_every_figure) {
  auto ref = reference_backend();
  const std::string j = to_json(run_case(make_case(kProblems[1], FillKind::real), {ref.get()}));
  for (const char* key :
       {"\"problem\":", "\"seed\":3", "\"fill\":\"real\"",
        "\"tf_admission\":", "\"verdict\":\"pass\"", "\"bound_usage\":", "\"adjoint\":[",
        "\"residual\":", "\"slack\":", "\"metamorphic\":[", "\"repro\":\"convcheck check '"}) {
    BOOST_TEST(j.find(key) != std::string::npos, key);
  }
  // NCHW is refused by TF's CPU backprop filter kernel: the admission is reported.
  BOOST_TEST(j.find("Conv2DCustomBackpropFilterOp only supports NHWC.") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(fills_are_reproducible) {
  auto ref = reference_backend();
  for (FillKind f : kAllFills) {
    const std::string a = to_json(run_case(make_case(kProblems[3], f, 11), {ref.get()}));
    const std::string b = to_json(run_case(make_case(kProblems[3], f, 11), {ref.get()}));
    auto strip_ms = [](std::string s) {  // timings differ run to run
      for (std::size_t k = s.find("\"ms\":"); k != std::string::npos; k = s.find("\"ms\":", k + 1))
        s.erase(k + 5, s.find(',', k) - k - 5);
      return s;
    };
    BOOST_TEST(strip_ms(a) == strip_ms(b), fill_name(f));
  }
}

// One vocabulary (oracle/fills.h): names unique within each use and parsed back; the name lists
// the CLI prints; the two ramps; `random` is the SplitMix64 stream seeded with seed + role.
BOOST_AUTO_TEST_CASE(one_fill_vocabulary) {
  for (FillUse use : {kOracleFill, kOperandsFill}) {
    for (const FillInfo& f : fills()) {
      BOOST_TEST(fill_info(f.kind).name == f.name);
      if (f.uses & use) BOOST_TEST((parse_fill(f.name, use) == f.kind), f.name);
    }
    BOOST_TEST(!parse_fill("sparse", use));
  }
  BOOST_TEST(fill_names(kOracleFill) == "exact, real, cancel, special, ramp, scaled or tiny");
  BOOST_TEST(fill_names(kOperandsFill, "|", "|") == "ones|ramp|random");
  BOOST_TEST(kAllFills.size() == 7u);
  BOOST_TEST(!parse_fill("ones"));  // an operands fill only

  Tensor wrapped(DType::f16, {3000}, Layout::Plain), unwrapped(DType::f16, {3000}, Layout::Plain);
  fill_tensor(wrapped, *parse_fill("ramp", kOracleFill), Role::input, 1);
  fill_tensor(unwrapped, *parse_fill("ramp", kOperandsFill), Role::input, 1);
  BOOST_TEST(wrapped.get(2047) == 2048.0);
  BOOST_TEST(unwrapped.get(2047) == 2048.0);
  BOOST_TEST(wrapped.get(2048) == 1.0);       // f16 wraps at 2048: exact integers
  BOOST_TEST(unwrapped.get(2048) == 2048.0);  // 2049 rounds to even in f16, as in TF's tests

  Tensor r(DType::f32, {100}, Layout::Plain);
  fill_tensor(r, FillKind::random, Role::filter, 5);
  uint64_t state = 5 + static_cast<uint64_t>(Role::filter);
  for (int64_t i = 0; i < r.size(); ++i)
    BOOST_TEST(r.get(i) ==
               static_cast<double>(static_cast<int64_t>(splitmix64_next(state) % 17) - 8));
}

BOOST_AUTO_TEST_SUITE_END()

// The fills of issue 15: scale-disparate roles and results straddling the smallest normal.
BOOST_AUTO_TEST_SUITE(scaled_and_tiny_fills)

double rms(const Tensor& t) {
  double s = 0;
  for (int64_t i = 0; i < t.size(); ++i) s += t.get(i) * t.get(i);
  return std::sqrt(s / static_cast<double>(t.size()));
}

// Each role has its own scale, drawn per case: input 10^[-0.5, 0.5], filter 10^[-1.5, -0.5],
// out_backprop 10^[-6, -3] (f16 10^[-4, -3]); int32 is the real fill.
BOOST_AUTO_TEST_CASE(scaled_roles_have_their_scales) {
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    std::vector<double> grads;
    for (uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
      for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
        Tensor x(t, {4096}, Layout::Plain);
        fill_tensor(x, FillKind::scaled, r, seed);
        const double m = rms(x);
        const double lo = r == Role::input    ? std::pow(10.0, -0.5)
                          : r == Role::filter ? std::pow(10.0, -1.5)
                          : t == DType::f16   ? 1e-4
                                              : 1e-6;
        const double hi = r == Role::input    ? std::pow(10.0, 0.5)
                          : r == Role::filter ? std::pow(10.0, -0.5)
                                              : 1e-3;
        BOOST_TEST_CONTEXT(dtype_name(t) << " seed " << seed << " " << role_name(r)) {
          BOOST_TEST(m >= 0.9 * lo);  // the RMS of 4096 N(0,1) draws is within a few % of 1
          BOOST_TEST(m <= 1.1 * hi);
        }
        if (r == Role::out_backprop) grads.push_back(m);
      }
    }
    // Drawn per case: the seeds give different gradient scales (over a decade apart; f16 over 2x).
    const auto [lo, hi] = std::minmax_element(grads.begin(), grads.end());
    BOOST_TEST(*hi / *lo > (t == DType::f16 ? 2.0 : 10.0), dtype_name(t));
  }
  Tensor a(DType::i32, {64}, Layout::Plain), b(DType::i32, {64}, Layout::Plain);
  fill_tensor(a, FillKind::scaled, Role::out_backprop, 9);
  fill_tensor(b, FillKind::real, Role::out_backprop, 9);
  for (int64_t i = 0; i < a.size(); ++i) BOOST_TEST(a.get(i) == b.get(i));
}

// tiny: every operand is normal, and the exact results of every op straddle the dtype's smallest
// normal: some are subnormal (nonzero), some normal.
BOOST_AUTO_TEST_CASE(tiny_results_straddle_the_smallest_normal) {
  const char* const ops[] = {
      "conv2d",           "conv2d_backprop_input",           "conv2d_backprop_filter",
      "depthwise_conv2d", "depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter"};
  for (const char* dt : {"f16", "bf16", "f32", "f64"}) {
    for (const char* op : ops) {
      const std::string text =
          std::string(op) + ":input=2x6x6x3,filter=3x3x3x2,padding=SAME,dtype=" + dt;
      const Problem p = parse_problem(text);
      const Geometry g = geometry(p);
      const double smallest_normal = std::ldexp(1.0, float_format(p.dtype).min_exponent);
      std::vector<Tensor> roles;
      Operands in;
      for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
        roles.emplace_back(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
        fill_tensor(roles.back(), FillKind::tiny, r, 5);
        for (int64_t i = 0; i < roles.back().size(); ++i) {
          const double v = std::fabs(roles.back().get(i));
          BOOST_TEST((v == 0 || v >= smallest_normal), text << " " << role_name(r));
        }
      }
      std::vector<ConstTensorView> views;
      for (const Tensor& t : roles) views.push_back(view(t));
      in.set(Role::input, &views[0]);
      in.set(Role::filter, &views[1]);
      in.set(Role::out_backprop, &views[2]);
      Operands two;  // only the op's own two operands
      const OpIO io = op_io(p.op);
      two.set(io.a, in.get(io.a));
      two.set(io.b, in.get(io.b));
      const ReferenceResult ref = reference_compute(p, g, two);
      int subnormal = 0, normal = 0;
      for (int64_t i = 0; i < ref.result.size(); ++i) {
        const double v = std::fabs(ref.result.get(i));
        subnormal += v > 0 && v < smallest_normal;
        normal += v >= smallest_normal;
      }
      BOOST_TEST_CONTEXT(text) {
        BOOST_TEST(subnormal > 0);
        BOOST_TEST(normal > 0);
      }
    }
  }
}

// A correct backend passes the new fills: the reference and optimized, every check, on the
// table of problems (every op, every dtype, both formats) and several seeds.
BOOST_AUTO_TEST_CASE(reference_and_optimized_pass_scaled_and_tiny) {
  auto ref = reference_backend();
  auto opt = optimized_backend();
  for (const char* text : kProblems) {
    for (FillKind fill : {FillKind::scaled, FillKind::tiny}) {
      for (uint64_t seed : {1, 2, 3}) {
        const CaseReport r = run_case(make_case(text, fill, seed), {ref.get(), opt.get()});
        BOOST_TEST_CONTEXT(text << " fill " << fill_name(fill) << " seed " << seed) {
          BOOST_REQUIRE_EQUAL(r.records.size(), 2u);
          for (const BackendRecord& b : r.records) {
            BOOST_TEST(verdict_name(b.verdict) == std::string("pass"),
                       b.backend << " " << b.check << ": " << b.reason);
            for (const auto* list : {&b.adjoint, &b.metamorphic})
              for (const RelationResult& x : *list)
                BOOST_TEST((!x.applicable || x.passed),
                           b.backend << " " << x.name << ": " << x.detail);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
