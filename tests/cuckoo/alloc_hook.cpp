// The allocation-failure hook of test_memory.c, reached from C: the
// filter's internal counter of table allocations
// (tf::cuckoo::testing::allocations_left in lib/cuckoo/rotating_cuckoo.hpp;
// a hidden symbol, so this suite links the library's internal static
// archive).
#include "cuckoo/rotating_cuckoo.hpp"

extern "C" void cuckoo_fail_allocations_after(long n) { tf::cuckoo::testing::allocations_left.store(n); }
