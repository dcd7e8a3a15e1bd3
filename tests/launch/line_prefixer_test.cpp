// Splitting a worker's output stream into prefixed lines.
#include "ddpsim/launch/line_prefixer.hpp"

#include <gtest/gtest.h>

namespace {

using ddpsim::launch::LinePrefixer;

TEST(LinePrefixer, PrefixesCompleteLines) {
  LinePrefixer prefixer("[rank 2] ");
  EXPECT_EQ(prefixer.feed("a\nb\n"), "[rank 2] a\n[rank 2] b\n");
  EXPECT_EQ(prefixer.finish(), "");
}

TEST(LinePrefixer, KeepsPartialLinesAcrossChunks) {
  LinePrefixer prefixer("[rank 0] ");
  EXPECT_EQ(prefixer.feed("hel"), "");
  EXPECT_EQ(prefixer.feed("lo\nwor"), "[rank 0] hello\n");
  EXPECT_EQ(prefixer.feed("ld"), "");
  EXPECT_EQ(prefixer.finish(), "[rank 0] world\n");
  EXPECT_EQ(prefixer.finish(), "");
}

TEST(LinePrefixer, KeepsEmptyLines) {
  LinePrefixer prefixer("> ");
  EXPECT_EQ(prefixer.feed("\n\nx\n"), "> \n> \n> x\n");
}

TEST(LinePrefixer, SplitsOverlongPartialLines) {
  LinePrefixer prefixer("p ", 4);
  EXPECT_EQ(prefixer.feed("abcdefghij"), "p abcd\np efgh\n");
  EXPECT_EQ(prefixer.feed("\n"), "p ij\n");
}

}  // namespace
