// `convcheck report html|diff|merge` (design §8, issue 6): work on run directories written by
// `convcheck run` (reports/).
//
//   convcheck report html DIR               re-renders summary.json, junit.xml and report.html
//                                           (and run.json) from DIR/results.jsonl and run.json
//   convcheck report diff A B [--json]      new failures, fixes, bound-usage growth and slowdowns
//                                           beyond noise from run A to run B (reports/diff.h);
//                                           exit 1 on a regression, 0 otherwise, 2 bad input
//   convcheck report merge DIR... --out DIR  joins shard directories of one suite and backend set
//                                           into one report; a (case, backend) pair recorded
//                                           twice is kept once when the verdicts agree, an error
//                                           when they do not
#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <set>

#include "core/error.h"
#include "core/json.h"
#include "reports/diff.h"
#include "reports/render.h"
#include "reports/results.h"
#include "reports/summary.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace convcheck::cli {

namespace {

const char* kReportHelp =
    "usage: convcheck report html DIR\n"
    "       convcheck report diff A B [--json]\n"
    "       convcheck report merge DIR... --out DIR\n"
    "\n"
    "  html   re-render summary.json, junit.xml and report.html from DIR/results.jsonl\n"
    "  diff   compare run B with run A (records matched by descriptor, seed, fill, backend):\n"
    "         new failures, fixed cases, bound usage grown > 2x and > 0.5, and per backend and\n"
    "         op a median slowdown beyond the run-to-run noise measured from the per-case\n"
    "         spread; exit 1 on a regression, 0 otherwise\n"
    "  merge  join the directories of `run --shard K/N` runs into one report in --out\n";

int report_html_cmd(const Args& args) {
  if (args.size() != 1) throw InvalidArgument("report html takes one directory (a run's --out)");
  const reports::RunDir run = reports::read_run_dir(args[0]);  // names a missing directory
  const reports::OutputLock lock(args[0], "report html");      // not while a run writes there
  reports::remove_stale_temporaries(args[0]);
  if (run.truncated_tail)
    std::cerr << "report: " << args[0] << "/results.jsonl: the last line was cut short; ignored\n";
  reports::write_reports(args[0], run.info, run.records);
  std::cout << "report: " << run.records.size() << " records; wrote " << args[0]
            << "/summary.json, junit.xml, report.html\n";
  return kOk;
}

int report_diff_cmd(const Args& args) {
  po::options_description desc("report diff");
  desc.add_options()("dirs", po::value<std::vector<std::string>>(), "A B")("json", "JSON output");
  po::positional_options_description pos;
  pos.add("dirs", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  po::notify(vm);
  const std::vector<std::string> dirs =
      vm.count("dirs") ? vm["dirs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (dirs.size() != 2) throw InvalidArgument("report diff takes two run directories, A and B");
  const reports::RunDir a = reports::read_run_dir(dirs[0]);
  const reports::RunDir b = reports::read_run_dir(dirs[1]);
  const reports::DiffResult d = reports::diff(a.records, b.records);
  std::cout << (vm.count("json") ? reports::diff_json(d, dirs[0], dirs[1])
                                 : reports::diff_text(d, dirs[0], dirs[1]));
  return d.regression() ? kCheckFailed : kOk;
}

int report_merge_cmd(const Args& args) {
  po::options_description desc("report merge");
  desc.add_options()("dirs", po::value<std::vector<std::string>>(), "shard directories")(
      "out", po::value<std::string>(), "merged report directory");
  po::positional_options_description pos;
  pos.add("dirs", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  po::notify(vm);
  if (!vm.count("dirs")) throw InvalidArgument("report merge: no directory to merge");
  if (!vm.count("out")) throw InvalidArgument("report merge: missing --out DIR");
  const std::vector<std::string> dirs = vm["dirs"].as<std::vector<std::string>>();
  const std::string out = vm["out"].as<std::string>();
  // --out first: not into a directory a run or another merge is writing (exit 2 naming it).
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InvalidArgument("--out " + out + ": cannot create the directory: " + ec.message());
  const reports::OutputLock lock(out, "report merge");
  reports::remove_stale_temporaries(out);

  reports::RunInfo merged;
  std::vector<reports::Record> records;
  std::set<std::pair<int64_t, int64_t>> shards;
  auto backends_of = [](const reports::RunInfo& r) {
    std::string s;
    for (const reports::BackendLabel& b : r.backends)
      s += (s.empty() ? "" : ",") + b.name +
           (b.name == b.implementation ? "" : "=" + b.implementation);
    return s;
  };
  std::vector<json::Value> other_environments;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    reports::RunDir run = reports::read_run_dir(dirs[i]);
    if (run.truncated_tail)
      std::cerr << "report merge: " << dirs[i] << "/results.jsonl: last line cut short; ignored\n";
    if (i == 0) {
      merged = run.info;
      merged.merged_shards.clear();
    } else {
      auto differs = [&](const char* what, const std::string& first, const std::string& now) {
        if (first != now)
          throw InvalidArgument("report merge: " + dirs[i] + " is a run with " + what + " " + now +
                                ", " + dirs[0] + " with " + first + ": not shards of one run");
      };
      differs("suite", merged.suite, run.info.suite);
      differs("suite size", std::to_string(merged.suite_cases),
              std::to_string(run.info.suite_cases));
      differs("backends", backends_of(merged), backends_of(run.info));
      if (json::dump(run.info.environment) != json::dump(merged.environment))
        other_environments.push_back(run.info.environment);
      merged.started = std::min(merged.started, run.info.started);
      merged.finished = std::max(merged.finished, run.info.finished);
      merged.elapsed_s += run.info.elapsed_s;
      merged.interrupted = merged.interrupted || run.info.interrupted;
    }
    const std::vector<reports::Shard> parts = run.info.merged_shards.empty()
                                                  ? std::vector<reports::Shard>{run.info.shard}
                                                  : run.info.merged_shards;
    for (const reports::Shard& s : parts) shards.insert({s.n, s.k});
    for (reports::Record& r : run.records) records.push_back(std::move(r));
  }
  if (!other_environments.empty()) {
    std::cerr << "report merge: the shards ran in " << other_environments.size() + 1
              << " different environments; summary.json lists the others\n";
    json::Value list = other_environments;
    merged.environment["other_shard_environments"] = list;
  }
  records = reports::deduplicate(std::move(records), "report merge");
  // The shards this report covers; all N shards of one N cover the suite, like an unsharded run.
  merged.merged_shards.clear();
  std::set<int64_t> ns;
  for (const auto& [n, k] : shards) ns.insert(n);
  bool whole = ns.size() == 1;
  if (whole) {
    const int64_t n = *ns.begin();
    for (int64_t k = 1; k <= n; ++k) whole = whole && shards.count({n, k});
  }
  if (whole) {
    merged.shard = reports::Shard{};
  } else {
    if (ns.size() > 1) {
      throw InvalidArgument(
          "report merge: the directories mix shard counts; merge shards K/N of one N");
    }
    for (const auto& [n, k] : shards) merged.merged_shards.push_back(reports::Shard{k, n});
    merged.shard = merged.merged_shards.front();
  }
  merged.command = "convcheck report merge";
  for (const std::string& d : dirs) merged.command += " " + d;
  merged.command += " --out " + out;

  if (std::filesystem::exists(out + "/results.jsonl") &&
      std::filesystem::file_size(out + "/results.jsonl", ec) > 0)
    throw InvalidArgument("--out " + out +
                          " already holds a results.jsonl: choose an empty directory");
  const std::vector<reports::Record> sorted = reports::sorted_records(records, merged);
  std::string lines;
  for (const reports::Record& r : sorted) lines += reports::to_jsonl(r) + "\n";
  reports::write_file_atomic(out + "/results.jsonl", lines);
  reports::write_reports(out, merged, sorted);
  std::cout << "report merge: " << dirs.size() << " directories, " << sorted.size() << " records"
            << (whole ? " (every shard: the whole suite)" : "") << "; wrote " << out
            << "/results.jsonl, run.json, summary.json, junit.xml, report.html\n";
  int64_t failing = 0;
  for (const reports::Record& r : sorted) failing += is_failure(r.result.verdict);
  return failing > 0 ? kCheckFailed : kOk;
}

}  // namespace

int cmd_report(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kReportHelp;
    return args.empty() ? kBadInput : kOk;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "html") return report_html_cmd(rest);
  if (args[0] == "diff") return report_diff_cmd(rest);
  if (args[0] == "merge") return report_merge_cmd(rest);
  throw InvalidArgument("unknown report command '" + args[0] + "' (expected html, diff or merge)");
}

}  // namespace convcheck::cli
