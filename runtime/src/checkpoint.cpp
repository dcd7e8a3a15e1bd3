#include "checkpoint.hpp"

#include <torch/serialize.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <c10/util/Exception.h>

#include <filesystem>
#include <vector>

#include "ddpsim/runtime/failure_kind.hpp"

namespace ddpsim::runtime {
namespace {

namespace fs = std::filesystem;

// Archive keys may not contain dots (they become module attribute names), so tensors are
// stored by position in named_parameters() / named_buffers() order.
std::string param_key(std::size_t i) { return "param_" + std::to_string(i); }
std::string buffer_key(std::size_t i) { return "buffer_" + std::to_string(i); }

std::string shape_text(const at::Tensor& t) {
  std::string text;
  for (const auto size : t.sizes()) text += (text.empty() ? "" : "x") + std::to_string(size);
  return text.empty() ? "scalar" : text;
}

// Copies `saved` into `target` after checking that it fits.
void restore(const std::string& file, const std::string& what, const at::Tensor& saved,
             at::Tensor& target) {
  if (!saved.sizes().equals(target.sizes())) {
    throw CheckpointError(file + ": " + what + " has shape " + shape_text(saved) +
                          ", expected " + shape_text(target) + " (another model?)");
  }
  torch::NoGradGuard no_grad;
  // copy_ rather than set_: the Reducer and the optimizer hold these very tensors.
  target.copy_(saved);
}

}  // namespace

std::string checkpoint_path(const std::string& dir) {
  return (fs::path(dir) / "checkpoint.pt").string();
}

void save_checkpoint(const std::string& dir, torch::nn::Module& module,
                     torch::optim::Optimizer& optimizer, const CheckpointProgress& progress) {
  const std::string path = checkpoint_path(dir);
  const std::string temp = (fs::path(dir) / ".checkpoint.pt.tmp").string();
  try {
    fs::create_directories(dir);
    torch::serialize::OutputArchive archive;
    const auto params = module.parameters(/*recurse=*/true);
    const auto buffers = module.buffers(/*recurse=*/true);
    for (std::size_t i = 0; i < params.size(); ++i) archive.write(param_key(i), params[i]);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      archive.write(buffer_key(i), buffers[i], /*is_buffer=*/true);
    }
    archive.write("parameter_count", c10::IValue(static_cast<std::int64_t>(params.size())));
    archive.write("iterations_done", c10::IValue(progress.iterations_done));
    archive.write("sampler_epoch", c10::IValue(static_cast<std::int64_t>(progress.sampler_epoch)));
    torch::serialize::OutputArchive optimizer_archive;
    optimizer.save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
    archive.save_to(temp);
    fs::rename(temp, path);
  } catch (const c10::Error& error) {
    throw CheckpointError(path + ": cannot write the checkpoint: " +
                          first_line(error.what_without_backtrace()));
  } catch (const fs::filesystem_error& error) {
    throw CheckpointError(path + ": cannot write the checkpoint: " + error.code().message());
  }
}

CheckpointProgress load_checkpoint(const std::string& dir, torch::nn::Module& module,
                                   torch::optim::Optimizer& optimizer,
                                   const torch::Device& device) {
  const std::string path = checkpoint_path(dir);
  if (!fs::is_regular_file(path)) {
    throw CheckpointError(path + ": no checkpoint there (expected a file written by "
                                 "--checkpoint-every)");
  }
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path, device);
    c10::IValue value;
    if (!archive.try_read("parameter_count", value) || !value.isInt()) {
      throw CheckpointError(path + ": not a ddp-train checkpoint (no parameter_count)");
    }
    auto params = module.parameters(/*recurse=*/true);
    if (value.toInt() != static_cast<std::int64_t>(params.size())) {
      throw CheckpointError(path + ": holds " + std::to_string(value.toInt()) +
                            " parameters, this model has " + std::to_string(params.size()) +
                            " (another model?)");
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      at::Tensor saved;
      archive.read(param_key(i), saved);
      restore(path, "parameter " + std::to_string(i), saved, params[i]);
    }
    auto buffers = module.buffers(/*recurse=*/true);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      at::Tensor saved;
      archive.read(buffer_key(i), saved, /*is_buffer=*/true);
      restore(path, "buffer " + std::to_string(i), saved, buffers[i]);
    }
    torch::serialize::InputArchive optimizer_archive;
    archive.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    CheckpointProgress progress;
    archive.read("iterations_done", value);
    progress.iterations_done = value.toInt();
    archive.read("sampler_epoch", value);
    progress.sampler_epoch = static_cast<std::uint64_t>(value.toInt());
    return progress;
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& error) {
    // Truncated or corrupt zip, missing keys: c10::Error with a backtrace; the first line says it.
    const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
    throw CheckpointError(path + ": not a readable checkpoint: " +
                          first_line(c10_error ? c10_error->what_without_backtrace()
                                               : error.what()));
  }
}

}  // namespace ddpsim::runtime
