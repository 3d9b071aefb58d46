// Zero-initialised, cache-line-aligned arrays for the structures' tables.
// Large tables come from calloc (fresh zero pages from the kernel, nothing
// touched until used); the pointer is aligned by hand to 64 bytes.
#ifndef TF_LIB_COMMON_MEMORY_HPP
#define TF_LIB_COMMON_MEMORY_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace tf {

constexpr size_t kCacheLine = 64;

// Checked a*b; false on overflow.
inline bool mul_overflows(size_t a, size_t b, size_t *out) { return __builtin_mul_overflow(a, b, out); }

// Saturating addition for timestamps.
inline uint64_t sat_add(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

template <class T>
class AlignedArray {
   public:
    AlignedArray() = default;
    // Throws std::bad_alloc on failure. `n * sizeof(T)` must not overflow
    // (checked by the caller, which reports TF_ERR_TOO_LARGE).
    explicit AlignedArray(size_t n) : n_(n) {
        size_t bytes = n * sizeof(T) + kCacheLine;
        raw_ = std::calloc(1, bytes);
        if (raw_ == nullptr) throw std::bad_alloc();
        uintptr_t p = reinterpret_cast<uintptr_t>(raw_);
        p = (p + kCacheLine - 1) & ~uintptr_t(kCacheLine - 1);
        data_ = reinterpret_cast<T *>(p);
    }
    ~AlignedArray() { std::free(raw_); }
    AlignedArray(const AlignedArray &) = delete;
    AlignedArray &operator=(const AlignedArray &) = delete;
    AlignedArray(AlignedArray &&o) noexcept { swap(o); }
    AlignedArray &operator=(AlignedArray &&o) noexcept {
        swap(o);
        return *this;
    }
    void swap(AlignedArray &o) noexcept {
        std::swap(raw_, o.raw_);
        std::swap(data_, o.data_);
        std::swap(n_, o.n_);
    }
    T *data() { return data_; }
    const T *data() const { return data_; }
    size_t size() const { return n_; }
    size_t bytes() const { return n_ * sizeof(T) + (raw_ ? kCacheLine : 0); }
    T &operator[](size_t i) { return data_[i]; }
    const T &operator[](size_t i) const { return data_[i]; }

   private:
    void *raw_ = nullptr;
    T *data_ = nullptr;
    size_t n_ = 0;
};

}  // namespace tf

#endif
