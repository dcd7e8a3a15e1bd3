// Errors on purpose, so the sanitizer leg (scripts/test-asan.sh) proves its sanitizers report:
// `canary leak` loses a heap block (LeakSanitizer, which needs ptrace: where it cannot run, its
// leak checks would be silently missing from every test), `canary overflow` overflows an int
// (UBSan, fatal under the asan preset's -fno-sanitize-recover=undefined).
#include <climits>
#include <cstdio>
#include <cstring>

namespace {

__attribute__((noinline)) void lose_a_block() {
  char* block = new char[4242];
  std::memset(block, 1, 4242);
  std::printf("allocated %d\n", block[0]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "leak") == 0) {
    lose_a_block();
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "overflow") == 0) {
    volatile int big = INT_MAX;
    std::printf("%d\n", big + argc);
    return 0;
  }
  std::fprintf(stderr, "canary: expected 'leak' or 'overflow'\n");
  return 2;
}
