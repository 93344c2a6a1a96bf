// reports/: the JSON reader, results.jsonl records (round trip, a truncated last line, malformed
// lines), the case list (fills, seeds, shards), coverage classes and the conformance suite's
// coverage, summary determinism, JUnit counts, the diff rules (new failures, fixes, bound growth,
// slowdowns beyond the measured noise) and atomic writes.
#define BOOST_TEST_MODULE reports
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "core/json.h"
#include "core/suite.h"
#include "oracle/oracle.h"
#include "reference/reference.h"
#include "reports/diff.h"
#include "reports/render.h"
#include "reports/results.h"
#include "reports/summary.h"

using namespace convcheck;
using namespace convcheck::reports;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/convcheck-test-reports-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

Record record(const std::string& descriptor, const std::string& backend, const std::string& verdict,
              double usage = 0.1, double ms = 2.0, uint64_t seed = 1) {
  Record r;
  r.descriptor = descriptor;
  const Problem p = parse_problem(descriptor);
  r.op = op_name(p.op);
  r.dtype = dtype_name(p.dtype);
  r.format = format_name(p.format);
  r.seed = seed;
  r.fill = FillKind::real;
  r.backend = backend;
  r.result.backend = backend;
  r.result.verdict = parse_verdict(verdict).value();
  r.result.bound_usage = usage;
  r.result.ms = ms;
  r.result.repro = "convcheck check '" + descriptor + "' --backends " + backend;
  return r;
}

std::unique_ptr<Backend> reference_backend() {
  static bool registered = false;
  if (!registered) {
    register_reference_backend(Registry::instance());
    registered = true;
  }
  return Registry::instance().make("reference");
}

RunInfo info_for(const std::vector<std::string>& backends, int64_t cases) {
  RunInfo info;
  info.suite = "test";
  info.suite_path = "test.txt";
  info.suite_cases = cases;
  for (const std::string& b : backends) info.backends.push_back({b, b});
  info.environment = json::Value::object();
  info.environment["cpu"] = "test cpu";
  return info;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(json_reader)

BOOST_AUTO_TEST_CASE(round_trip_and_escapes) {
  const std::string text =
      R"({"a":[1,-2.5,3e3,true,false,null],"s":"q\"\\\n\t\u00e9\ud83d\ude00","o":{}})";
  const json::Value v = json::parse(text);
  BOOST_TEST(json::field(v, "a").size() == 6u);
  BOOST_TEST(json::string_of(v, "s") == "q\"\\\n\t\xc3\xa9\xf0\x9f\x98\x80");
  const json::Value again = json::parse(json::dump(v));
  BOOST_TEST(json::dump(again) == json::dump(v));
  BOOST_TEST(json::number(0.1) == "0.10000000000000001");
  BOOST_TEST(json::number(NAN) == "\"nan\"");
  BOOST_TEST(json::number(-INFINITY) == "\"-inf\"");
}

BOOST_AUTO_TEST_CASE(project_conventions) {
  // Doubles with 17 digits, NaN and infinities as strings read back, integers exact, keys in the
  // order written; the written text is the text read back.
  json::Value o;
  o["z"] = 0.1;
  o["nan"] = std::nan("");
  o["inf"] = -INFINITY;
  o["big"] = int64_t{-9007199254740993};
  o["seed"] = uint64_t{18446744073709551615u};
  o["one"] = 1.0;
  o["negzero"] = -0.0;
  o["list"] = json::Value::array();
  const std::string text = json::dump(o);
  BOOST_TEST(text == R"({"z":0.10000000000000001,"nan":"nan","inf":"-inf","big":-9007199254740993,)"
                     R"("seed":18446744073709551615,"one":1,"negzero":0,"list":[]})");
  const json::Value back = json::parse(text);
  BOOST_TEST(json::dump(back) == text);
  BOOST_TEST(std::isnan(json::number_of(back, "nan")));
  BOOST_TEST(json::number_of(back, "inf") == -INFINITY);
  BOOST_TEST(json::integer_of(back, "big") == -9007199254740993);
  BOOST_TEST(json::unsigned_of(back, "seed") == 18446744073709551615u);
  BOOST_TEST(json::dump(back, 1) ==
             "{\n \"z\": 0.10000000000000001,\n \"nan\": \"nan\",\n \"inf\": "
             "\"-inf\",\n \"big\": -9007199254740993,\n \"seed\": "
             "18446744073709551615,\n \"one\": 1,\n \"negzero\": 0,\n "
             "\"list\": []\n}");
  // Typed access names the key.
  for (auto [what, call] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"field \"missing\" is missing", [&] { json::field(back, "missing"); }},
           {"field \"z\" is not a string", [&] { json::string_of(back, "z"); }},
           {"field \"z\" is not an integer", [&] { json::integer_of(back, "z"); }},
           {"field \"seed\" is out of the 64-bit range", [&] { json::integer_of(back, "seed"); }},
           {"field \"big\" is not a non-negative integer", [&] { json::unsigned_of(back, "big"); }},
           {"field \"list\" is not true or false", [&] { json::bool_of(back, "list"); }},
           {"field \"z\" is not an array", [&] { json::array_of(back, "z"); }}}) {
    try {
      call();
      BOOST_FAIL("no error for " + what);
    } catch (const std::runtime_error& e) {
      BOOST_TEST(std::string(e.what()) == what);
    }
  }
  // Bytes that are not UTF-8 are written as U+FFFD, so the text always parses.
  json::Value bad;
  bad["s"] = std::string(
      "a\xff"
      "b\x01");
  BOOST_TEST(json::dump(bad) ==
             "{\"s\":\"a\xef\xbf\xbd"
             "b\\u0001\"}");
  BOOST_TEST(json::string_of(json::parse(json::dump(bad)), "s") ==
             "a\xef\xbf\xbd"
             "b\x01");
}

BOOST_AUTO_TEST_CASE(errors_name_the_offset) {
  for (const char* bad : {"", "{", "{\"a\":}", "[1,]", "{\"a\" 1}", "\"abc", "tru", "01x",
                          "{\"a\":1} x", "\"\\q\"", "[1 2]"}) {
    BOOST_TEST_CONTEXT(bad) {
      BOOST_CHECK_THROW(json::parse(bad), json::ParseError);
    }
  }
  std::string deep(200, '[');
  BOOST_CHECK_THROW(json::parse(deep), json::ParseError);
  try {
    json::parse("  " + std::string(json::kMaxDepth + 5, '[') +
                std::string(json::kMaxDepth + 5, ']'));
    BOOST_FAIL("no error");
  } catch (const json::ParseError& e) {
    BOOST_TEST(e.offset() == 2u + json::kMaxDepth, e.what());
    BOOST_TEST(std::string(e.what()).find("nested deeper than 64 levels") != std::string::npos);
  }
  BOOST_CHECK_NO_THROW(
      json::parse(std::string(json::kMaxDepth, '[') + std::string(json::kMaxDepth, ']')));
  BOOST_CHECK_THROW(json::parse("[1e400]"), json::ParseError);
  try {
    json::parse("{\"a\": [1, 2,, 3]}");
    BOOST_FAIL("no error");
  } catch (const json::ParseError& e) {
    BOOST_TEST(e.offset() == 12u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(records)

BOOST_AUTO_TEST_CASE(a_case_round_trips_through_jsonl) {
  std::unique_ptr<Backend> ref = reference_backend();
  RunCase rc;
  rc.index = 7;
  rc.c.problem = parse_problem("conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x2,padding=SAME");
  rc.c.seed = 42;
  rc.c.fill = FillKind::real;
  rc.tag = "t\"ag";
  const CaseReport report = run_case(rc.c, {ref.get()});
  const std::vector<Record> rs = records_of(report, rc, {"ref-label"});
  BOOST_TEST_REQUIRE(rs.size() == 1u);
  BOOST_TEST(rs[0].backend == "ref-label");
  BOOST_TEST(rs[0].result.backend == "reference");
  BOOST_TEST((rs[0].result.verdict == Verdict::pass));
  BOOST_TEST(!rs[0].result.metamorphic.empty());
  const std::string line = to_jsonl(rs[0]);
  BOOST_TEST(line.find('\n') == std::string::npos);
  const Record back = parse_record(line);
  BOOST_TEST(to_jsonl(back) == line);
  BOOST_TEST(back.key() == rs[0].key());
  BOOST_TEST(line.find("\"note\"") == std::string::npos, "the reference says nothing: " << line);
  Record noted = rs[0];
  noted.result.note = "bwd_data=ALGO_1, NHWC/KRSC";
  BOOST_TEST(parse_record(to_jsonl(noted)).result.note == noted.result.note);
  for (const char* field :
       {"\"descriptor\"", "\"seed\"", "\"fill\"", "\"backend\"", "\"verdict\"", "\"reason\"",
        "\"bound_usage\"", "\"adjoint\"", "\"residual\"", "\"slack\"", "\"metamorphic\"",
        "\"applicable\"", "\"ms\"", "\"tf_admission\"", "\"repro\"", "\"first_offender\""}) {
    BOOST_TEST(line.find(field) != std::string::npos, field);
  }
}

// nan_footprint's counts survive the JSON (they were dropped before 2026-11-27: a record read
// back said 0 and 0); a relation without them writes neither field.
BOOST_AUTO_TEST_CASE(nan_footprint_counts_round_trip) {
  Record r = record("conv2d:input=1x3x3x1,filter=2x2x1x1", "plugin:x", "fail");
  RelationResult spread;
  spread.name = "metamorphic:nan_footprint";
  spread.passed = false;
  spread.detail =
      "NaN at input element 2: ... (3 NaN results no term connects, 1 connected "
      "results not NaN)";
  spread.nan_extra = 3;
  spread.nan_missing = 1;
  RelationResult other;
  other.name = "metamorphic:format";
  r.result.metamorphic = {other, spread};
  const std::string line = to_jsonl(r);
  BOOST_TEST(line.find("\"nan_extra\":3,\"nan_missing\":1") != std::string::npos, line);
  BOOST_TEST(line.find("nan_extra") == line.rfind("nan_extra"), "one relation has them: " << line);
  const Record back = parse_record(line);
  BOOST_TEST_REQUIRE(back.result.metamorphic.size() == 2u);
  BOOST_TEST(back.result.metamorphic[1].nan_extra == 3);
  BOOST_TEST(back.result.metamorphic[1].nan_missing == 1);
  BOOST_TEST(back.result.metamorphic[0].nan_extra == 0);
  BOOST_TEST(to_jsonl(back) == line);
  // A negative count is a malformed record, not a count.
  std::string bad = line;
  bad.replace(bad.find("\"nan_missing\":1"), 15, "\"nan_missing\":-1");
  BOOST_CHECK_THROW(parse_record(bad), std::exception);
}

BOOST_AUTO_TEST_CASE(truncated_last_line_is_ignored) {
  TempDir t;
  const std::string a =
      to_jsonl(record("conv2d:input=1x3x3x1,filter=2x2x1x1", "reference", "pass"));
  const std::string b =
      to_jsonl(record("conv2d:input=1x4x3x1,filter=2x2x1x1", "reference", "fail", 3.0));
  write(t.file("r.jsonl"), a + "\n" + b + "\n" + b.substr(0, b.size() / 2));
  const ReadResult r = read_results(t.file("r.jsonl"));
  BOOST_TEST(r.records.size() == 2u);
  BOOST_TEST(r.truncated_tail);
  BOOST_TEST(r.valid_bytes == a.size() + b.size() + 2);
  // A complete last record without its newline is kept.
  write(t.file("s.jsonl"), a + "\n" + b);
  const ReadResult s = read_results(t.file("s.jsonl"));
  BOOST_TEST(s.records.size() == 2u);
  BOOST_TEST(!s.truncated_tail);
  // A missing file reads as empty.
  BOOST_TEST(read_results(t.file("none.jsonl")).records.empty());
}

BOOST_AUTO_TEST_CASE(malformed_line_names_file_and_line) {
  TempDir t;
  const std::string a =
      to_jsonl(record("conv2d:input=1x3x3x1,filter=2x2x1x1", "reference", "pass"));
  std::string bad_verdict = a;
  bad_verdict.replace(bad_verdict.find("\"pass\""), 6, "\"maybe\"");
  for (const std::string& bad : {std::string("{not json"), std::string("[1,2]"), bad_verdict,
                                 a.substr(0, a.find(",\"seed\"")) + "}"}) {
    write(t.file("r.jsonl"), a + "\n" + bad + "\n" + a + "\n");
    try {
      read_results(t.file("r.jsonl"));
      BOOST_FAIL("no error for " + bad);
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find(t.file("r.jsonl") + ":2: malformed record") != std::string::npos, what);
    }
  }
}

BOOST_AUTO_TEST_CASE(record_reader_keeps_values_and_messages) {
  // parse_record reads with simdjson (core/json_reader.h): the values and every message are
  // those of the nlohmann reader it replaced.
  Record r = record("conv2d:input=1x3x3x1,filter=2x2x1x1", "reference", "fail", NAN, INFINITY,
                    18446744073709551615u);
  r.result.first = Offender{{0, -1, 2, 3}, 5, -0.1, 2.0, 0.5};
  const std::string a = to_jsonl(r);
  const Record back = parse_record(a);
  BOOST_TEST(to_jsonl(back) == a);
  BOOST_TEST(back.seed == 18446744073709551615u);
  BOOST_TEST(std::isnan(back.result.bound_usage));
  BOOST_TEST(back.result.ms == INFINITY);
  auto message = [](const std::string& line) -> std::string {
    try {
      parse_record(line);
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string line = a;
    const std::size_t at = line.find(from);
    BOOST_TEST_REQUIRE(at != std::string::npos, from);
    return line.replace(at, from.size(), to);
  };
  const std::string kind =
      "\"cpu\":{\"kind\":\"" + std::string(admission_kind_name(r.admission.cpu.kind)) + "\"";
  for (auto [line, what] : std::vector<std::pair<std::string, std::string>>{
           {with("\"seed\":18446744073709551615", "\"seed\":-1"),
            "field \"seed\" is not a non-negative integer"},
           {with("\"case\":0", "\"case\":9223372036854775808"),
            "field \"case\" is out of the 64-bit range"},
           {with("\"case\":0", "\"case\":1.5"), "field \"case\" is not an integer"},
           {with("\"case\":0", "\"case\":\"0\""), "field \"case\" is not an integer"},
           {with("\"ms\":", "\"mz\":"), "field \"ms\" is missing"},
           {with("\"bound_usage\":\"nan\"", "\"bound_usage\":\"x\""),
            "field \"bound_usage\" is not a number"},
           {with("\"tag\":\"\"", "\"tag\":null"), "field \"tag\" is not a string"},
           {with("\"adjoint\":[]", "\"adjoint\":{}"), "field \"adjoint\" is not an array"},
           {with("\"adjoint\":[]", "\"adjoint\":[{\"name\":\"x\",\"applicable\":1}]"),
            "field \"applicable\" is not true or false"},
           {with("\"coord\":[0,-1,2,3]", "\"coord\":[0,-1,2]"),
            "field \"first_offender.coord\" is not an array of 4 integers"},
           {with("\"coord\":[0,-1,2,3]", "\"coord\":[0,-1,2,9223372036854775808]"),
            "field \"first_offender.coord\" is not an array of 4 integers"},
           {with(kind, "\"cpu\":{\"kind\":\"maybe\""),
            "field \"tf_admission.cpu.kind\": unknown kind 'maybe'"},
           {with("\"fill\":\"real\"", "\"fill\":\"wet\""), "field \"fill\": unknown fill 'wet'"},
           {"[1]", "not a JSON object"}}) {
    BOOST_TEST(message(line) == what);
  }
  // Syntax errors are json::parse's own, byte offset and words.
  for (const std::string& bad :
       {a.substr(0, a.size() / 2), with("\"case\":0", "\"case\":0,"),
        with("\"tag\":\"\"", "\"tag\":\"\t\""), with("\"tag\":\"\"", "\"tag\":\"\xff\""), a + " x",
        std::string("{\"a\":1e400}")}) {
    std::string expected;
    try {
      json::parse(bad);
    } catch (const json::ParseError& e) {
      expected = e.what();
    }
    BOOST_TEST(!expected.empty());
    BOOST_TEST(message(bad) == expected);
  }
  // A key given twice: the last wins, as in nlohmann.
  BOOST_TEST((parse_record(a.substr(0, a.size() - 1) + ",\"verdict\":\"pass\"}").result.verdict ==
              Verdict::pass));
  // A byte order mark at the start is skipped; nesting stops at json::kMaxDepth levels.
  BOOST_TEST(to_jsonl(parse_record("\xef\xbb\xbf" + a)) == a);
  auto nested = [&](int levels) {
    return a.substr(0, a.size() - 1) + ",\"x\":" + std::string(levels - 1, '[') +
           std::string(levels - 1, ']') + "}";
  };
  BOOST_TEST(message(nested(json::kMaxDepth)) == "");
  // simdjson counts a number as a level, nlohmann does not.
  BOOST_TEST(message(a.substr(0, a.size() - 1) + ",\"x\":" + std::string(json::kMaxDepth - 1, '[') +
                     "5" + std::string(json::kMaxDepth - 1, ']') + "}") == "");
  BOOST_TEST(message(nested(json::kMaxDepth + 1)).find("nested deeper than 64 levels") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(duplicates_agreeing_are_kept_once_disagreeing_are_an_error) {
  const Record a = record("conv2d:input=1x3x3x1,filter=2x2x1x1", "reference", "pass");
  BOOST_TEST(deduplicate({a, a}, "x").size() == 1u);
  Record b = a;
  b.result.verdict = Verdict::fail;
  BOOST_CHECK_THROW(deduplicate({a, b}, "x"), InvalidArgument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cases)

BOOST_AUTO_TEST_CASE(fills_seeds_and_shards) {
  const Suite s = parse_suite(
      "conv2d:input=1x3x3x1,filter=2x2x1x1 --tag a\n"
      "conv2d:input=1x4x4x1,filter=2x2x1x1 --fill special\n"
      "conv2d:input=1x3x3x1,filter=2x2x1x1 --tag again\n",
      "t.txt");
  const std::vector<RunCase> cs = suite_cases(s);
  BOOST_TEST_REQUIRE(cs.size() == 5u);  // exact, real; special; exact, real
  BOOST_TEST(fill_name(cs[0].c.fill) == std::string("exact"));
  BOOST_TEST(fill_name(cs[1].c.fill) == std::string("real"));
  BOOST_TEST(fill_name(cs[2].c.fill) == std::string("special"));
  BOOST_TEST(cs[0].tag == "a");
  // A seed depends on the line's content, not its position; a repeated line gets another seed.
  const Suite moved = parse_suite(
      "# a comment first\nconv2d:input=1x4x4x1,filter=2x2x1x1 --fill special\n"
      "conv2d:input=1x3x3x1,filter=2x2x1x1\n",
      "u.txt");
  const std::vector<RunCase> ms = suite_cases(moved);
  BOOST_TEST(ms[0].c.seed == cs[2].c.seed);
  BOOST_TEST(ms[1].c.seed == cs[0].c.seed);
  BOOST_TEST(cs[3].c.seed != cs[0].c.seed);
  BOOST_TEST(cs[0].c.seed <= 0xffffffffull);
  // Shards partition the cases.
  for (int n : {1, 2, 3, 7}) {
    std::vector<int> owner(cs.size(), 0);
    for (int k = 1; k <= n; ++k)
      for (const RunCase& c : cs)
        if (Shard{k, n}.takes(c.index)) ++owner[c.index];
    for (int o : owner) BOOST_TEST(o == 1);
  }
  BOOST_CHECK_THROW(parse_shard("0/3"), InvalidArgument);
  BOOST_CHECK_THROW(parse_shard("4/3"), InvalidArgument);
  BOOST_CHECK_THROW(parse_shard("1/"), InvalidArgument);
  BOOST_CHECK_THROW(parse_shard("a/b"), InvalidArgument);
  BOOST_TEST(parse_shard("2/3").k == 2);
  BOOST_CHECK_THROW(
      suite_cases(parse_suite("conv2d:input=1x3x3x1,filter=2x2x1x1 --fill odd\n", "v.txt")),
      InvalidArgument);
}

BOOST_AUTO_TEST_CASE(classes_of_problems) {
  auto has = [](const char* d, const char* cls) {
    const std::vector<std::string> c = classes_of(parse_problem(d));
    return std::find(c.begin(), c.end(), cls) != c.end();
  };
  BOOST_TEST(has("conv2d:input=1x5x5x1,filter=1x1x1x1,stride=2x2", "stride_gt_filter"));
  BOOST_TEST(!has("conv2d:input=1x5x5x1,filter=2x2x1x1,stride=2x2", "stride_gt_filter"));
  BOOST_TEST(has("conv2d:input=1x5x5x1,filter=2x2x1x1,padding=SAME", "same_odd_padding"));
  BOOST_TEST(!has("conv2d:input=1x5x5x1,filter=3x3x1x1,padding=SAME", "same_odd_padding"));
  BOOST_TEST(has("conv2d:input=1x5x5x1,filter=2x2x1x1,padding=2:0:0:0", "explicit_pad_gt_extent"));
  BOOST_TEST(!has("conv2d:input=1x5x5x1,filter=3x3x1x1,padding=2:2:2:2", "explicit_pad_gt_extent"));
  BOOST_TEST(
      has("conv2d:input=1x9x9x1,filter=2x2x1x1,stride=2x2,dilation=2x2", "stride_and_dilation"));
  BOOST_TEST(has("conv2d:input=1x5x5x4,filter=2x2x2x2", "groups_gt_1"));
  BOOST_TEST(has("depthwise_conv2d:input=1x5x5x2,filter=2x2x2x3", "multiplier_gt_1"));
  BOOST_TEST(has("conv2d_backprop_filter:input=0x5x5x2,filter=2x2x2x3", "empty"));
  BOOST_TEST(has("conv2d:input=1x5x5x2,filter=2x2x2x3,format=NCHW,dtype=bf16", "dtype_bf16"));
  BOOST_TEST(!class_applies("groups_gt_1", Op::depthwise_conv2d));
  BOOST_TEST(!class_applies("dtype_i32", Op::conv2d_backprop_filter));
}

// The conformance suite covers every class for every op that admits it (issue 6).
BOOST_AUTO_TEST_CASE(conformance_suite_covers_every_class_for_every_op) {
  const Suite s = read_suite("conformance");
  BOOST_TEST(s.entries.size() >= 450u);
  std::map<std::pair<std::string, std::string>, int> count;
  for (const SuiteEntry& e : s.entries)
    for (const std::string& c : classes_of(e.problem)) ++count[{c, op_name(e.problem.op)}];
  for (const CoverageClass& c : coverage_classes()) {
    for (Op op : kAllOps) {
      if (!class_applies(c.name, op)) continue;
      const int n = count[std::make_pair(c.name, std::string(op_name(op)))];
      BOOST_TEST(n >= 1, c.name << " has no " << op_name(op) << " case");
    }
  }
  // The smoke suite: every op, dtype, format and padding kind.
  const Suite smoke = read_suite("smoke");
  std::set<std::string> seen;
  for (const SuiteEntry& e : smoke.entries) {
    seen.insert(op_name(e.problem.op));
    seen.insert(dtype_name(e.problem.dtype));
    seen.insert(format_name(e.problem.format));
    seen.insert("padding" + std::to_string(static_cast<int>(e.problem.padding.kind)));
  }
  for (Op op : kAllOps) BOOST_TEST(seen.count(op_name(op)) == 1u, op_name(op));
  for (DType t : kAllDTypes) BOOST_TEST(seen.count(dtype_name(t)) == 1u, dtype_name(t));
  for (const char* x : {"NHWC", "NCHW", "padding0", "padding1", "padding2"})
    BOOST_TEST(seen.count(x) == 1u, x);
  // Every regression carries its why.
  for (const SuiteEntry& e : read_suite("regressions").entries)
    BOOST_TEST(!e.tag.empty(), "line " << e.line << " has no tag");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(summary_and_junit)

BOOST_AUTO_TEST_CASE(summary_does_not_depend_on_record_order_or_times) {
  std::vector<Record> rs;
  int i = 0;
  for (const char* d :
       {"conv2d:input=1x3x3x1,filter=2x2x1x1", "conv2d:input=1x4x4x2,filter=2x2x1x2",
        "depthwise_conv2d:input=1x4x4x2,filter=2x2x2x3,dtype=f16"}) {
    for (const char* b : {"reference", "optimized"}) {
      rs.push_back(record(d, b, i % 3 == 0 ? "fail" : "pass", 0.1, 1.0 + i));
      rs.back().case_index = i / 2;
      ++i;
    }
  }
  const RunInfo info = info_for({"reference", "optimized"}, 3);
  const std::string a = summary_json(info, rs);
  std::vector<Record> shuffled = rs;
  std::mt19937 g(3);
  std::shuffle(shuffled.begin(), shuffled.end(), g);
  for (Record& r : shuffled) r.result.ms *= 2;
  BOOST_TEST(summary_json(info, shuffled) == a);
  const json::Value s = json::parse(a);
  BOOST_TEST(json::integer_of(json::field(s, "verdicts"), "fail") == 2);
  BOOST_TEST(json::bool_of(s, "complete"));
  // A shard plans only its cases.
  RunInfo shard = info;
  shard.shard = Shard{2, 2};
  BOOST_TEST(shard.planned_cases() == 1);
}

BOOST_AUTO_TEST_CASE(junit_counts_are_consistent) {
  std::vector<Record> rs = {record("conv2d:input=1x3x3x1,filter=2x2x1x1", "reference", "pass"),
                            record("conv2d:input=1x3x3x1,filter=2x2x1x1", "optimized", "fail"),
                            record("conv2d:input=1x3x3x1,filter=2x2x1x1", "onednn", "unsupported"),
                            record("conv2d:input=1x4x4x1,filter=2x2x1x1", "optimized", "crashed"),
                            record("conv2d:input=1x4x4x1,filter=2x2x1x1", "onednn", "mistrusted")};
  rs[1].result.reason = "<&\"'> \x01 wrong";
  const std::string x = junit_xml(info_for({"reference", "optimized", "onednn"}, 2), rs);
  BOOST_TEST(x.find("<testsuites name=\"convcheck run test\" tests=\"5\" failures=\"1\" "
                    "errors=\"1\" skipped=\"2\"") != std::string::npos);
  BOOST_TEST(x.find("&lt;&amp;&quot;&apos;&gt; ? wrong") != std::string::npos);
  BOOST_TEST(x.find("<testsuite name=\"onednn\" tests=\"2\" failures=\"0\" errors=\"0\" "
                    "skipped=\"2\"") != std::string::npos);
  BOOST_TEST(x.find('\x01') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(junit_offenders_say_what_passes_where_the_exact_value_is_not_finite) {
  // The oracle's wording (oracle.h exact_and_bound): a bound only for a finite exact value, and
  // a NaN got printed without a sign.
  std::vector<Record> rs = {record("conv2d:input=1x3x3x1,filter=2x2x1x1", "a", "fail"),
                            record("conv2d:input=1x3x3x1,filter=2x2x1x1", "b", "fail"),
                            record("conv2d:input=1x3x3x1,filter=2x2x1x1", "c", "fail")};
  rs[0].result.first = Offender{{0, 0, 0, 0}, 0, NAN, 1.0, NAN};
  rs[1].result.first = Offender{{0, 0, 0, 1}, 1, -INFINITY, 1.0, NAN};
  rs[2].result.first = Offender{{0, 0, 1, 0}, 2, 0.5, -NAN, 0.25};
  const std::string x = junit_xml(info_for({"a", "b", "c"}, 1), rs);
  BOOST_TEST(x.find("(index 0): got 1, exact nan (any NaN passes)") != std::string::npos, x);
  BOOST_TEST(x.find("(index 1): got 1, exact -inf (only -inf passes)") != std::string::npos, x);
  BOOST_TEST(x.find("(index 2): got nan, exact 0.5, bound 0.25") != std::string::npos, x);
  BOOST_TEST(x.find("-nan") == std::string::npos, x);
  BOOST_TEST(x.find("bound nan") == std::string::npos, x);
}

BOOST_AUTO_TEST_CASE(atomic_write_and_unwritable_directory) {
  TempDir t;
  write_file_atomic(t.file("a.txt"), "one");
  write_file_atomic(t.file("a.txt"), "two");
  std::ifstream f(t.file("a.txt"));
  std::string s;
  f >> s;
  BOOST_TEST(s == "two");
  int leftovers = 0;
  for (const auto& e : fs::directory_iterator(t.path)) leftovers += e.path().filename() != "a.txt";
  BOOST_TEST(leftovers == 0);
  BOOST_CHECK_THROW(write_file_atomic(t.file("no/such/dir/a.txt"), "x"), InvalidArgument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(diff_rules)

BOOST_AUTO_TEST_CASE(new_failures_fixes_and_bound_growth) {
  const char* d1 = "conv2d:input=1x3x3x1,filter=2x2x1x1";
  const char* d2 = "conv2d:input=1x4x4x1,filter=2x2x1x1";
  const char* d3 = "conv2d:input=1x5x5x1,filter=2x2x1x1";
  const char* d4 = "conv2d:input=1x6x6x1,filter=2x2x1x1";
  const std::vector<Record> a = {record(d1, "x", "pass"), record(d2, "x", "fail"),
                                 record(d3, "x", "pass", 0.2), record(d4, "x", "pass", 0.3)};
  const std::vector<Record> b = {record(d1, "x", "crashed"), record(d2, "x", "pass"),
                                 record(d3, "x", "pass", 0.6), record(d4, "x", "pass", 0.5)};
  const DiffResult r = diff(a, b);
  BOOST_TEST(r.new_failures.size() == 1u);
  BOOST_TEST(r.fixed.size() == 1u);
  BOOST_TEST(r.bound_growth.size() == 1u);  // 0.2 -> 0.6; 0.3 -> 0.5 is not 2x
  BOOST_TEST(r.regression());
  BOOST_TEST(!diff(a, a).regression());
  const json::Value j = json::parse(diff_json(r, "A", "B"));
  BOOST_TEST(json::bool_of(j, "regression"));
}

// Timings: 40 cases per op with +-10% multiplicative noise. A planted 1.6x slowdown of one op is
// flagged; the noise alone is not; cases under 1 ms are not judged.
BOOST_AUTO_TEST_CASE(slowdowns_beyond_the_measured_noise) {
  std::mt19937 g(11);
  std::uniform_real_distribution<double> noise(0.9, 1.1);
  std::vector<Record> a, b, b_slow, a_tiny, b_tiny;
  for (int i = 0; i < 40; ++i) {
    for (const char* op : {"conv2d:input=1x%dx5x1,filter=2x2x1x1",
                           "conv2d_backprop_input:input=1x%dx5x1,filter=2x2x1x1"}) {
      char d[128];
      std::snprintf(d, sizeof d, op, 3 + i);
      const double base = 2 + i * 0.5;
      a.push_back(record(d, "x", "pass", 0.1, base * noise(g)));
      b.push_back(record(d, "x", "pass", 0.1, base * noise(g)));
      const bool slow = std::string(op).rfind("conv2d_backprop_input", 0) == 0;
      b_slow.push_back(record(d, "x", "pass", 0.1, base * noise(g) * (slow ? 1.6 : 1.0)));
      a_tiny.push_back(record(d, "x", "pass", 0.1, 0.01));
      b_tiny.push_back(record(d, "x", "pass", 0.1, 0.05));
    }
  }
  const DiffResult clean = diff(a, b);
  BOOST_TEST(clean.perf.size() == 2u);
  BOOST_TEST(clean.slower_groups() == 0);
  BOOST_TEST(!clean.regression());
  const DiffResult slow = diff(a, b_slow);
  BOOST_TEST(slow.slower_groups() == 1);
  for (const PerfGroup& p : slow.perf)
    BOOST_TEST((p.change == PerfGroup::Change::slower) == (p.op == "conv2d_backprop_input"));
  BOOST_TEST(slow.regression());
  const DiffResult tiny = diff(a_tiny, b_tiny);
  BOOST_TEST(tiny.perf.empty());
  BOOST_TEST(!tiny.regression());
}

// A backend that says it ran something else in B (its note: cuDNN's algorithm, oneDNN's
// implementation) is counted per (A's note, B's note), named beside a listed change, and is
// neither a regression nor an improvement; runs whose notes agree show no such section.
BOOST_AUTO_TEST_CASE(implementation_changes_are_counted_and_named) {
  const char* d[] = {"conv2d:input=1x3x3x1,filter=2x2x1x1", "conv2d:input=1x4x4x1,filter=2x2x1x1",
                     "conv2d:input=1x5x5x1,filter=2x2x1x1", "conv2d:input=1x6x6x1,filter=2x2x1x1",
                     "conv2d:input=1x7x7x1,filter=2x2x1x1"};
  auto noted = [](Record r, const char* note) {
    r.result.note = note;
    return r;
  };
  const std::vector<Record> a = {
      noted(record(d[0], "x", "pass"), "algo 1"), noted(record(d[1], "x", "pass"), "algo 1"),
      noted(record(d[2], "x", "pass"), "algo 1"), noted(record(d[3], "y", "pass"), ""),
      noted(record(d[4], "x", "pass"), "algo 1")};
  // (d[4]: declined in B, so it says nothing there: not an implementation change.)
  const std::vector<Record> b = {
      noted(record(d[0], "x", "pass"), "algo 0"), noted(record(d[1], "x", "fail"), "algo 0"),
      noted(record(d[2], "x", "pass"), "algo 1"), noted(record(d[3], "y", "pass"), "jit:avx2"),
      noted(record(d[4], "x", "unsupported"), "")};
  const DiffResult r = diff(a, b);
  BOOST_TEST_REQUIRE(r.implementations.size() == 2u);
  BOOST_TEST(r.implementations[0].backend == "x");
  BOOST_TEST(r.implementations[0].a == "algo 1");
  BOOST_TEST(r.implementations[0].b == "algo 0");
  BOOST_TEST(r.implementations[0].pairs == 2);
  BOOST_TEST(r.implementations[1].backend == "y");
  BOOST_TEST(r.implementations[1].a == "");
  BOOST_TEST(r.implementations[1].pairs == 1);
  const std::string text = diff_text(r, "A", "B");
  BOOST_TEST(text.find("IMPLEMENTATION CHANGES") != std::string::npos, text);
  BOOST_TEST(text.find("x                   2  'algo 1' -> 'algo 0'") != std::string::npos, text);
  BOOST_TEST(text.find("y                   1  (nothing) -> 'jit:avx2'") != std::string::npos,
             text);
  BOOST_TEST(text.find("ran: A 'algo 1', B 'algo 0'") != std::string::npos, text);  // the failure
  const json::Value j = json::parse(diff_json(r, "A", "B"));
  BOOST_TEST(j["implementation_changes"].size() == 2u);
  BOOST_TEST(json::string_of(j["new_failures"][0]["a"], "note") == "algo 1");
  BOOST_TEST(json::string_of(j["new_failures"][0]["b"], "note") == "algo 0");
  // Only the new failure is a regression: the changed implementations alone are not.
  std::vector<Record> b_pass = b;
  b_pass[1] = noted(record(d[1], "x", "pass"), "algo 0");
  b_pass[4] = noted(record(d[4], "x", "pass"), "algo 1");
  BOOST_TEST(!diff(a, b_pass).regression());
  BOOST_TEST(diff(a, a).implementations.empty());
  BOOST_TEST(diff_text(diff(a, a), "A", "A").find("IMPLEMENTATION") == std::string::npos);
}

// report.html carries what the backend said it ran with an opened failure's details.
BOOST_AUTO_TEST_CASE(an_opened_failure_says_what_ran) {
  Record r = record("conv2d:input=1x3x3x1,filter=2x2x1x1", "x", "fail");
  r.result.note = "bwd_data=ALGO_1, NHWC/KRSC";
  const std::string page = report_html(info_for({"x"}, 1), {r});
  BOOST_TEST(page.find("\"n\":\"bwd_data=ALGO_1, NHWC/KRSC\"") != std::string::npos);
  r.result.note.clear();
  BOOST_TEST(report_html(info_for({"x"}, 1), {r}).find("\"n\":") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
