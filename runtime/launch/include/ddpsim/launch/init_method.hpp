#pragma once
// The `--init` rendezvous method, spelled as in torch.distributed.init_process_group:
//   env://              rank, world size and MASTER_ADDR/MASTER_PORT come from the environment
//   file:///abs/path    a shared file (c10d::FileStore); must be absolute
//   tcp://host:port     a TCP store at host:port (IPv6 hosts in brackets: tcp://[::1]:29500)
#include <stdexcept>
#include <string>

namespace ddpsim::launch {

struct InitMethod {
  enum class Kind { Env, File, Tcp };
  Kind kind = Kind::Env;
  std::string path;  // Kind::File: the file path (absolute)
  std::string host;  // Kind::Tcp: host name or address, without IPv6 brackets
  int port = 0;      // Kind::Tcp: 1..65535
  std::string text;  // the string it was parsed from
};

// One line, e.g. "'foo://x': expected env://, file:///PATH or tcp://HOST:PORT".
class InitMethodError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses an init method string; throws InitMethodError when malformed.
InitMethod parse_init_method(const std::string& text);

}  // namespace ddpsim::launch
