// Mixed precision as torch.amp does it (the lab's `with autocast(): ...` and GradScaler):
//
//   with torch.autocast(device_type, dtype):    AutocastGuard guard(device, dtype);
//       loss = model(x) ...                      loss = workload.loss(batch);
//   scaler.scale(loss).backward()                scaler.scale(loss).backward();
//   scaler.unscale_(opt); clip_grad_norm_(...)   finite = scaler.unscale(params); clip(...);
//   scaler.step(opt)                             if (finite) opt.step();
//   scaler.update()                              scaler.update();
//
// Parameters and gradients stay float32 (autocast casts inside the ops), so DDP's buckets carry
// exactly the bytes they carry without AMP. The gradients GradScaler checks are the all-reduced
// ones, identical on every rank, so every rank decides to skip the same steps.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ddpsim::runtime {

// `with torch.autocast(device_type, dtype, enabled)`: ops that autocast lists run in `dtype`
// inside the scope; the previous state comes back (and the cast cache is freed) on exit.
class AutocastGuard {
 public:
  AutocastGuard(at::DeviceType device, at::ScalarType dtype, bool enabled);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  at::DeviceType device_;
  bool enabled_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

struct GradScalerOptions {
  double init_scale = 65536.0;  // torch.amp.GradScaler's defaults
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
};

// torch.amp.GradScaler with the same ATen kernels: the scale is a float32 tensor, unscaling and
// the non-finite check are _amp_foreach_non_finite_check_and_unscale_, and the update is
// _amp_update_scale_ (backoff on a non-finite step, growth after growth_interval finite ones).
class GradScaler {
 public:
  GradScaler(const GradScalerOptions& options, const at::Device& device);

  // scaler.scale(loss): loss * scale.
  at::Tensor scale(const at::Tensor& loss) const;
  // scaler.unscale_(optimizer): divides every gradient by the scale in place; returns whether
  // all of them were finite (what scaler.step checks before it steps).
  bool unscale(const std::vector<at::Tensor>& params);
  // scaler.update(): the next scale from this step's check.
  void update();
  // The scale the next scale() multiplies by.
  double current_scale() const;

 private:
  GradScalerOptions options_;
  at::Tensor scale_;           // float32, 0-dim
  at::Tensor growth_tracker_;  // int32, 0-dim: finite steps since the last change
  at::Tensor found_inf_;       // float32, 0-dim: this step's check (1 when not finite)
};

}  // namespace ddpsim::runtime
