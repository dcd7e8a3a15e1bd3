// ddp-train: one rank of a DistributedDataParallel job on PyTorch's c10d::Reducer.
#include <csignal>
#include <cstdio>
#include <exception>

#include "ddpsim/runtime/train_options.hpp"
#include "ddpsim/trace/error_reason.hpp"
#include "ddpsim/runtime/trainer.hpp"

int main(int argc, char** argv) {
  using namespace ddpsim::runtime;
  // A peer that dies mid-transfer must surface as an error from the backend, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    int exit_code = kExitOk;
    const auto options = parse_train_options(argc, argv, exit_code);
    if (!options) return exit_code;
    return run_training(*options);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "ddp-train: %s\n", ddpsim::trace::error_reason(error, "reading the options").c_str());
    return kExitUsage;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ddp-train: %s\n", ddpsim::trace::error_reason(error, "training").c_str());
    return kExitFailure;
  } catch (...) {
    std::fprintf(stderr, "ddp-train: %s\n", ddpsim::trace::unknown_error_reason("training").c_str());
    return kExitFailure;
  }
}
