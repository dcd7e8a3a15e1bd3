// The re-bucketing what-if against the two references that matter: the layouts a real
// ddp-train run recorded (c10d's Reducer rebuilt them after iteration 0), and PyTorch's own
// torch.distributed._compute_bucket_assignment_by_size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

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

struct AssignmentCase {
  std::vector<trace::Parameter> parameters;
  std::vector<int> order;
  BucketCaps caps;
};

// torch's assignment of every case, one line each ("0,1;2" = buckets {0,1} and {2}), from one
// run of the project's torch (DDPSIM_TORCH_PYTHON: importing torch costs ~2 s, once); nullopt
// when that Python is missing or has no torch; an empty vector when it failed.
std::optional<std::vector<std::string>> torch_assignments(const std::vector<AssignmentCase>& cases) {
  if (::access(DDPSIM_TORCH_PYTHON, X_OK) != 0) return std::nullopt;
  std::ostringstream script;
  script << "import sys\n"
         << "try:\n  import torch, torch.distributed as dist\n"
         << "except ImportError:\n  print('no torch'); sys.exit(0)\n"
         << "dtypes = {'float32': torch.float32, 'float16': torch.float16, 'bfloat16': torch.bfloat16,"
            " 'float64': torch.float64}\n"
         << "cases = [";
  for (const AssignmentCase& one : cases) {
    script << "([";
    for (const auto& parameter : one.parameters) script << "(" << parameter.numel << ", '" << parameter.dtype << "'),";
    script << "], [";
    for (int index : one.order) script << index << ",";
    script << "], [";
    for (std::int64_t limit : one.caps.limits()) script << limit << ",";
    script << "]),";
  }
  // c10d walks the tensors in the given order and labels them with tensor_indices: the
  // Reducer passes its parameters already sorted by gradient-ready time.
  script << "]\nfor params, order, limits in cases:\n"
         << "  tensors = [torch.empty(params[i][0], dtype=dtypes[params[i][1]]) for i in order]\n"
         << "  buckets, _ = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * len(order), order)\n"
         << "  print(';'.join(','.join(str(i) for i in b) for b in buckets))\n";
  FILE* pipe = ::popen((std::string(DDPSIM_TORCH_PYTHON) + " -c \"" + script.str() + "\" 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return std::vector<std::string>{};
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (::pclose(pipe) != 0) return std::vector<std::string>{};
  std::vector<std::string> lines;
  std::istringstream stream(output);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  if (lines == std::vector<std::string>{"no torch"}) return std::nullopt;
  return lines;
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
  // Random models: sizes from a few bytes to several MiB, mixed dtypes, shuffled ready order.
  std::mt19937 random(2024);
  const std::vector<std::string> dtypes = {"float32", "float32", "float16", "bfloat16", "float64"};
  std::vector<AssignmentCase> cases;
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
    cases.push_back({std::move(parameters), std::move(order), caps});
  }
  const std::optional<std::vector<std::string>> theirs = torch_assignments(cases);
  if (!theirs) GTEST_SKIP() << DDPSIM_TORCH_PYTHON << " has no torch";
  ASSERT_EQ(theirs->size(), cases.size()) << "torch failed";
  for (std::size_t model = 0; model < cases.size(); ++model) {
    const AssignmentCase& one = cases[model];
    EXPECT_EQ(to_text(compute_bucket_assignment(one.parameters, one.order, one.caps)), (*theirs)[model]) << "model " << model;
  }
}

}  // namespace
}  // namespace ddpsim::sim
