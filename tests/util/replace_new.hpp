// Replaces the global operator new and delete, every form, for a test
// program that must see the allocations of the libraries it loads (the
// dynamic linker binds their calls to these): include it in exactly one
// .cpp of the program, which defines
//   void *tu_new_allocate(std::size_t size);   // NULL when refused
//   void *tu_new_allocate_aligned(std::size_t size, std::align_val_t align);
// (with tu_replace_new::plain and ::aligned below for the memory itself).
// The forms that throw throw std::bad_alloc on NULL; blocks come from
// malloc (or posix_memalign) and go back to free, so AddressSanitizer and
// its leak checker still see each one. Used by tests/common/alloc_hook.cpp
// (refusing the n-th allocation) and tests/redis/new_count.cpp (counting
// bytes).
#ifndef TF_TESTS_REPLACE_NEW_HPP
#define TF_TESTS_REPLACE_NEW_HPP

#include <cstddef>
#include <cstdlib>
#include <new>

#include <algorithm>

void *tu_new_allocate(std::size_t size);
void *tu_new_allocate_aligned(std::size_t size, std::align_val_t align);

namespace tu_replace_new {
// A block of `size` bytes (a distinct one for 0), or NULL.
inline void *plain(std::size_t size) { return std::malloc(size == 0 ? 1 : size); }
// A block of `size` bytes aligned to `align`, or NULL.
inline void *aligned(std::size_t size, std::align_val_t align) {
    const std::size_t a = std::max(static_cast<std::size_t>(align), sizeof(void *));
    void *p = nullptr;
    return posix_memalign(&p, a, size == 0 ? 1 : size) == 0 ? p : nullptr;
}
inline void *or_throw(void *p) {
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
}  // namespace tu_replace_new

void *operator new(std::size_t size) { return tu_replace_new::or_throw(tu_new_allocate(size)); }
void *operator new[](std::size_t size) { return tu_replace_new::or_throw(tu_new_allocate(size)); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return tu_new_allocate(size); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return tu_new_allocate(size); }
void *operator new(std::size_t size, std::align_val_t a) {
    return tu_replace_new::or_throw(tu_new_allocate_aligned(size, a));
}
void *operator new[](std::size_t size, std::align_val_t a) {
    return tu_replace_new::or_throw(tu_new_allocate_aligned(size, a));
}
void *operator new(std::size_t size, std::align_val_t a, const std::nothrow_t &) noexcept {
    return tu_new_allocate_aligned(size, a);
}
void *operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t &) noexcept {
    return tu_new_allocate_aligned(size, a);
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

#endif
