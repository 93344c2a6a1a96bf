#include "core/suite.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace convcheck {

namespace {

// A suite is a problem list; anything larger than this is not one (and is not read into memory).
constexpr std::uintmax_t kMaxSuiteBytes = std::uintmax_t{256} << 20;

// A word from the file, made safe for a message (control bytes as \xNN, cut after 200 bytes).
std::string shown(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < 200; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 200) out += "...";
  return out;
}

}  // namespace

SuitesDir suites_location() {
  if (const char* env = std::getenv("CONVCHECK_SUITES"); env && *env)
    return {env, "$CONVCHECK_SUITES"};
  // An installed tree (cmake --install): <prefix>/bin/convcheck and
  // <prefix>/share/convcheck/suites.
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside =
        self.parent_path().parent_path() / "share" / "convcheck" / "suites";
    if (std::filesystem::is_directory(beside, ec)) return {beside.string(), "installed"};
  }
  return {CONVCHECK_SUITES_DIR, "source tree"};
}

std::string suites_dir() {
  return suites_location().dir;
}

Suite parse_suite(const std::string& text, const std::string& path) {
  Suite s;
  s.path = path;
  s.name = std::filesystem::path(path).stem().string();
  // A UTF-8 byte order mark, as some editors save one, is not part of the first descriptor
  // (issue 19: it made "unknown op 'conv2d'" with the mark invisible). CRLF line ends need
  // nothing: '\r' is white space to the word splitting below.
  const std::size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  std::istringstream in(text.substr(bom));
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
    bool tagged = false;
    for (std::size_t i = 1; i < w.size(); i += 2) {
      if (w[i] != "--tag" && w[i] != "--fill") {
        throw InvalidArgument(where + "unknown option '" + shown(w[i]) +
                              "' (expected --tag or --fill)");
      }
      if (i + 1 >= w.size()) throw InvalidArgument(where + "option '" + w[i] + "' has no value");
      if ((w[i] == "--tag" && tagged) || (w[i] == "--fill" && e.fill)) {
        throw InvalidArgument(where + "option '" + w[i] + "' given twice");
      }
      if (w[i] == "--tag") {
        e.tag = w[i + 1];
        tagged = true;
      } else {
        e.fill = w[i + 1];
      }
    }
    s.entries.push_back(std::move(e));
  }
  // A suite of nothing would "pass" with 0 of 0 cases: more likely the wrong file (issue 19).
  if (s.entries.empty())
    throw InvalidArgument(path + ": no problems in the suite (" + std::to_string(text.size()) +
                          " bytes of blank lines and comments): nothing to run");
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
  // error_code overloads throughout: a name too long for the file system, or a directory that
  // cannot be searched, is an answer about the suite, not an exception from std::filesystem.
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string path = name_or_path;
  if (name_or_path.empty()) throw InvalidArgument("the suite name is empty");
  if (!fs::exists(path, ec)) {
    path = suites_dir() + "/" + name_or_path + ".txt";
    if (!fs::exists(path, ec)) {
      std::string known;
      for (const std::string& n : suite_names()) known += (known.empty() ? "" : ", ") + n;
      throw InvalidArgument("unknown suite '" + shown(name_or_path) + "': no such file, and no " +
                            shown(path) + " (known suites: " + (known.empty() ? "none" : known) +
                            ")");
    }
  }
  const fs::file_status st = fs::status(path, ec);
  if (ec) throw InvalidArgument("cannot read suite " + path + ": " + ec.message());
  if (fs::is_directory(st)) {
    throw InvalidArgument("cannot read suite " + path + ": it is a directory, not a suite file");
  }
  if (!fs::is_regular_file(st)) {
    throw InvalidArgument("cannot read suite " + path +
                          ": not a regular file (a suite is a text file of problems)");
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InvalidArgument("cannot read suite " + path + ": " + ec.message());
  if (size > kMaxSuiteBytes) {
    throw InvalidArgument("cannot read suite " + path + ": it has " + std::to_string(size) +
                          " bytes, more than a suite may (" + std::to_string(kMaxSuiteBytes) +
                          " bytes)");
  }
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    throw InvalidArgument("cannot read suite " + path + ": " +
                          (errno ? std::strerror(errno) : "open failed"));
  }
  std::ostringstream text;
  text << f.rdbuf();
  if (f.bad()) throw InvalidArgument("cannot read suite " + path + ": read error");
  return parse_suite(text.str(), path);
}

}  // namespace convcheck
