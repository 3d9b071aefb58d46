// The allocation-failure hook of test_memory.c, reached from C: the
// library's one test counter of allocations (tf::testing::allocations_left
// in lib/common/memory.hpp, asked before each table allocation; a hidden
// symbol, so this suite links the library's internal static archive).
#include "common/memory.hpp"

extern "C" void rw_fail_allocations_after(long n) { tf::testing::allocations_left.store(n); }
