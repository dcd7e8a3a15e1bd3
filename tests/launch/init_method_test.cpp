// Parsing the --init rendezvous method.
#include "ddpsim/launch/init_method.hpp"

#include <gtest/gtest.h>

namespace {

using ddpsim::launch::InitMethod;
using ddpsim::launch::InitMethodError;
using ddpsim::launch::parse_init_method;

std::string error_of(const std::string& text) {
  try {
    parse_init_method(text);
  } catch (const InitMethodError& error) {
    return error.what();
  }
  return "";
}

TEST(InitMethod, ParsesEnv) {
  const InitMethod method = parse_init_method("env://");
  EXPECT_EQ(method.kind, InitMethod::Kind::Env);
  EXPECT_EQ(method.text, "env://");
}

TEST(InitMethod, ParsesFile) {
  const InitMethod method = parse_init_method("file:///tmp/ddp/rendezvous");
  EXPECT_EQ(method.kind, InitMethod::Kind::File);
  EXPECT_EQ(method.path, "/tmp/ddp/rendezvous");
}

TEST(InitMethod, ParsesTcp) {
  const InitMethod method = parse_init_method("tcp://node07.cluster:29501");
  EXPECT_EQ(method.kind, InitMethod::Kind::Tcp);
  EXPECT_EQ(method.host, "node07.cluster");
  EXPECT_EQ(method.port, 29501);
  const InitMethod ipv6 = parse_init_method("tcp://[fe80::1]:65535");
  EXPECT_EQ(ipv6.host, "fe80::1");
  EXPECT_EQ(ipv6.port, 65535);
}

TEST(InitMethod, RejectsMalformedStrings) {
  EXPECT_EQ(error_of("nccl://x"), "'nccl://x': expected env://, file:///PATH or tcp://HOST:PORT");
  EXPECT_EQ(error_of(""), "'': expected env://, file:///PATH or tcp://HOST:PORT");
  EXPECT_EQ(error_of("env:/"), "'env:/': expected env://, file:///PATH or tcp://HOST:PORT");
  EXPECT_EQ(error_of("file://relative/path"), "'file://relative/path': expected an absolute path, file:///PATH (three slashes)");
  EXPECT_EQ(error_of("file://"), "'file://': expected an absolute path, file:///PATH (three slashes)");
  EXPECT_EQ(error_of("tcp://host"), "'tcp://host': expected tcp://HOST:PORT (the port is missing)");
  EXPECT_EQ(error_of("tcp://:29500"), "'tcp://:29500': expected tcp://HOST:PORT (the host is empty)");
  EXPECT_EQ(error_of("tcp://host:0"), "'tcp://host:0': port '0': expected 1..65535");
  EXPECT_EQ(error_of("tcp://host:99999"), "'tcp://host:99999': port '99999': expected 1..65535");
  EXPECT_EQ(error_of("tcp://host:12ab"), "'tcp://host:12ab': port '12ab': expected 1..65535");
  EXPECT_EQ(error_of("tcp://::1:29500"), "'tcp://::1:29500': IPv6 hosts need brackets: tcp://[::1]:PORT");
  EXPECT_EQ(error_of("tcp://[::1]29500"), "'tcp://[::1]29500': expected tcp://[IPV6]:PORT");
  EXPECT_EQ(error_of("tcp://h:1/x"), "'tcp://h:1/x': expected tcp://HOST:PORT with nothing after the port");
}

}  // namespace
