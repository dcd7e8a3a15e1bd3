// Autocast scope and dynamic loss scaling (mixed_precision.hpp).
#include "mixed_precision.hpp"

#include <ATen/autocast_mode.h>

#include <map>
#include <string>

namespace ddpsim::runtime {

AutocastGuard::AutocastGuard(at::DeviceType device, at::ScalarType dtype, bool enabled)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  // torch.autocast.__enter__: remember, set, count the nesting.
  previous_enabled_ = at::autocast::is_autocast_enabled(device_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_dtype(device_, dtype);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  // torch.autocast.__exit__: the cast weights are dropped when the outermost scope ends.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_, previous_dtype_);
}

GradScaler::GradScaler(const GradScalerOptions& options, const at::Device& device)
    : options_(options) {
  const auto on = at::TensorOptions().device(device);
  scale_ = at::full({}, options_.init_scale, on.dtype(at::kFloat));
  growth_tracker_ = at::zeros({}, on.dtype(at::kInt));
  found_inf_ = at::zeros({}, on.dtype(at::kFloat));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const { return loss * scale_.to(loss.device()); }

bool GradScaler::unscale(const std::vector<at::Tensor>& params) {
  // As GradScaler._unscale_grads_: one fused call per device (a model split over devices has
  // gradients on each), each with its own found_inf, summed afterwards.
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  std::map<std::string, std::vector<at::Tensor>> grads_by_device;
  for (const at::Tensor& p : params) {
    if (p.grad().defined()) grads_by_device[p.grad().device().str()].push_back(p.grad());
  }
  found_inf_.zero_();
  for (auto& [device, grads] : grads_by_device) {
    at::Tensor found = at::zeros({}, at::TensorOptions().device(grads.front().device()).dtype(at::kFloat));
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found, inv_scale.to(found.device()));
    found_inf_.add_(found.to(found_inf_.device()));
  }
  return found_inf_.item<float>() == 0.0f;
}

void GradScaler::update() {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                         options_.backoff_factor, options_.growth_interval);
  found_inf_.zero_();
}

double GradScaler::current_scale() const { return scale_.item<double>(); }

}  // namespace ddpsim::runtime
