#include "common/hash.hpp"

#include <climits>

#include <murmurhash.h>

namespace tf {

bool murmur3_x64_128_reference(const void *data, size_t len, uint32_t seed, Hash128 *out) {
    if (len > UINT_MAX) return false;
    uint64_t words[2];
    lmmh_x64_128(data, static_cast<unsigned>(len), seed, words);
    out->h1 = words[0];
    out->h2 = words[1];
    return true;
}

}  // namespace tf
