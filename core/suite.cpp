#include "core/suite.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace convcheck {

std::string suites_dir() {
  if (const char* env = std::getenv("CONVCHECK_SUITES"); env && *env) return env;
  return CONVCHECK_SUITES_DIR;
}

Suite parse_suite(const std::string& text, const std::string& path) {
  Suite s;
  s.path = path;
  s.name = std::filesystem::path(path).stem().string();
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (std::size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    SuiteEntry e;
    e.line = number;
    try {
      e.problem = parse_problem(w[0]);
      geometry(e.problem);
    } catch (const InvalidArgument& err) {
      throw InvalidArgument(where + err.what());
    }
    for (std::size_t i = 1; i < w.size(); i += 2) {
      if (i + 1 >= w.size()) throw InvalidArgument(where + "option '" + w[i] + "' has no value");
      if (w[i] == "--tag") {
        e.tag = w[i + 1];
      } else if (w[i] == "--fill") {
        e.fill = w[i + 1];
      } else {
        throw InvalidArgument(where + "unknown option '" + w[i] + "' (expected --tag or --fill)");
      }
    }
    s.entries.push_back(std::move(e));
  }
  return s;
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(suites_dir(), ec)) {
    if (f.path().extension() == ".txt") names.push_back(f.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Suite read_suite(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (!std::filesystem::exists(path)) {
    path = suites_dir() + "/" + name_or_path + ".txt";
    if (!std::filesystem::exists(path)) {
      std::string known;
      for (const std::string& n : suite_names()) known += (known.empty() ? "" : ", ") + n;
      throw InvalidArgument("unknown suite '" + name_or_path + "': no such file, and no " + path +
                            " (known suites: " + (known.empty() ? "none" : known) + ")");
    }
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InvalidArgument("cannot read suite " + path);
  std::ostringstream text;
  text << f.rdbuf();
  return parse_suite(text.str(), path);
}

}  // namespace convcheck
