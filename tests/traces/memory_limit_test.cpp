// memory_limit.hpp: sizes as a person writes them, the limits that apply to a process, and
// which one a request exceeds.
#include "ddpsim/trace/memory_limit.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace ddpsim::trace {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(MemorySize, ReadsBinaryUnitsAsWritten) {
  EXPECT_EQ(parse_memory_size("2G"), 2 * kGiB);
  EXPECT_EQ(parse_memory_size("512M"), 512.0 * 1024 * 1024);
  EXPECT_EQ(parse_memory_size("1.5T"), 1.5 * 1024 * kGiB);
  EXPECT_EQ(parse_memory_size("64k"), 64.0 * 1024);
  EXPECT_EQ(parse_memory_size("2GiB"), 2 * kGiB);
  EXPECT_EQ(parse_memory_size("2gb"), 2 * kGiB);
  EXPECT_EQ(parse_memory_size("1073741824"), kGiB);
  EXPECT_EQ(parse_memory_size("100B"), 100.0);
}

TEST(MemorySize, RefusesWhatIsNotASize) {
  for (const char* text : {"", "x", "12x", "0", "0.5", "-1G", "1Q", "1GG", "iB", "nan", "inf", "1e400", "G"}) {
    EXPECT_FALSE(parse_memory_size(text)) << text;
  }
}

TEST(MemorySize, PrintsThreeDigitsAtMost) {
  EXPECT_EQ(memory_text(100), "100 B");
  EXPECT_EQ(memory_text(1536), "1.5 KiB");
  EXPECT_EQ(memory_text(kGiB), "1.0 GiB");
  EXPECT_EQ(memory_text(764.4 * 1024 * 1024), "764 MiB");
  EXPECT_EQ(memory_text(10.6 * 1024 * kGiB), "10.6 TiB");
}

TEST(MemoryLimits, NamesTheLimitExceededTheMost) {
  const std::vector<MemoryLimit> limits = {
      {4 * kGiB, MemoryKind::Resident, false, "--max-memory"},
      {kGiB, MemoryKind::AddressSpace, true, "ulimit -v"},
      {16 * kGiB, MemoryKind::Resident, false, "available memory"},
  };
  EXPECT_FALSE(exceeded_limit(limits, 0.5 * kGiB, 0.9 * kGiB));
  // Address space past ulimit -v, resident within --max-memory.
  const auto stacks = exceeded_limit(limits, 0.5 * kGiB, 2 * kGiB);
  ASSERT_TRUE(stacks);
  EXPECT_EQ(stacks->source, "ulimit -v");
  // The largest factor wins: 9 GiB of address space is 9x ulimit -v, 8 GiB resident 2x --max-memory.
  const auto both = exceeded_limit(limits, 8 * kGiB, 9 * kGiB);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->source, "ulimit -v");
  // Shared limits see every process at once; a per-process one sees one.
  const auto jobs = exceeded_limit(limits, 3 * kGiB, 0.5 * kGiB, 2);
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->source, "--max-memory");
  EXPECT_FALSE(exceeded_limit(limits, 3 * kGiB, 0.5 * kGiB, 1));
}

TEST(MemoryLimits, ReadsMaxMemoryUlimitAndTheMachine) {
  const std::vector<MemoryLimit> given = memory_limits(3 * kGiB);
  ASSERT_FALSE(given.empty());
  EXPECT_EQ(given.front().source, "--max-memory");
  EXPECT_EQ(given.front().bytes, 3 * kGiB);
  const auto available = std::find_if(given.begin(), given.end(),
                                      [](const MemoryLimit& limit) { return limit.source == "available memory"; });
  ASSERT_NE(available, given.end());  // /proc/meminfo is there on Linux
  EXPECT_GT(available->bytes, resident_bytes_now());
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of address space: nothing runs under a ulimit -v there.
  return;
#endif
  // ulimit -v in a child, as a shell's would be.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(64 * kGiB);
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(3);
    for (const MemoryLimit& found : memory_limits(std::nullopt)) {
      if (found.source == "ulimit -v") ::_exit(found.bytes == 64 * kGiB && found.kind == MemoryKind::AddressSpace ? 0 : 1);
    }
    ::_exit(2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong limit, 2: none found, 3: setrlimit failed";
}

}  // namespace
}  // namespace ddpsim::trace
