// The re-bucketing what-if against the two references that matter: the layouts a real
// ddp-train run recorded (c10d's Reducer rebuilt them after iteration 0), and PyTorch's own
// torch.distributed._compute_bucket_assignment_by_size.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>

#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
using Layout = std::vector<std::vector<int>>;

// tests/simulator/data/mlp-capC: `ddp-launch --nproc-per-node 2 -- ddp-train --model mlp
// --width 512 --depth 4 --iterations 4 --batch-size 16 --bucket-cap-mb C --threads 1 --seed 1`.
std::string recorded(int cap_mb) { return std::string(DDPSIM_TEST_DATA_DIR) + "/mlp-cap" + std::to_string(cap_mb); }

const Layout& rebuilt_layout(const trace::Trace& trace) {
  return trace.ranks.at(0).meta.bucket_assignments.back().buckets;
}

class RecordedLayouts : public ::testing::TestWithParam<std::pair<int, int>> {};

// Re-bucketing the run recorded with one cap for the other cap gives exactly the layout
// the Reducer built in the run recorded with that cap.
TEST_P(RecordedLayouts, RebucketMatchesTheReducer) {
  const auto [from_cap, to_cap] = GetParam();
  const trace::Trace source = trace::read_trace(recorded(from_cap));
  const trace::Trace target = trace::read_trace(recorded(to_cap));
  ASSERT_EQ(target.ranks[0].meta.bucket_cap_bytes, to_cap * kMiB);
  const WorkloadModel model = extract_workload(source, ComputeMode::Median);
  const WorkloadModel rebucketed = rebucket(model, {to_cap * kMiB, target.ranks[0].meta.first_bucket_cap_bytes});
  EXPECT_EQ(rebucketed.buckets, rebuilt_layout(target));
  // Each bucket is ready when its last gradient is (plus the measured hand-off lag).
  for (const auto& costs : rebucketed.costs.at(0)) {
    for (std::size_t b = 0; b < rebucketed.buckets.size(); ++b) {
      double last = 0;
      for (int p : rebucketed.buckets[b]) last = std::max(last, costs.grad_ready_s[static_cast<std::size_t>(p)]);
      EXPECT_GE(costs.bucket_ready_s[b], last);
      EXPECT_LT(costs.bucket_ready_s[b], last + 0.005);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Caps, RecordedLayouts,
                         ::testing::Values(std::make_pair(1, 25), std::make_pair(25, 1), std::make_pair(1, 1)));

// Runs the project's torch (DDPSIM_TORCH_PYTHON); "" when it cannot (no python, no torch).
std::string torch_assignment(const std::vector<trace::Parameter>& parameters, const std::vector<int>& order,
                             const BucketCaps& caps) {
  std::ostringstream script;
  script << "import torch, torch.distributed as dist\n"
         << "dtypes = {'float32': torch.float32, 'float16': torch.float16, 'bfloat16': torch.bfloat16,"
            " 'float64': torch.float64}\n"
         << "params = [";
  for (const auto& parameter : parameters) script << "(" << parameter.numel << ", '" << parameter.dtype << "'),";
  script << "]\norder = [";
  for (int index : order) script << index << ",";
  // c10d walks the tensors in the given order and labels them with tensor_indices: the
  // Reducer passes its parameters already sorted by gradient-ready time.
  script << "]\ntensors = [torch.empty(params[i][0], dtype=dtypes[params[i][1]]) for i in order]\n"
         << "buckets, _ = dist._compute_bucket_assignment_by_size(tensors, [";
  for (std::int64_t limit : caps.limits()) script << limit << ",";
  script << "], [False] * len(order), order)\n"
         << "print(';'.join(','.join(str(i) for i in b) for b in buckets))\n";
  FILE* pipe = ::popen((std::string(DDPSIM_TORCH_PYTHON) + " -c \"" + script.str() + "\" 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return "";
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (::pclose(pipe) != 0) return "";
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

std::string to_text(const Layout& layout) {
  std::string text;
  for (std::size_t b = 0; b < layout.size(); ++b) {
    if (b > 0) text += ";";
    for (std::size_t i = 0; i < layout[b].size(); ++i) text += (i > 0 ? "," : "") + std::to_string(layout[b][i]);
  }
  return text;
}

TEST(TorchReference, SameAssignmentAsComputeBucketAssignmentBySize) {
  if (std::system((std::string(DDPSIM_TORCH_PYTHON) + " -c 'import torch' > /dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << DDPSIM_TORCH_PYTHON << " has no torch";
  }
  // Random models: sizes from a few bytes to several MiB, mixed dtypes, shuffled ready order.
  std::mt19937 random(2024);
  const std::vector<std::string> dtypes = {"float32", "float32", "float16", "bfloat16", "float64"};
  std::string ours;
  std::string theirs;
  for (int model = 0; model < 10; ++model) {
    std::vector<trace::Parameter> parameters;
    const int count = 5 + static_cast<int>(random() % 20);
    for (int index = 0; index < count; ++index) {
      const std::int64_t numel = std::int64_t{1} << (2 + random() % 20);
      parameters.push_back({index, "p" + std::to_string(index), numel + static_cast<std::int64_t>(random() % 100),
                            dtypes[random() % (model < 3 ? 2 : dtypes.size())]});
    }
    std::vector<int> order(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) order[static_cast<std::size_t>(i)] = count - 1 - i;
    if (model % 2 == 1) std::shuffle(order.begin(), order.end(), random);
    BucketCaps caps{(1 + static_cast<std::int64_t>(random() % 8)) * kMiB, (1 + static_cast<std::int64_t>(random() % 2)) * kMiB / 2};
    if (model >= 2) {
      // A per-bucket list (bucket_cap_mb_list): 1-4 caps of 0.25-4 MiB, the last repeating.
      std::vector<std::int64_t> list;
      for (int i = 0, n = 1 + static_cast<int>(random() % 4); i < n; ++i) {
        list.push_back((1 + static_cast<std::int64_t>(random() % 16)) * kMiB / 4);
      }
      caps = BucketCaps::list(list);
    }
    const std::string reference = torch_assignment(parameters, order, caps);
    ASSERT_FALSE(reference.empty()) << "torch failed on model " << model;
    ours += to_text(compute_bucket_assignment(parameters, order, caps)) + "\n";
    theirs += reference + "\n";
  }
  EXPECT_EQ(ours, theirs);
}

}  // namespace
}  // namespace ddpsim::sim
