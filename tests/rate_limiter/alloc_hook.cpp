// The allocation-failure hook of test_memory.c, reached from C: the
// limiter's internal counter (tf::rate::testing::allocations_left in
// lib/rate_limiter/rate_limiter.hpp; a hidden symbol, so this suite links
// the library's internal static archive).
#include "rate_limiter/rate_limiter.hpp"

extern "C" void limiter_fail_allocations_after(long n) { tf::rate::testing::allocations_left.store(n); }
