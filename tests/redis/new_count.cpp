// The bytes the program (and the libraries it loads) ask of the global
// operator new, for test_redis_limiter.c: this file replaces operator new
// and delete, every form (tests/util/replace_new.hpp), and the dynamic
// linker binds libtemporalfilters-redis's calls to them. Only counts:
// nothing is refused.
#include <atomic>
#include <cstdint>
#include <new>

#include "replace_new.hpp"

namespace {

std::atomic<uint64_t> asked{0};

}  // namespace

void *tu_new_allocate(std::size_t size) {
    asked.fetch_add(size, std::memory_order_relaxed);
    return tu_replace_new::plain(size);
}

void *tu_new_allocate_aligned(std::size_t size, std::align_val_t align) {
    asked.fetch_add(size, std::memory_order_relaxed);
    return tu_replace_new::aligned(size, align);
}

// Bytes asked of operator new since the program started.
extern "C" uint64_t nc_bytes(void) { return asked.load(std::memory_order_relaxed); }
