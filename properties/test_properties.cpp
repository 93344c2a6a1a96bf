// Property suite (design §7): RapidCheck properties run as Boost.Test cases.
//
//   generators_*                   every generated problem and every shrink of it is valid; the
//                                  mix of features; shrinking ends at the plainest problem
//   reference_passes_the_oracle    the exact reference passes every check on every case
//   reference_equals_textbook      conv2d: the reference equals tests/textbook_conv on integers
//   invalid_problems_are_refused   InvalidArgument naming the rule, never a crash or a pass
//   descriptors_round_trip         parse(print(p)) == p, and non-canonical spellings parse to p
//   every_mutant_is_caught         fuzz finds each mutant; its minimal repro fails again, and
//                                  the reference passes it (the failure is the mutant's)
//   fuzz_is_deterministic_...      same seed, same failures; callbacks; the time limit
//   demo_shrunk_failure            (disabled) a failing property, to show a shrunk counterexample:
//                                  test_properties --run_test=demo_shrunk_failure
//
// RapidCheck settings come from RC_PARAMS (default: 100 cases, max_size 100; keep max_size <= 100).
#define BOOST_TEST_MODULE properties
#include <boost/test/unit_test.hpp>
// Boost.Test first, then RapidCheck's adapter.
#include <rapidcheck/boost_test.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/hash.h"
#include "core/problem.h"
#include "mutants/mutants.h"
#include "oracle/oracle.h"
#include "properties/fuzz.h"
#include "properties/generators.h"
#include "reference/reference.h"
#include "textbook_conv.h"

namespace convcheck {
// How RapidCheck prints counterexamples (found by ADL).
void showValue(const Problem& p, std::ostream& os) {
  os << to_string(p);
}
void showValue(const Case& c, std::ostream& os) {
  os << to_string(c.problem) << " --seed " << c.seed << " --fill " << fill_name(c.fill);
}
namespace gen {
void showValue(const InvalidProblem& ip, std::ostream& os) {
  os << "'" << ip.descriptor << "' (must say: " << ip.rule << ")";
}
}  // namespace gen
}  // namespace convcheck

using namespace convcheck;

namespace {

struct RegisterBackends {
  RegisterBackends() {
    register_reference_backend(Registry::instance());
    register_mutant_backends(Registry::instance());
  }
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Features of a problem, for the distribution check.
struct Features {
  bool conv, nchw, dilated, grouped, multiplier, i32_capable, i32, explicit_pad, same_odd,
      stride_gt_extent, unequal_strides, empty_batch, empty_output, empty_input, pads_gt_extent;
};

Features features(const Problem& p) {
  const Geometry g = geometry(p);
  Features f{};
  f.conv = !is_depthwise(p.op);
  f.nchw = p.format == Format::NCHW;
  f.dilated = g.dh > 1 || g.dw > 1;
  f.grouped = f.conv && g.G > 1;
  f.multiplier = !f.conv && g.M > 1;
  f.i32_capable = op_takes_dtype(p.op, DType::i32);
  f.i32 = p.dtype == DType::i32;
  f.explicit_pad = p.padding.kind == PaddingKind::EXPLICIT;
  f.same_odd = p.padding.kind == PaddingKind::SAME &&
               ((g.pad_top + g.pad_bottom) % 2 == 1 || (g.pad_left + g.pad_right) % 2 == 1);
  f.stride_gt_extent = g.sh > g.eff_h || g.sw > g.eff_w;
  f.unequal_strides = g.sh != g.sw;
  f.empty_batch = g.N == 0;
  f.empty_output = g.OH == 0 || g.OW == 0;
  f.empty_input = g.H == 0 || g.W == 0;
  f.pads_gt_extent = f.explicit_pad && std::max({p.padding.top, p.padding.bottom, p.padding.left,
                                                 p.padding.right}) > std::max(g.eff_h, g.eff_w) - 1;
  return f;
}

// The plainest problem of an op: what shrinking along first shrinks must reach.
std::string plainest(Op op) {
  return std::string(op_name(op)) +
         ":input=1x1x1x1,filter=1x1x1x1,stride=1x1,dilation=1x1,padding=VALID,format=NHWC,"
         "dtype=f32";
}

// Parses `convcheck check '<descriptor>' --backends <b> --seed <s> --fill <f>` back into a case.
// A repro line's case, backend and options; `after` gets its --after case (a state relation's
// sequence: the case it names runs first, unjudged), if any.
Case case_of_repro(const std::string& line, std::string* backend, OracleOptions* options,
                   std::optional<Case>* after = nullptr) {
  const std::size_t open = line.find('\''), close = line.find('\'', open + 1);
  Case c;
  c.problem = parse_problem(line.substr(open + 1, close - open - 1));
  std::istringstream rest(line.substr(close + 1));
  std::string flag, value;
  std::optional<Case> first;
  while (rest >> flag >> value) {
    if (flag == "--backends") *backend = value;
    if (flag == "--seed") c.seed = std::stoull(value);
    if (flag == "--fill") c.fill = *parse_fill(value);
    if (flag == "--repeat") options->runs = std::stoi(value);
    if (flag == "--after") {
      first = Case{};
      first->problem = parse_problem(value.substr(1, value.size() - 2));  // quoted
    }
    if (flag == "--after-seed") first->seed = std::stoull(value);
    if (flag == "--after-fill") first->fill = *parse_fill(value);
  }
  if (after != nullptr) *after = first;
  return c;
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(RegisterBackends);

// ---------------------------------------------------------------------------------------------
// The generators themselves (deterministic: a fixed rc::Random, sizes cycling 0..100).

BOOST_AUTO_TEST_CASE(generators_build_valid_problems_with_the_intended_mix) {
  const rc::Gen<Problem> problems = gen::valid_problem();
  rc::Random random(20240601);
  const int n = 4000;
  std::map<std::string, int> count;
  int conv = 0, dw = 0, i32_capable = 0;
  int64_t max_terms = 0, total_terms = 0;
  for (int i = 0; i < n; ++i) {
    const Problem p = problems(random.split(), i % 101).value();
    Geometry g{};
    BOOST_REQUIRE_NO_THROW(g = geometry(p));
    const Features f = features(p);
    conv += f.conv;
    dw += !f.conv;
    i32_capable += f.i32_capable;
    count["nchw"] += f.nchw;
    count["dilated"] += f.dilated;
    count["grouped (of conv)"] += f.grouped;
    count["multiplier>1 (of depthwise)"] += f.multiplier;
    count["i32 (of i32-capable ops)"] += f.i32;
    count["explicit"] += f.explicit_pad;
    count["explicit pad > extent-1"] += f.pads_gt_extent;
    count["same, odd total"] += f.same_odd;
    count["stride > extent"] += f.stride_gt_extent;
    count["unequal strides"] += f.unequal_strides;
    count["N = 0"] += f.empty_batch;
    count["output size 0"] += f.empty_output;
    count["input size 0"] += f.empty_input;
    // Terms of the forward op, the one every relation of a case computes at least once.
    const int64_t terms = g.N * g.OH * g.OW * g.O * g.KH * g.KW * g.Cf;
    max_terms = std::max(max_terms, terms);
    total_terms += terms;
  }
  auto rate = [&](const std::string& k, int of) { return 100.0 * count[k] / std::max(of, 1); };
  std::cout << "generator mix over " << n << " problems (sizes 0..100):\n";
  for (const auto& [k, v] : count) {
    const int of = contains(k, "of conv")        ? conv
                   : contains(k, "of depthwise") ? dw
                   : contains(k, "i32-capable")  ? i32_capable
                                                 : n;
    std::cout << "  " << k << ": " << rate(k, of) << "%\n";
  }
  std::cout << "  forward terms: mean " << total_terms / n << ", max " << max_terms << "\n";
  BOOST_TEST(rate("nchw", n) > 28);
  BOOST_TEST(rate("nchw", n) < 42);
  BOOST_TEST(rate("dilated", n) > 24);
  BOOST_TEST(rate("dilated", n) < 36);
  BOOST_TEST(rate("grouped (of conv)", conv) > 18);
  BOOST_TEST(rate("grouped (of conv)", conv) < 32);
  BOOST_TEST(rate("multiplier>1 (of depthwise)", dw) > 30);
  BOOST_TEST(rate("i32 (of i32-capable ops)", i32_capable) > 15);
  BOOST_TEST(rate("i32 (of i32-capable ops)", i32_capable) < 25);
  BOOST_TEST(rate("same, odd total", n) > 5);
  BOOST_TEST(rate("explicit pad > extent-1", n) > 5);
  BOOST_TEST(rate("stride > extent", n) > 5);
  BOOST_TEST(rate("unequal strides", n) > 10);
  BOOST_TEST(count["N = 0"] > 0);
  BOOST_TEST(count["output size 0"] > 0);
  BOOST_TEST(count["input size 0"] > 0);
}

// Issue 15's tiers: the medium tier reaches block tails (every residue mod 16 up to 80 channels, N
// past 8, sizes past 32) and the big tier inputs past 2^16 elements; a failure that needs a full
// block and a tail shrinks to the smallest such C (17), not to C = 1.
BOOST_AUTO_TEST_CASE(generators_reach_block_tails_and_big_indices_and_shrink_to_the_tail) {
  const rc::Gen<Problem> problems = gen::valid_problem();
  rc::Random random(15);
  std::map<int64_t, int> residues;  // C mod 16 over C > 16
  int64_t max_c = 0, max_n = 0, max_hw = 0, past_2e16 = 0;
  const int n = 4000;
  auto tail_failure = [](const Problem& p) { return p.input[3] > 16 && p.input[3] % 16 != 0; };
  int shrunk = 0;
  for (int i = 0; i < n; ++i) {
    const rc::Shrinkable<Problem> root = problems(random.split(), i % 101);
    const Problem p = root.value();
    const int64_t C = p.input[3];
    if (C > 16) residues[C % 16] += 1;
    max_c = std::max(max_c, C);
    max_n = std::max(max_n, p.input[0]);
    max_hw = std::max({max_hw, p.input[1], p.input[2]});
    past_2e16 += p.input[0] * p.input[1] * p.input[2] * C > (int64_t{1} << 16);
    if (shrunk < 20 && tail_failure(p)) {  // greedy shrinking, as RapidCheck does
      rc::Shrinkable<Problem> at = root;
      for (bool progress = true; progress;) {
        progress = false;
        rc::Seq<rc::Shrinkable<Problem>> shrinks = at.shrinks();
        while (auto s = shrinks.next()) {
          if (tail_failure(s->value())) {
            at = *s;
            progress = true;
            break;
          }
        }
      }
      BOOST_TEST(at.value().input[3] == 17, to_string(p) << " shrank to " << to_string(at.value()));
      ++shrunk;
    }
  }
  std::cout << "tiers over " << n << " problems: max C " << max_c << ", max N " << max_n
            << ", max H/W " << max_hw << ", inputs past 2^16 elements " << past_2e16
            << ", residues mod 16 of C > 16 seen " << residues.size() << "\n";
  BOOST_TEST(max_c >= 80);
  BOOST_TEST(max_n >= 9);
  BOOST_TEST(max_hw > 32);
  BOOST_TEST(residues.size() == 16u);
  BOOST_TEST(past_2e16 > n / 100);
  BOOST_TEST(shrunk == 20);
}

BOOST_AUTO_TEST_CASE(generators_shrink_to_valid_plain_problems) {
  // Every immediate shrink of a generated problem is valid, and so is every problem on a random
  // walk down the shrink tree; always taking the first shrink ends at the plainest problem.
  const rc::Gen<Problem> problems = gen::valid_problem();
  rc::Random random(7);
  std::mt19937_64 walk(11);
  for (int i = 0; i < 150; ++i) {
    const rc::Shrinkable<Problem> root = problems(random.split(), 100);
    const Problem original = root.value();
    BOOST_TEST_CONTEXT(to_string(original)) {
      {
        rc::Seq<rc::Shrinkable<Problem>> shrinks = root.shrinks();
        while (auto s = shrinks.next()) BOOST_REQUIRE_NO_THROW(geometry(s->value()));
      }
      rc::Shrinkable<Problem> at = root;  // random walk
      for (int depth = 0; depth < 40; ++depth) {
        std::vector<rc::Shrinkable<Problem>> all;
        rc::Seq<rc::Shrinkable<Problem>> shrinks = at.shrinks();
        while (auto s = shrinks.next()) all.push_back(*s);
        if (all.empty()) break;
        at = all[walk() % all.size()];
        BOOST_REQUIRE_NO_THROW(geometry(at.value()));
      }
      at = root;  // first shrinks
      for (;;) {
        rc::Seq<rc::Shrinkable<Problem>> shrinks = at.shrinks();
        rc::Maybe<rc::Shrinkable<Problem>> first = shrinks.next();
        if (!first) break;
        at = *first;
      }
      BOOST_TEST(to_string(at.value()) == plainest(original.op));
    }
  }
}

// ---------------------------------------------------------------------------------------------

RC_BOOST_PROP(reference_passes_the_oracle, ()) {
  const Case c = *gen::any_case();
  const std::unique_ptr<Backend> reference = Registry::instance().make("reference");
  const CaseReport report = run_case(c, {reference.get()});
  RC_LOG() << to_text(report);
  const BackendRecord& rec = report.records.at(0);
  RC_TAG(std::string(verdict_name(rec.verdict)) + (rec.check.empty() ? "" : " " + rec.check));
  // An empty or all-zero exact result is `mistrusted` by design (too degenerate to judge); the
  // relations must still hold there.
  RC_ASSERT(rec.verdict == Verdict::pass ||
            (rec.verdict == Verdict::mistrusted && rec.check == "degenerate"));
  for (const auto* list : {&rec.adjoint, &rec.metamorphic})
    for (const RelationResult& r : *list) RC_ASSERT(!r.applicable || r.passed);
}

RC_BOOST_PROP(reference_equals_textbook, ()) {
  Problem p = *gen::valid_problem(Op::conv2d);
  p.format = Format::NHWC;  // the textbook conv speaks NHWC
  const uint64_t seed = *rc::gen::noShrink(rc::gen::inRange<uint64_t>(0, 1u << 30));
  const Geometry g = geometry(p);
  uint64_t state = seed;
  auto integers = [&](Role r) {  // integers in [-8, 8]: every sum is exact in double
    Tensor t(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
    std::vector<double> v(static_cast<std::size_t>(t.size()));
    for (int64_t i = 0; i < t.size(); ++i) {
      v[static_cast<std::size_t>(i)] = static_cast<double>(splitmix64_next(state) % 17) - 8;
      t.set(i, v[static_cast<std::size_t>(i)]);
    }
    return std::make_pair(t, v);
  };
  const auto [x, xv] = integers(Role::input);
  const auto [w, wv] = integers(Role::filter);
  const ConstTensorView vx = view(x), vw = view(w);
  Operands in;
  in.input = &vx;
  in.filter = &vw;
  const ReferenceResult ref = reference_compute(p, in);

  textbook::Conv c;
  c.N = g.N, c.H = g.H, c.W = g.W, c.C = g.C;
  c.KH = g.KH, c.KW = g.KW, c.Cf = g.Cf, c.O = g.O;
  c.sh = g.sh, c.sw = g.sw, c.dh = g.dh, c.dw = g.dw;
  c.pad = p.padding.kind == PaddingKind::VALID  ? textbook::Conv::Pad::valid
          : p.padding.kind == PaddingKind::SAME ? textbook::Conv::Pad::same
                                                : textbook::Conv::Pad::explicit_;
  c.top = p.padding.top, c.bottom = p.padding.bottom;
  c.left = p.padding.left, c.right = p.padding.right;
  const std::vector<int64_t> shape = {g.N, g.OH, g.OW, g.O};
  RC_ASSERT(textbook::output_shape(c) == shape);
  const std::vector<double> want = textbook::conv2d(c, xv, wv);
  RC_ASSERT(static_cast<int64_t>(want.size()) == ref.result.size());
  // The exact sums rounded once into the dtype (integers: exact in double, so one rounding).
  Tensor expected(p.dtype, ref.result.shape(), ref.result.layout());
  for (int64_t i = 0; i < expected.size(); ++i) expected.set(i, want[static_cast<std::size_t>(i)]);
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (ref.result.get(i) != expected.get(i)) {
      RC_FAIL("element " + std::to_string(i) + ": reference " + std::to_string(ref.result.get(i)) +
              ", textbook " + std::to_string(expected.get(i)));
    }
  }
}

RC_BOOST_PROP(invalid_problems_are_refused, ()) {
  const gen::InvalidProblem ip = *gen::invalid_problem();
  std::string refusal;
  try {
    const Problem p = parse_problem(ip.descriptor);
    (void)geometry(p);
  } catch (const InvalidArgument& e) {
    refusal = e.what();
  }
  RC_LOG() << "refusal: " << refusal;
  RC_ASSERT(!refusal.empty());  // refused, and with InvalidArgument (anything else escapes)
  RC_ASSERT(contains(refusal, ip.rule));
}

RC_BOOST_PROP(descriptors_round_trip, ()) {
  const Problem p = *gen::valid_problem();
  const std::string text = to_string(p);
  RC_ASSERT(parse_problem(text) == p);
  RC_ASSERT(to_string(parse_problem(text)) == text);

  // Non-canonical spellings of the same problem: keys in any order, defaults left out, TF's
  // dtype names.
  std::vector<std::string> items;
  std::size_t start = text.find(':') + 1;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  const uint64_t seed = *rc::gen::noShrink(rc::gen::inRange<uint64_t>(0, 1u << 30));
  std::mt19937_64 rng(seed);
  const bool tf_names = rng() % 2, drop_defaults = rng() % 2;
  std::vector<std::string> kept;
  for (std::string item : items) {
    const bool is_default = item == "stride=1x1" || item == "dilation=1x1" ||
                            item == "padding=VALID" || item == "format=NHWC" || item == "dtype=f32";
    if (drop_defaults && is_default) continue;
    if (tf_names && item.rfind("dtype=", 0) == 0)
      item = "dtype=" + std::string(dtype_tf_name(p.dtype));
    kept.push_back(item);
  }
  std::shuffle(kept.begin(), kept.end(), rng);
  std::string other = std::string(op_name(p.op)) + ":";
  for (std::size_t i = 0; i < kept.size(); ++i) other += (i ? "," : "") + kept[i];
  RC_LOG() << "spelled " << other;
  RC_ASSERT(parse_problem(other) == p);
  RC_ASSERT(to_string(parse_problem(other)) == text);
}

// ---------------------------------------------------------------------------------------------
// Mutation score: the oracle (with these generators) catches every planted bug.

BOOST_AUTO_TEST_CASE(every_mutant_is_caught) {
  int caught = 0;
  const std::vector<std::string> names = mutant_names();
  for (const std::string& name : names) {
    const std::unique_ptr<Backend> mutant = Registry::instance().make("mutant:" + name);
    FuzzOptions options;
    options.cases = 300;
    options.seed = 1;
    const auto t0 = std::chrono::steady_clock::now();
    const FuzzSummary summary = fuzz({mutant.get()}, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST_CONTEXT("mutant:" << name) {
      BOOST_TEST(summary.failures.size() == 1u);
      if (summary.failures.empty()) {
        std::cout << "mutant:" << name << ": NOT caught in " << summary.cases << " cases (" << s
                  << " s)\n";
        continue;
      }
      const FuzzFailure& f = summary.failures.front();
      std::cout << "mutant:" << name << ": caught at case " << summary.cases << ", "
                << f.shrink_steps << " shrinks (" << s << " s) [" << verdict_name(f.record.verdict)
                << " " << f.record.check << "]\n  original: " << to_string(f.original.problem)
                << " --seed " << f.original.seed << " --fill " << fill_name(f.original.fill)
                << "\n  minimal:  " << f.repro << "\n";
      BOOST_TEST(f.backend == "mutant:" + name);
      BOOST_TEST(is_failure(f.record.verdict));
      // The printed repro line reproduces the failure.
      std::string backend;
      OracleOptions repro_options;
      std::optional<Case> after;
      const Case again = case_of_repro(f.repro, &backend, &repro_options, &after);
      BOOST_TEST(backend == "mutant:" + name);
      // The minimal case is the repro's, or, for a state relation's sequence, one of its two.
      BOOST_TEST((to_string(again.problem) == to_string(f.minimal.problem) ||
                  (after && to_string(after->problem) == to_string(f.minimal.problem))));
      if (after) BOOST_TEST(run_unjudged(*mutant, *after) == "");
      const CaseReport rerun = run_case(again, {mutant.get()}, repro_options);
      BOOST_TEST(is_failure(rerun.records.at(0).verdict),
                 "the repro gave " << verdict_name(rerun.records.at(0).verdict) << " ["
                                   << rerun.records.at(0).check << "] "
                                   << rerun.records.at(0).reason);
      // ...and is the mutant's fault: the reference passes the same case (else the oracle is
      // wrong there, and the mutant's own bug was never seen).
      const std::unique_ptr<Backend> reference = Registry::instance().make("reference");
      const BackendRecord ref = run_case(again, {reference.get()}).records.at(0);
      BOOST_TEST(!is_failure(ref.verdict),
                 "the reference fails the minimal case too [" << ref.check << "] " << ref.reason);
      caught += is_failure(rerun.records.at(0).verdict) && !is_failure(ref.verdict);
    }
  }
  std::cout << "mutation score: " << caught << "/" << names.size() << "\n";
  BOOST_TEST(caught == static_cast<int>(names.size()));
}

BOOST_AUTO_TEST_CASE(fuzz_is_deterministic_and_honours_its_limits) {
  const std::unique_ptr<Backend> a = Registry::instance().make("mutant:swap_strides"),
                                 b = Registry::instance().make("mutant:flip_filter");
  FuzzOptions options;
  options.cases = 40;
  options.seed = 7;
  auto run = [&] {
    int64_t progress = 0;
    std::vector<std::string> reported;
    const FuzzSummary s = fuzz(
        {a.get(), b.get()}, options, [&](int64_t done) { progress = done; },
        [&](const FuzzFailure& f) { reported.push_back(f.repro); });
    BOOST_TEST(progress == s.cases);
    BOOST_TEST(reported.size() == s.failures.size());
    std::string text = std::to_string(s.cases);
    for (const FuzzFailure& f : s.failures)
      text += "\n" + f.backend + " " + std::to_string(f.shrink_steps) + " " + f.repro;
    return text;
  };
  const std::string first = run();
  BOOST_TEST(first == run());
  BOOST_TEST(contains(first, "--backends mutant:swap_strides"));
  BOOST_TEST(contains(first, "--backends mutant:flip_filter"));

  // Time mode: `seconds` bounds the run (cases is ignored).
  const std::unique_ptr<Backend> reference = Registry::instance().make("reference");
  options.cases = 1;
  options.seconds = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const FuzzSummary timed = fuzz({reference.get()}, options);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(s < 5.0);
  BOOST_TEST((timed.cases > 1 || !timed.failures.empty()));
}

// ---------------------------------------------------------------------------------------------
// A deliberately failing property, to show what a shrunk counterexample looks like. Disabled: run
// it with `test_properties --run_test=demo_shrunk_failure`.

BOOST_AUTO_TEST_CASE(demo_shrunk_failure, *boost::unit_test::disabled()) {
  const bool passed = rc::check("mutant:same_pad_before passes the oracle", [] {
    const Case c = *gen::any_case();
    const std::unique_ptr<Backend> mutant = Registry::instance().make("mutant:same_pad_before");
    const CaseReport report = run_case(c, {mutant.get()});
    RC_LOG() << to_text(report);
    RC_ASSERT(!is_failure(report.records.at(0).verdict));
  });
  BOOST_TEST(!passed);  // it must fail: the mutant is wrong
}
