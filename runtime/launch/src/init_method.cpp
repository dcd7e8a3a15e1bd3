#include "ddpsim/launch/init_method.hpp"

#include "parse_int.hpp"

namespace ddpsim::launch {

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

InitMethod parse_tcp(const std::string& text, const std::string& rest) {
  const auto bad = [&](const std::string& why) { return InitMethodError("'" + text + "': " + why); };
  if (rest.find_first_of("/?#") != std::string::npos) {
    throw bad("expected tcp://HOST:PORT with nothing after the port");
  }
  InitMethod method;
  method.kind = InitMethod::Kind::Tcp;
  method.text = text;
  std::string port_text;
  if (starts_with(rest, "[")) {  // IPv6 literal: [::1]:29500
    const std::size_t close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      throw bad("expected tcp://[IPV6]:PORT");
    }
    method.host = rest.substr(1, close - 1);
    port_text = rest.substr(close + 2);
  } else {
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string::npos) throw bad("expected tcp://HOST:PORT (the port is missing)");
    method.host = rest.substr(0, colon);
    if (method.host.find(':') != std::string::npos) throw bad("IPv6 hosts need brackets: tcp://[::1]:PORT");
    port_text = rest.substr(colon + 1);
  }
  if (method.host.empty()) throw bad("expected tcp://HOST:PORT (the host is empty)");
  const auto port = detail::parse_int(port_text);
  if (!port || *port < 1 || *port > 65535) throw bad("port '" + port_text + "': expected 1..65535");
  method.port = *port;
  return method;
}

}  // namespace

InitMethod parse_init_method(const std::string& text) {
  if (text == "env://") return InitMethod{InitMethod::Kind::Env, "", "", 0, text};
  if (starts_with(text, "file://")) {
    const std::string path = text.substr(7);
    if (path.empty() || path.front() != '/') {
      throw InitMethodError("'" + text + "': expected an absolute path, file:///PATH (three slashes)");
    }
    return InitMethod{InitMethod::Kind::File, path, "", 0, text};
  }
  if (starts_with(text, "tcp://")) return parse_tcp(text, text.substr(6));
  throw InitMethodError("'" + text + "': expected env://, file:///PATH or tcp://HOST:PORT");
}

}  // namespace ddpsim::launch
