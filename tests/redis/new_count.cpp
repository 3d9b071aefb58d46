// The bytes the program (and the libraries it loads) ask of the global
// operator new, for test_redis_limiter.c: this file replaces operator new
// and delete (the plain and array forms, on malloc and free), and the
// dynamic linker binds libtemporalfilters-redis's calls to them. Only
// counts: nothing is refused.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

std::atomic<uint64_t> asked{0};

void *allocate(std::size_t size) {
    asked.fetch_add(size, std::memory_order_relaxed);
    return std::malloc(size == 0 ? 1 : size);
}

void *or_throw(void *p) {
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

}  // namespace

void *operator new(std::size_t size) { return or_throw(allocate(size)); }
void *operator new[](std::size_t size) { return or_throw(allocate(size)); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return allocate(size); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return allocate(size); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }

// Bytes asked of operator new since the program started.
extern "C" uint64_t nc_bytes(void) { return asked.load(std::memory_order_relaxed); }
