#include "provenance.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "commands.hpp"

#ifndef DDPSIM_GIT_SHA
#define DDPSIM_GIT_SHA "unknown"
#endif

namespace ddpsim::experiment {
namespace {

// stdout of a fixed, known command line ("" if it fails): only for provenance.
std::string capture(const std::vector<std::string>& command) {
  std::string line = shell_quote(command) + " 2>/dev/null";
  std::FILE* pipe = ::popen(line.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0 && out.empty()) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// {"libtorch-dev": "1.13.1+dfsg-4", …} from `dpkg-query -W` ("name<TAB>version" lines);
// a package that is not installed is absent.
nlohmann::json package_versions(const std::vector<std::string>& names) {
  std::vector<std::string> command = {"dpkg-query", "-W"};
  command.insert(command.end(), names.begin(), names.end());
  nlohmann::json versions = nlohmann::json::object();
  std::istringstream lines(capture(command));
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos && tab + 1 < line.size())
      versions[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return versions;
}

std::string directory_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path + ": expected provenance JSON written by ddp-experiment");
  }
}

// Two spec texts that parse to the same tables once [predict] is set aside (formatting and
// comments aside too). A text that does not parse is never the same.
bool same_except_predict(const std::string& a, const std::string& b) {
  try {
    toml::table first = toml::parse(a);
    toml::table second = toml::parse(b);
    first.erase("predict");
    second.erase("predict");
    return first == second;
  } catch (const toml::parse_error&) {
    return false;
  }
}

}  // namespace

void check_same_spec(const std::string& path, const ExperimentSpec& spec, bool predict_may_differ) {
  const auto json = read_json(path);
  if (json.is_null()) return;
  const bool has_text = json.is_object() && json.contains("spec_text") && json["spec_text"].is_string();
  if (has_text && json["spec_text"] == spec.text) return;
  if (has_text && predict_may_differ) {
    if (same_except_predict(json["spec_text"].get<std::string>(), spec.text)) return;
    throw std::runtime_error(path + ": these results came from a spec that differs outside [predict]; "
                             "--repredict may change only [predict]");
  }
  throw std::runtime_error(path + ": these results came from a different spec; use another "
                           "--out or remove " + directory_of(path) + " to start over");
}

void write_provenance(const std::string& path, const ExperimentSpec& spec,
                      const std::vector<std::string>& command_line, const std::string& bin_dir) {
  nlohmann::json json = read_json(path);
  if (!json.is_object()) json = nlohmann::json::object();

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  struct utsname uts {};
  ::uname(&uts);
  std::string sha = capture({"git", "-C", directory_of(spec.path), "rev-parse", "HEAD"});
  const std::string dirty =
      capture({"git", "-C", directory_of(spec.path), "status", "--porcelain", "--untracked-files=no"});

  nlohmann::json session = {
      {"date_utc", utc_now()},
      {"host", host},
      {"kernel", std::string(uts.sysname) + " " + uts.release + " " + uts.machine},
      {"cpus", ::sysconf(_SC_NPROCESSORS_ONLN)},
      {"git_sha", sha.empty() ? DDPSIM_GIT_SHA : sha},
      {"git_dirty", !dirty.empty()},
      {"runner_built_from", DDPSIM_GIT_SHA},
      {"packages", package_versions({"libtorch-dev", "libsimgrid-dev"})},
      {"command_line", command_line},
      {"bin_dir", bin_dir},
  };
  json["experiment"] = spec.name;
  json["spec_path"] = spec.path;
  json["spec_text"] = spec.text;
  if (!json.contains("sessions") || !json["sessions"].is_array()) json["sessions"] = nlohmann::json::array();
  json["sessions"].push_back(session);

  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp);
    out << json.dump(2) << '\n';
    if (!out) throw std::runtime_error(temp + ": write failed");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) throw std::runtime_error(path + ": write failed");
}

}  // namespace ddpsim::experiment
