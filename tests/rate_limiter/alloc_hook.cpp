// The internals test_memory.c reaches from C: the allocation-failure hook
// (the library's one test counter of allocations,
// tf::testing::allocations_left in lib/common/memory.hpp, asked by the
// limiter's allocate()) and the shard a key falls into. Both are hidden
// symbols, so this suite links the library's internal static archive.
#include "common/memory.hpp"
#include "rate_limiter/rate_limiter.hpp"

extern "C" void limiter_fail_allocations_after(long n) { tf::testing::allocations_left.store(n); }

extern "C" size_t limiter_shard_of(const void *key, size_t len, uint32_t seed) {
    return tf::rate::RateLimiter::shard_of_key(key, len, seed);
}
