// A sweep cut into shards (--shard I/N, --shard slurm) and merged back (--merge): the shards
// partition the grid, and the merged CSV is the unsharded sweep's, row for row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/trace/io.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

SweepGrid twelve_points() {
  SweepGrid grid;
  grid.bucket_caps_mb = {0, 1, 2};
  grid.slowdowns = {"1", "2"};
  grid.world_sizes = {4, 8};
  return grid;
}

TEST(SweepShards, PartitionTheGridRoundRobin) {
  const SweepGrid grid = twelve_points();
  const std::vector<SweepPoint> all = sweep_points(grid);
  ASSERT_EQ(all.size(), 12u);
  for (int count : {1, 2, 5, 12, 13}) {
    std::vector<std::string> seen(all.size());
    for (int index = 0; index < count; ++index) {
      const std::vector<SweepPoint> mine = sweep_points(grid, {index, count});
      // Shard I of N holds points I, I+N, I+2N, ...: ceil((12 - I) / N) of them, in grid order.
      const int expected = index < 12 ? (12 - index + count - 1) / count : 0;
      ASSERT_EQ(static_cast<int>(mine.size()), expected) << index << "/" << count;
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const std::size_t i = static_cast<std::size_t>(index) + k * static_cast<std::size_t>(count);
        EXPECT_EQ(sweep_key(mine[k]), sweep_key(all[i]));
        EXPECT_TRUE(seen[i].empty()) << "point " << i << " in two shards";
        seen[i] = "x";
      }
    }
    for (std::size_t i = 0; i < all.size(); ++i) EXPECT_FALSE(seen[i].empty()) << "point " << i << " in no shard of " << count;
  }
  EXPECT_THROW(sweep_points(grid, {2, 2}), RequestError);
  EXPECT_THROW(sweep_points(grid, {0, 0}), RequestError);
}

TEST(SweepShards, ParseIOverN) {
  const SweepShard shard = parse_sweep_shard("2/4");
  EXPECT_EQ(shard.index, 2);
  EXPECT_EQ(shard.count, 4);
  EXPECT_EQ(parse_sweep_shard("0/1").count, 1);
  for (const char* bad : {"4/4", "1/0", "-1/2", "1/-2", "a/b", "1/2x", " 1/2", "", "1", "1/", "/2", "slurmx"}) {
    try {
      parse_sweep_shard(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const RequestError& error) {
      EXPECT_EQ(std::string(error.what()).rfind("--shard: expected I/N", 0), 0u) << error.what();
    }
  }
}

// SLURM's job array variables, as sbatch --array sets them (here for --array=3-6).
std::function<const char*(const char*)> array_env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    const auto found = values.find(name);
    return found == values.end() ? nullptr : found->second.c_str();
  };
}

TEST(SweepShards, ParseSlurmFromTheJobArrayVariables) {
  std::map<std::string, std::string> vars = {{"SLURM_ARRAY_TASK_ID", "5"},
                                             {"SLURM_ARRAY_TASK_MIN", "3"},
                                             {"SLURM_ARRAY_TASK_MAX", "6"},
                                             {"SLURM_ARRAY_TASK_STEP", "1"},
                                             {"SLURM_ARRAY_TASK_COUNT", "4"}};
  const SweepShard shard = parse_sweep_shard("slurm", array_env(vars));
  EXPECT_EQ(shard.index, 2);
  EXPECT_EQ(shard.count, 4);

  const auto refused = [](const std::map<std::string, std::string>& env, const std::string& needle) {
    try {
      parse_sweep_shard("slurm", array_env(env));
      ADD_FAILURE() << "accepted " << needle;
    } catch (const RequestError& error) {
      const std::string what = error.what();
      EXPECT_EQ(what.rfind("--shard slurm: expected", 0), 0u) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  };
  refused({}, "unset");  // not a job array task
  auto step = vars;
  step["SLURM_ARRAY_TASK_STEP"] = "2";  // --array=3-9:2: offsets 0, 2, 4, 6 of 4 shards
  refused(step, "steps of 2");
  auto beyond = vars;
  beyond["SLURM_ARRAY_TASK_ID"] = "7";
  refused(beyond, "task 7 of 4");
  auto garbage = vars;
  garbage["SLURM_ARRAY_TASK_ID"] = "5x";
  refused(garbage, "whole numbers");
}

// The CSV with its wall_s column (a measured time, found by the header's name) blanked: what
// must match.
std::vector<std::string> rows_without_wall_s(const std::string& csv) {
  std::vector<std::string> rows;
  std::istringstream lines(csv);
  std::string line;
  std::size_t columns = 0;
  std::size_t wall_s = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::size_t begin = 0;
    for (std::size_t end; (end = line.find(',', begin)) != std::string::npos; begin = end + 1) {
      cells.push_back(line.substr(begin, end - begin));
    }
    cells.push_back(line.substr(begin));
    if (rows.empty()) {
      columns = cells.size();
      wall_s = static_cast<std::size_t>(std::find(cells.begin(), cells.end(), "wall_s") - cells.begin());
      EXPECT_LT(wall_s, columns) << "no wall_s column in " << line;
    }
    EXPECT_EQ(cells.size(), columns) << line;
    if (cells.size() == columns && wall_s < columns && !rows.empty()) cells[wall_s] = "-";
    std::string row;
    for (const std::string& cell : cells) row += cell + ",";
    rows.push_back(row);
  }
  return rows;
}

std::string grid_flags() { return " --bucket-caps 0,1,2 --slowdowns 1,2 --world-sizes 4 "; }

TEST(SweepShards, MergedShardsAreTheUnshardedSweep) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const std::string sweep = "sweep " + dir / "measured" + grid_flags();

  const Outcome whole = run_cli(dir, sweep + "--jobs 1 --out " + dir / "whole.csv");
  ASSERT_EQ(whole.status, 0) << whole.err;
  std::string shards;
  for (int index = 0; index < 3; ++index) {
    const std::string csv = dir / ("shard-" + std::to_string(index) + ".csv");
    const Outcome shard = run_cli(dir, sweep + "--jobs 2 --shard " + std::to_string(index) + "/3 --out " + csv);
    ASSERT_EQ(shard.status, 0) << shard.err;
    EXPECT_NE(shard.out.find("2 points simulated, 0 already in " + csv + " (shard " + std::to_string(index) + "/3)"),
              std::string::npos)
        << shard.out;
    shards += (index ? "," : "") + csv;
  }
  const Outcome merged = run_cli(dir, sweep + "--merge " + shards + " --out " + dir / "merged.csv");
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_NE(merged.out.find("merged 6 rows of 6 points from 3 files"), std::string::npos) << merged.out;

  const std::vector<std::string> expected = rows_without_wall_s(slurp(dir / "whole.csv"));
  EXPECT_EQ(rows_without_wall_s(slurp(dir / "merged.csv")), expected);
  // Grid order: caps outermost, then slowdowns (one world size).
  const std::vector<std::string> keys = {"0,1,4,", "0,2,4,", "1,1,4,", "1,2,4,", "2,1,4,", "2,2,4,"};
  ASSERT_EQ(expected.size(), 1 + keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(expected[i + 1].rfind(keys[i], 0), 0u) << expected[i + 1];
  // An unsharded sweep with more jobs writes rows as points finish; merging its one CSV sorts it.
  const Outcome parallel = run_cli(dir, sweep + "--jobs 3 --out " + dir / "parallel.csv");
  ASSERT_EQ(parallel.status, 0) << parallel.err;
  const Outcome sorted = run_cli(dir, sweep + "--merge " + dir / "parallel.csv" + " --out " + dir / "sorted.csv");
  ASSERT_EQ(sorted.status, 0) << sorted.err;
  EXPECT_EQ(rows_without_wall_s(slurp(dir / "sorted.csv")), expected);
}

TEST(SweepShards, ShardSlurmReadsTheArrayTask) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const std::string sweep = "sweep " + dir / "measured" + grid_flags();
  ASSERT_EQ(run_cli(dir, sweep + "--shard 1/2 --out " + dir / "given.csv").status, 0);
  // As a task of sbatch --array=0-1 sees it (run_cli's shell inherits this process's environment).
  ::setenv("SLURM_ARRAY_TASK_ID", "1", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
  const Outcome slurm = run_cli(dir, sweep + "--shard slurm --out " + dir / "slurm.csv");
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  ASSERT_EQ(slurm.status, 0) << slurm.err;
  EXPECT_NE(slurm.out.find("(shard 1/2)"), std::string::npos) << slurm.out;
  const std::vector<std::string> rows = rows_without_wall_s(slurp(dir / "slurm.csv"));
  EXPECT_EQ(rows, rows_without_wall_s(slurp(dir / "given.csv")));
  ASSERT_EQ(rows.size(), 1u + 3u);  // points 1, 3, 5 of 6
  EXPECT_EQ(rows[1].rfind("0,2,4,", 0), 0u) << rows[1];
  // Outside a job array, one line, exit 2.
  expect_one_line_error(run_cli(dir, sweep + "--shard slurm --out " + dir / "none.csv"), "--shard slurm");
}

TEST(SweepShards, MergeRefusesWhatIsNotAShardOfTheGrid) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const std::string sweep = "sweep " + dir / "measured" + grid_flags();
  const std::string shard0 = dir / "shard-0.csv";
  ASSERT_EQ(run_cli(dir, sweep + "--shard 0/2 --out " + shard0).status, 0);
  const std::string merged = " --out " + dir / "merged.csv";

  // A missing shard: the rows there are merged, the gap named, exit 1.
  const Outcome partial = run_cli(dir, sweep + "--merge " + shard0 + merged);
  EXPECT_EQ(partial.status, 1) << partial.err;
  EXPECT_EQ(count_lines(partial.err), 1) << partial.err;
  EXPECT_NE(partial.err.find("3 of 6 points have no row (first: 0,2,4)"), std::string::npos) << partial.err;
  EXPECT_EQ(count_lines(slurp(dir / "merged.csv")), 1 + 3);

  // Another grid's shard, a file that is no sweep CSV, a missing file, a point twice: exit 2.
  expect_one_line_error(run_cli(dir, "sweep " + dir / "measured" + " --bucket-caps 0,1 --slowdowns 1,2 "
                                         "--world-sizes 4 --merge " + shard0 + merged),
                        "expected rows of the grid given");
  std::ofstream(dir / "other.csv") << "a,b,c\n1,2,3\n";
  expect_one_line_error(run_cli(dir, sweep + "--merge " + dir / "other.csv" + merged), "expected the sweep CSV header");
  expect_one_line_error(run_cli(dir, sweep + "--merge " + dir / "absent.csv" + merged), "absent.csv");
  ASSERT_EQ(run_cli(dir, sweep + "--shard 0/3 --out " + dir / "overlap.csv").status, 0);
  expect_one_line_error(run_cli(dir, sweep + "--merge " + shard0 + "," + dir / "overlap.csv" + merged),
                        "expected each point in one file, got 0,1,4");
  // Merging simulates nothing, so simulation flags are refused with it.
  expect_one_line_error(run_cli(dir, sweep + "--merge " + shard0 + " --shard 0/2" + merged), "--shard");
}

}  // namespace
}  // namespace ddpsim::sim
