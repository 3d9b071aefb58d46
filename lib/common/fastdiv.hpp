// Division of 64-bit numbers by a divisor fixed at run time, without the
// divide instruction (40-90 cycles on the machines we measured): the
// quotient is the top 64 bits of n * M / 2^64 with M = ceil(2^128 / d),
// which is exact for every 64-bit n and d >= 2 (Lemire, Kaser, Kurz,
// "Faster remainder by direct computation", 2019: 2N fractional bits
// suffice for N-bit numerators). d = 1 is special-cased.
#ifndef TF_LIB_COMMON_FASTDIV_HPP
#define TF_LIB_COMMON_FASTDIV_HPP

#include <cstdint>

namespace tf {

__extension__ typedef unsigned __int128 u128;

class Divider {
   public:
    Divider() = default;
    explicit Divider(uint64_t d) : d_(d) {
        if (d > 1) {
            const u128 all = ~(u128)0;
            const u128 m = all / d + 1;  // ceil(2^128 / d)
            hi_ = uint64_t(m >> 64);
            lo_ = uint64_t(m);
        }
    }
    uint64_t divisor() const { return d_; }
    uint64_t div(uint64_t n) const {
        if (d_ == 1) return n;
        // (M * n) >> 128 with M = hi * 2^64 + lo; hi * n + (lo * n >> 64)
        // is below 2^128, so nothing is lost.
        const u128 low = ((u128)lo_ * n) >> 64;
        return uint64_t(((u128)hi_ * n + low) >> 64);
    }
    uint64_t mod(uint64_t n) const { return n - div(n) * d_; }

   private:
    uint64_t d_ = 1, hi_ = 0, lo_ = 0;
};

}  // namespace tf

#endif
