// Zero-initialised, cache-line-aligned arrays for the structures' tables.
// Large tables come from calloc (fresh zero pages from the kernel, nothing
// touched until used); the pointer is aligned by hand to 64 bytes.
#ifndef TF_LIB_COMMON_MEMORY_HPP
#define TF_LIB_COMMON_MEMORY_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include <sys/mman.h>

#include "temporalfilters/common.h"

namespace tf {

constexpr size_t kCacheLine = 64;

// Starts loading the cache line at p for reading (prefetch_read) or writing
// (prefetch_write); p need not be valid (a prefetch never faults). Every
// prefetch of the library goes through these, never __builtin_prefetch
// alone: GCC treats the builtin as having no effect, and GCC 12 at -O2
// deleted with no warning every prefetch of the classic Bloom filters' path
// (a loop that only prefetched, removed under C++'s forward-progress rule,
// -ffinite-loops), of the rotating cuckoo filter's batches and of the
// recency window's batches (calls to functions whose only statement was a
// prefetch, which its mod/ref analysis finds without effect and drops, at
// -O1 too; -fno-finite-loops does not bring those back). The empty asm that
// takes the address is an effect the compiler must keep in both cases; it
// costs at most a register move or lea. tests/check_prefetch.py reads the
// machine code of every hot path for its prefetch instruction.
inline void prefetch_read(const void *p) {
    __builtin_prefetch(p, 0);
    asm volatile("" : : "r"(p));
}
inline void prefetch_write(const void *p) {
    __builtin_prefetch(p, 1);
    asm volatile("" : : "r"(p));
}

namespace testing {
// The allocation-failure test hook of every structure: while
// allocations_left >= 0, how many more allocations succeed before every
// later one fails as if memory ran out; -1 (the default) turns it off.
// allocation_refused() asks it before each allocation of a table
// (ZeroedBlock below, the rate limiter's tables included) and of the rate
// limiter's rings and out-of-line keys (rate::allocate); a test that replaces the global operator new asks it
// there too and so sees every allocation (tests/common/alloc_hook.cpp).
// While the hook is on, `refused` counts the refusals and `bytes` adds up
// the bytes asked for (what a deserialize of an untrusted blob requests).
// Hidden symbols, not exported: the suites link the library's internal
// archive.
inline std::atomic<long> allocations_left{-1};
inline std::atomic<long> refused{0};
inline std::atomic<uint64_t> bytes{0};
}  // namespace testing

// Asked before each allocation the hook covers (`bytes`: its size): true
// when the test hook says this one fails (then the caller fails as on a
// real std::bad_alloc). One relaxed load when the hook is off.
inline bool allocation_refused(size_t bytes = 0) noexcept {
    if (testing::allocations_left.load(std::memory_order_relaxed) < 0) return false;
    testing::bytes.fetch_add(bytes, std::memory_order_relaxed);
    if (testing::allocations_left.fetch_sub(1, std::memory_order_relaxed) > 0) return false;
    testing::allocations_left.store(0, std::memory_order_relaxed);
    testing::refused.fetch_add(1, std::memory_order_relaxed);
    return true;
}

// Checked a*b; false on overflow.
inline bool mul_overflows(size_t a, size_t b, size_t *out) { return __builtin_mul_overflow(a, b, out); }

// Saturating addition for timestamps: a sum that would overflow is
// TF_RETRY_NEVER, the time that never comes.
inline uint64_t sat_add(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? TF_RETRY_NEVER : r;
}

// Tables of at least kHugeTableBytes are mapped directly, aligned to 2 MiB,
// and offered to transparent huge pages (madvise), so that a random access
// into a memory-resident table costs a cache miss and not also a TLB miss
// (tests/bench at 128 MiB: 5-15% faster sketch calls); a length that is
// not a multiple of 2 MiB ends in small pages. Smaller tables come from
// calloc. Either way the memory starts zeroed (fresh kernel pages,
// nothing touched until used).
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeTableBytes = size_t(4) << 20;

// A zeroed, 64-byte aligned block of raw memory (see above).
class ZeroedBlock {
   public:
    ZeroedBlock() = default;
    // Throws std::bad_alloc on failure (also when the test hook
    // allocation_refused() says so).
    explicit ZeroedBlock(size_t bytes);
    ~ZeroedBlock();
    ZeroedBlock(const ZeroedBlock &) = delete;
    ZeroedBlock &operator=(const ZeroedBlock &) = delete;
    ZeroedBlock(ZeroedBlock &&o) noexcept { swap(o); }
    ZeroedBlock &operator=(ZeroedBlock &&o) noexcept {
        swap(o);
        return *this;
    }
    void swap(ZeroedBlock &o) noexcept {
        std::swap(data_, o.data_);
        std::swap(raw_, o.raw_);
        std::swap(mapped_, o.mapped_);
        std::swap(footprint_, o.footprint_);
    }
    void *data() const { return data_; }
    // Bytes reserved for the block (alignment slack included).
    size_t footprint() const { return footprint_; }
    // The footprint a block of `bytes` will have, known before allocating
    // it (deserialize checks its memory limit with it).
    static size_t footprint_for(size_t bytes) { return mapped(bytes) ? page_round(bytes) : bytes + kCacheLine; }

   private:
    static constexpr size_t kPage = 4096;
    // Whether a block of `bytes` is mapped (rather than calloc'ed).
    static bool mapped(size_t bytes) { return bytes >= kHugeTableBytes && bytes <= SIZE_MAX - 2 * kHugePage; }
    static size_t page_round(size_t bytes) { return (bytes + kPage - 1) & ~(kPage - 1); }

    void *data_ = nullptr;
    void *raw_ = nullptr;  // calloc'ed pointer, or nullptr when mapped
    size_t mapped_ = 0;    // length of the mapping, or 0
    size_t footprint_ = 0;
};

inline ZeroedBlock::ZeroedBlock(size_t bytes) {
    if (allocation_refused(bytes)) throw std::bad_alloc();  // the test hook (above)
    if (mapped(bytes)) {
        // The mapping starts on a 2 MiB boundary and ends at the next 4 KiB
        // page: every whole 2 MiB of it can be a huge page and the tail
        // takes small pages, so no memory is held beyond the table's.
        const size_t len = page_round(bytes);
        const size_t map_len = len + kHugePage;
        void *p = mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        // Keep the 2 MiB-aligned part, give back the slack at both ends.
        const uintptr_t start = reinterpret_cast<uintptr_t>(p);
        const uintptr_t aligned = (start + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
        if (aligned > start) munmap(p, aligned - start);
        const uintptr_t end = start + map_len, used_end = aligned + len;
        if (end > used_end) munmap(reinterpret_cast<void *>(used_end), end - used_end);
        data_ = reinterpret_cast<void *>(aligned);
        mapped_ = len;
        footprint_ = len;
#ifdef MADV_HUGEPAGE
        madvise(data_, len, MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
        return;
    }
    raw_ = std::calloc(1, bytes + kCacheLine);
    if (raw_ == nullptr) throw std::bad_alloc();
    const uintptr_t p = reinterpret_cast<uintptr_t>(raw_);
    data_ = reinterpret_cast<void *>((p + kCacheLine - 1) & ~uintptr_t(kCacheLine - 1));
    footprint_ = bytes + kCacheLine;
}

inline ZeroedBlock::~ZeroedBlock() {
    if (mapped_ != 0)
        munmap(data_, mapped_);
    else
        std::free(raw_);
}

template <class T>
class AlignedArray {
   public:
    AlignedArray() = default;
    // Throws std::bad_alloc on failure. `n * sizeof(T)` must not overflow
    // (checked by the caller, which reports TF_ERR_TOO_LARGE).
    explicit AlignedArray(size_t n) : block_(checked_bytes(n)), n_(n) {}
    AlignedArray(AlignedArray &&o) noexcept = default;
    AlignedArray &operator=(AlignedArray &&o) noexcept = default;
    T *data() { return static_cast<T *>(block_.data()); }
    const T *data() const { return static_cast<const T *>(block_.data()); }
    size_t size() const { return n_; }
    size_t bytes() const { return block_.footprint(); }
    // bytes() of an array of n elements, before allocating it.
    static size_t bytes_for(size_t n) { return ZeroedBlock::footprint_for(n * sizeof(T)); }
    T &operator[](size_t i) { return data()[i]; }
    const T &operator[](size_t i) const { return data()[i]; }

   private:
    // n * sizeof(T), or std::bad_alloc when that does not fit a size_t (a
    // 32-bit build asked for more than its address space).
    static size_t checked_bytes(size_t n) {
        size_t bytes;
        if (mul_overflows(n, sizeof(T), &bytes)) throw std::bad_alloc();
        return bytes;
    }

    ZeroedBlock block_;
    size_t n_ = 0;
};

}  // namespace tf

#endif
