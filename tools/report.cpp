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
#include "tools/options.h"

namespace po = boost::program_options;

namespace convcheck::cli {

namespace {

// `report --help`: each of report's commands' synopsis and summary (tools/commands.cpp's help
// table, which each one's own --help prints too).
std::string report_help() {
  std::string o = "usage:";
  for (const char* name : {"report html", "report diff", "report merge"})
    o += std::string(o == "usage:" ? " " : "       ") + "convcheck " +
         synopsis_text(*command_help(name)) + "\n";
  o += "\n";
  for (const char* name : {"report html", "report diff", "report merge"}) {
    const CommandHelp& c = *command_help(name);
    std::string summary = c.summary;
    for (std::size_t nl = summary.find('\n'); nl != std::string::npos;
         nl = summary.find('\n', nl + 1))
      summary.insert(nl + 1, 9, ' ');
    o += "  " + (std::string(c.name).substr(7) + "       ").substr(0, 7) + summary + "\n";
  }
  return o + "\nconvcheck report html|diff|merge --help: that command's options and an example\n";
}

int report_html_cmd(const Args& args) {
  po::options_description desc("report html");
  desc.add_options()("dir", po::value<std::vector<std::string>>(), "a run's --out directory");
  const po::variables_map vm = parse_options("report html", args, desc, "dir", -1);
  if (!vm.count("dir") || vm["dir"].as<std::vector<std::string>>().size() != 1)
    throw InvalidArgument("report html takes one directory (a run's --out)");
  const std::string dir = vm["dir"].as<std::vector<std::string>>()[0];
  const reports::RunDir run = reports::read_run_dir(dir);
  const reports::OutputLock lock(dir, "report html");  // not while a run writes there
  reports::remove_stale_temporaries(dir);
  if (run.truncated_tail)
    std::cerr << "report: " << dir << "/results.jsonl: the last line was cut short; ignored\n";
  reports::write_reports(dir, run.info, run.records);
  std::cout << "report: " << run.records.size() << " records; wrote " << dir
            << "/summary.json, junit.xml, report.html\n";
  return kOk;
}

int report_diff_cmd(const Args& args) {
  po::options_description desc("report diff");
  desc.add_options()("dirs", po::value<std::vector<std::string>>(), "A B")(
      "json", "print the differences as JSON (default: text)");
  const po::variables_map vm = parse_options("report diff", args, desc, "dirs", -1);
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
      "out", po::value<std::string>()->value_name("DIR"),
      "the merged report's directory, empty or new (required)")(
      "allow-partial",
      "write a report marked incomplete when shards are missing or incomplete (default: off, "
      "exit 2 naming them)");
  const po::variables_map vm = parse_options("report merge", args, desc, "dirs", -1);
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
  std::vector<std::string> incomplete, incomplete_why;  // "K/N", "K/N (DIR: R of P pairs)"
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    reports::RunDir run = reports::read_run_dir(dirs[i]);
    const int64_t recorded = static_cast<int64_t>(run.records.size());
    if (!reports::is_complete(run.info, recorded)) {
      const int64_t planned =
          run.info.planned_cases() * static_cast<int64_t>(run.info.backends.size());
      incomplete.push_back(reports::to_string(run.info.shard));
      incomplete_why.push_back(incomplete.back() + " (" + dirs[i] + ": " +
                               std::to_string(recorded) + " of " + std::to_string(planned) +
                               " pairs" + (run.info.interrupted ? ", interrupted" : "") + ")");
    }
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
  if (ns.size() > 1)
    throw InvalidArgument(
        "report merge: the directories mix shard counts; merge shards K/N of one N");
  // Completeness: every shard 1..N of the run present, each with all its pairs.
  std::vector<std::string> missing;
  if (const int64_t n = *ns.begin(); n > 1)
    for (int64_t k = 1; k <= n; ++k)
      if (!shards.count({n, k})) missing.push_back(std::to_string(k) + "/" + std::to_string(n));
  if (!missing.empty() || !incomplete.empty()) {
    std::string what;
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    if (!missing.empty())
      what += "shard" + std::string(missing.size() > 1 ? "s " : " ") + list(missing) + " missing";
    if (!incomplete.empty())
      what += (what.empty() ? "" : "; ") + std::string("incomplete: ") + list(incomplete_why);
    if (!vm.count("allow-partial"))
      throw InvalidArgument("report merge: " + what +
                            ". Merge every shard of the run once each has completed (a shard "
                            "continues with run --resume), or pass --allow-partial for a report "
                            "marked incomplete");
    std::cerr << "report merge: " << what
              << "; the report is marked incomplete (--allow-partial)\n";
    merged.partial = true;
    merged.missing_shards = missing;
    merged.incomplete_shards = incomplete;
  }
  if (whole) {
    merged.shard = reports::Shard{};
  } else {
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
            << (merged.partial ? " (partial: marked incomplete)"
                : whole        ? " (every shard: the whole suite)"
                               : "")
            << "; wrote " << out
            << "/results.jsonl, run.json, summary.json, junit.xml, report.html\n";
  int64_t failing = 0;
  for (const reports::Record& r : sorted) failing += is_failure(r.result.verdict);
  return failing > 0 ? kCheckFailed : kOk;
}

}  // namespace

int cmd_report(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << report_help();  // no command: a usage error
    return args.empty() ? kBadInput : kOk;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "html") return report_html_cmd(rest);
  if (args[0] == "diff") return report_diff_cmd(rest);
  if (args[0] == "merge") return report_merge_cmd(rest);
  const std::string near = nearest(args[0], {"html", "diff", "merge"});
  throw InvalidArgument("unknown report command '" + args[0] + "'" +
                        (near.empty() ? "" : "; did you mean " + near + "?") +
                        " (expected html, diff or merge)");
}

}  // namespace convcheck::cli
