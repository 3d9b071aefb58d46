// The allocation hook of test_alloc_failure.c, reached from C. It makes the
// library's one test counter (tf::testing::allocations_left in
// lib/common/memory.hpp) see every allocation: the library asks it itself
// before each table (ZeroedBlock) and each of the rate limiter's rings and
// key tables, and this file replaces the global operator new (every form)
// so that the standard containers, the handles and every other object the
// library makes ask it too. The replacements allocate with malloc and free
// with free, so AddressSanitizer and its leak checker still see each block.
// A hidden symbol: this program links the library's internal archive.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "common/memory.hpp"

namespace {

void *allocate(std::size_t size) {
    if (tf::allocation_refused(size)) return nullptr;
    return std::malloc(size == 0 ? 1 : size);
}

void *allocate_aligned(std::size_t size, std::align_val_t align) {
    if (tf::allocation_refused(size)) return nullptr;
    const std::size_t a = std::max(static_cast<std::size_t>(align), sizeof(void *));
    void *p = nullptr;
    return posix_memalign(&p, a, size == 0 ? 1 : size) == 0 ? p : nullptr;
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
void *operator new(std::size_t size, std::align_val_t a) { return or_throw(allocate_aligned(size, a)); }
void *operator new[](std::size_t size, std::align_val_t a) { return or_throw(allocate_aligned(size, a)); }
void *operator new(std::size_t size, std::align_val_t a, const std::nothrow_t &) noexcept {
    return allocate_aligned(size, a);
}
void *operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t &) noexcept {
    return allocate_aligned(size, a);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }

// While n >= 0, n more allocations succeed and every later one fails; -1
// turns the hook off. Arming it (n >= 0) clears the counts below.
extern "C" void ah_refuse_after(long n) {
    if (n >= 0) {
        tf::testing::refused.store(0);
        tf::testing::bytes.store(0);
    }
    tf::testing::allocations_left.store(n);
}

// How many more allocations succeed now (-1: off).
extern "C" long ah_left(void) { return tf::testing::allocations_left.load(); }

// Allocations refused since the hook was armed.
extern "C" long ah_refused(void) { return tf::testing::refused.load(); }

// Bytes asked for since the hook was armed (refused ones included).
extern "C" uint64_t ah_bytes(void) { return tf::testing::bytes.load(); }

// Turns the hook off for a moment (the test's own work between calls) and
// returns what ah_resume() gives back; the counts are kept.
extern "C" long ah_pause(void) { return tf::testing::allocations_left.exchange(-1); }
extern "C" void ah_resume(long left) { tf::testing::allocations_left.store(left); }
