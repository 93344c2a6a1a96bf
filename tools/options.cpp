#include "tools/options.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/cpu.h"
#include "core/error.h"
#include "optimized/dispatch.h"
#include "reports/build_info.h"

namespace po = boost::program_options;

namespace convcheck::cli {

namespace {

constexpr std::size_t kWidth = 100;      // help lines wrap here
constexpr std::size_t kDescColumn = 28;  // option descriptions start here

// `text` wrapped at kWidth, every line after the first indented by `indent` (the first starts
// at column `first`). Explicit newlines are kept.
std::string wrap(const std::string& text, std::size_t first, std::size_t indent) {
  std::string out;
  std::size_t column = first;
  std::istringstream lines(text);
  std::string line;
  bool first_line = true;
  while (std::getline(lines, line)) {
    if (!first_line) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    }
    first_line = false;
    std::istringstream words(line);
    std::string word;
    bool line_start = true;
    while (words >> word) {
      if (!line_start && column + 1 + word.size() > kWidth) {
        out += "\n" + std::string(indent, ' ');
        column = indent;
        line_start = true;
      }
      if (!line_start) {
        out += ' ';
        ++column;
      }
      out += word;
      column += word.size();
      line_start = false;
    }
  }
  return out;
}

// One option's help line(s): "  --seed S                  the case's seed (default: 1)".
std::string option_help(const po::option_description& o) {
  std::string left = "  --" + o.long_name();
  std::string description = o.description();
  if (o.semantic()->max_tokens() > 0) {
    // format_parameter() is "VALUE" or "VALUE (=default)" (Boost's typed_value::name()).
    std::string parameter = o.format_parameter();
    const std::size_t at = parameter.find(" (=");
    if (at != std::string::npos) {
      description += " (default: " + parameter.substr(at + 3, parameter.size() - at - 4) + ")";
      parameter.resize(at);
    }
    left += " " + parameter;
  }
  // Every option states its default (or that it is required), so that --help answers "what
  // happens if I leave it out"; an option added without one fails every --help test.
  if (description.find("default") == std::string::npos &&
      description.find("required") == std::string::npos)
    throw std::logic_error("option --" + o.long_name() + " has no default in its help");
  if (left.size() + 2 > kDescColumn)
    return left + "\n" + std::string(kDescColumn, ' ') +
           wrap(description, kDescColumn, kDescColumn) + "\n";
  left.resize(kDescColumn, ' ');
  return left + wrap(description, kDescColumn, kDescColumn) + "\n";
}

std::string help_text(const po::options_description& desc, const char* positional,
                      const CommandHelp& c) {
  std::string o = "usage: convcheck " + synopsis_text(c) + "\n\n" + c.summary + "\n";
  std::string own;
  for (const auto& opt : desc.options())
    if (!positional || opt->long_name() != positional) own += option_help(*opt);
  if (!own.empty()) o += "\noptions:\n" + own;
  o += "\nglobal options:\n";
  const po::options_description globals = global_options(c);
  for (const auto& opt : globals.options()) o += option_help(*opt);
  o += "  -h, --help                print this help and exit\n";
  if (*c.details) o += std::string("\n") + c.details;
  o += "\nexample:\n";
  std::istringstream examples(c.example);
  for (std::string line; std::getline(examples, line);) o += "  convcheck " + line + "\n";
  return o;
}

bool asks_for_help(const Args& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;  // what follows is not an option
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

// Levenshtein distance, with a swap of two neighbours counted as one edit.
std::size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest(const std::string& given, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_edits = 3;  // at most 2 edits count as a near miss
  for (const std::string& c : candidates) {
    std::size_t e = edits(given, c);
    // A prefix (what Boost's guessing would have taken) or an extension is a near miss too.
    if (!given.empty() && (c.rfind(given, 0) == 0 || given.rfind(c, 0) == 0))
      e = std::min<std::size_t>(e, 1);
    if (e < best_edits) {
      best = c;
      best_edits = e;
    }
  }
  return best;
}

po::options_description global_options(const CommandHelp& c) {
  po::options_description g("global");
  if (c.takes_max_bytes)
    g.add_options()("max-bytes", po::value<std::string>()->value_name("N[K|M|G|T|P]"),
                    "refuse, before allocating, a problem or .npy file whose tensors would need "
                    "more than N bytes (default: half of physical memory)");
  g.add_options()("plugin-timeout", po::value<double>()->value_name("S")->default_value(60),
                  "seconds a plugin:PATH backend may take per call");
  return g;
}

po::variables_map parse_options(const std::string& command, const Args& args,
                                const po::options_description& desc, const char* positional,
                                int max_positional) {
  const CommandHelp* c = command_help(command);
  if (c == nullptr) throw std::logic_error("no help entry for command '" + command + "'");
  if (asks_for_help(args)) throw HelpShown{help_text(desc, positional, *c)};
  po::positional_options_description pos;
  if (positional) pos.add(positional, max_positional);
  // No allow_guessing: `--suit` is not `--suite` (issue 19).
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).style(style).run(), vm);
  } catch (const po::unknown_option& e) {
    std::string given = e.get_option_name();
    given.erase(0, given.find_first_not_of('-'));
    given = given.substr(0, given.find('='));
    std::vector<std::string> names{"help"};
    for (const auto& opt : desc.options())
      if (!positional || opt->long_name() != positional) names.push_back(opt->long_name());
    const po::options_description globals = global_options(*c);
    for (const auto& opt : globals.options()) names.push_back(opt->long_name());
    const std::string near = nearest(given, names);
    throw InvalidArgument(std::string(e.what()) +
                          (near.empty() ? "" : "; did you mean --" + near + "?") + " (convcheck " +
                          c->name + " --help lists the options)");
  }
  po::notify(vm);
  return vm;
}

std::string version_text() {
  namespace bi = reports::build_info;
  std::string o = std::string("convcheck ") + bi::kVersion + "\n";
  o += std::string("commit: ") + bi::commit() + "\n";
  o += "compiler: " + bi::compiler() + "\n";
  o += "cpu: " + cpu_features().describe() + "\n";
  o += "optimized kernels: " + opt::isa_summary() + "\n";
  o += std::string("cuda: ") + bi::kCuda + "; cudnn: " + bi::kCudnn + "\n";
  o += std::string("onednn: ") + bi::kOneDnn + "\n";
  o += std::string("eigen: ") + bi::kEigen + "\n";
  return o;
}

}  // namespace convcheck::cli
