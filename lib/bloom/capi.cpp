// The C API of the age-partitioned (count window) and time-limited Bloom
// filters: argument checks, then the shared core.
#include <cmath>
#include <memory>

#include "bloom/age_partitioned.hpp"
#include "bloom/blocked.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "temporalfilters/age_bloom.h"
#include "temporalfilters/time_bloom.h"

using tf::fail;
using tf::guard;
using tf::bloom::AgePartitioned;
using tf::bloom::BlockedAgeBloom;
using Mode = tf::bloom::AgePartitioned::Mode;

// A count-window filter in one of the two layouts (exactly one is set).
struct tf_age_bloom {
    std::unique_ptr<AgePartitioned> classic;
    std::unique_ptr<BlockedAgeBloom> blocked;
};
struct tf_time_bloom : AgePartitioned {
    explicit tf_time_bloom(AgePartitioned &&f) : AgePartitioned(std::move(f)) {}
};

// The first versions of the versioned structs (never changed once released).
#define TF_AGE_BLOOM_INFO_V1 TF_VERSIONED_END(tf_age_bloom_info, flags)
#define TF_AGE_BLOOM_STATS_V1 TF_VERSIONED_END(tf_age_bloom_stats, fpr_now)
#define TF_TIME_BLOOM_INFO_V1 TF_VERSIONED_END(tf_time_bloom_info, flags)
#define TF_TIME_BLOOM_STATS_V1 TF_VERSIONED_END(tf_time_bloom_stats, fpr_now)

namespace {
const double kLn2 = std::log(2.0);

tf_status check_flags(uint32_t flags, uint32_t known) {
    if ((flags & ~known) != 0) return fail(TF_ERR_INVALID_ARGUMENT, "flags has unknown bits 0x%x", flags & ~known);
    return TF_OK;
}

// Slice bits for k generations of g inserts (fill ratio 1/2), or 0 when
// they exceed the limit.
uint64_t slice_bits_for(uint32_t k, double g) {
    double m = std::ceil(double(k) * g / kLn2);
    if (m < 64.0) m = 64.0;
    return m > double(tf::bloom::kMaxSliceBits) ? 0 : uint64_t(m);
}

tf_status make_age(uint32_t k, uint32_t l, uint64_t bits, uint64_t generation, uint32_t seed, tf_age_bloom **out) {
    std::unique_ptr<tf_age_bloom> h(new tf_age_bloom);
    h->classic.reset(new AgePartitioned(Mode::Count, k, l, bits, generation, 0, seed));
    *out = h.release();
    return TF_OK;
}

tf_status make_blocked(uint32_t k, uint32_t l, uint64_t blocks, uint64_t generation, uint32_t seed,
                       tf_age_bloom **out) {
    std::unique_ptr<tf_age_bloom> h(new tf_age_bloom);
    h->blocked.reset(new BlockedAgeBloom(k, l, blocks, generation, seed));
    *out = h.release();
    return TF_OK;
}

tf_status choose(double error_rate, uint32_t flags, uint32_t *k, uint32_t *l, double *fill) {
    tf_status st = check_flags(flags, TF_AGE_BLOOM_BLOCKED);
    if (st != TF_OK) return st;
    if (flags & TF_AGE_BLOOM_BLOCKED) return tf::bloom::choose_blocked(error_rate, k, l, fill);
    *fill = 0.5;
    return tf::bloom::choose_kl(error_rate, k, l);
}

tf_status check_span(uint64_t span, uint32_t l) {
    if (span < l)
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "span (%llu) must be >= l (%u): use a finer time unit so that a generation lasts a unit",
                    (unsigned long long)span, l);
    return TF_OK;
}

tf_status make_time(uint32_t k, uint32_t l, uint64_t bits, uint64_t span, uint32_t seed, tf_time_bloom **out) {
    *out = new tf_time_bloom(AgePartitioned(Mode::Time, k, l, bits, 0, span, seed));
    return TF_OK;
}
}  // namespace

extern "C" {

TF_API tf_status tf_age_bloom_choose(double error_rate, uint32_t flags, uint32_t *k, uint32_t *l, double *fill) {
    TF_REQUIRE_NONNULL(k, "k");
    TF_REQUIRE_NONNULL(l, "l");
    return guard([&] {
        double rho = 0.0;
        tf_status st = choose(error_rate, flags, k, l, &rho);
        if (st == TF_OK && fill != nullptr) *fill = rho;
        return st;
    });
}

TF_API tf_status tf_age_bloom_false_positive_rate(uint32_t k, uint32_t l, double *rate) {
    TF_REQUIRE_NONNULL(rate, "rate");
    tf_status st = AgePartitioned::check_params(k, l, 64);
    if (st != TF_OK) return st;
    return guard([&] {
        *rate = tf::bloom::steady_false_positive_rate(k, l);
        return TF_OK;
    });
}

TF_API tf_status tf_age_bloom_bits_per_element(uint32_t k, uint32_t l, double *bits) {
    TF_REQUIRE_NONNULL(bits, "bits");
    tf_status st = AgePartitioned::check_params(k, l, 64);
    if (st != TF_OK) return st;
    *bits = tf::bloom::steady_bits_per_element(k, l);
    return TF_OK;
}

TF_API tf_status tf_age_bloom_new_for(uint64_t capacity, double error_rate, uint32_t seed, uint32_t flags,
                                      tf_age_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = check_flags(flags, TF_AGE_BLOOM_BLOCKED);
        if (st != TF_OK) return st;
        if (capacity == 0) return fail(TF_ERR_INVALID_ARGUMENT, "capacity must be >= 1");
        uint32_t k, l;
        double rho;
        st = choose(error_rate, flags, &k, &l, &rho);
        if (st != TF_OK) return st;
        const uint64_t g = capacity / l + (capacity % l != 0);  // ceil, without overflow
        if (flags & TF_AGE_BLOOM_BLOCKED) {
            // k generations of g inserts leave a slice at fill rho.
            const double bits = std::ceil(double(k) * double(g) / -std::log1p(-rho));
            const double blocks = std::ceil(bits / tf::bloom::kLaneBits);
            if (blocks > double(tf::bloom::kBlockedMaxBlocks))
                return fail(TF_ERR_TOO_LARGE, "capacity %llu needs slices over 2^40 bits",
                            (unsigned long long)capacity);
            return make_blocked(k, l, uint64_t(blocks), g, seed, out);
        }
        const uint64_t bits = slice_bits_for(k, double(g));
        if (bits == 0)
            return fail(TF_ERR_TOO_LARGE, "capacity %llu needs slices over 2^40 bits", (unsigned long long)capacity);
        return make_age(k, l, bits, g, seed, out);
    });
}

TF_API tf_status tf_age_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, uint32_t flags,
                                  tf_age_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = check_flags(flags, TF_AGE_BLOOM_BLOCKED);
        if (st != TF_OK) return st;
        if (flags & TF_AGE_BLOOM_BLOCKED) {
            st = BlockedAgeBloom::check_params(k, l, slice_bits);
            if (st != TF_OK) return st;
            const uint64_t blocks = (slice_bits + tf::bloom::kLaneBits - 1) / tf::bloom::kLaneBits;
            uint64_t g = uint64_t(std::floor(double(blocks * tf::bloom::kLaneBits) * kLn2 / double(k)));
            if (g == 0) g = 1;
            return make_blocked(k, l, blocks, g, seed, out);
        }
        st = AgePartitioned::check_params(k, l, slice_bits);
        if (st != TF_OK) return st;
        uint64_t g = uint64_t(std::floor(double(slice_bits) * kLn2 / double(k)));
        if (g == 0) g = 1;
        return make_age(k, l, slice_bits, g, seed, out);
    });
}

TF_API void tf_age_bloom_free(tf_age_bloom *filter) { delete filter; }

TF_API tf_status tf_age_bloom_add(tf_age_bloom *filter, const void *key, size_t key_len) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    if (filter->blocked)
        filter->blocked->add(key, key_len);
    else
        filter->classic->add(key, key_len);
    return TF_OK;
}

TF_API tf_status tf_age_bloom_contains(const tf_age_bloom *filter, const void *key, size_t key_len, int *present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(present, "present");
    *present =
        (filter->blocked ? filter->blocked->contains(key, key_len) : filter->classic->contains(key, key_len)) ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_age_bloom_add_if_absent(tf_age_bloom *filter, const void *key, size_t key_len, int *was_present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(was_present, "was_present");
    bool present;
    if (filter->blocked) {
        present = filter->blocked->add_if_absent(key, key_len);
    } else {
        present = filter->classic->contains(key, key_len);
        if (!present) filter->classic->add(key, key_len);
    }
    *was_present = present ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_age_bloom_clear(tf_age_bloom *filter) {
    TF_REQUIRE_NONNULL(filter, "filter");
    if (filter->blocked)
        filter->blocked->clear();
    else
        filter->classic->clear();
    return TF_OK;
}

namespace {
// What stats and info report, from either layout.
struct AgeShape {
    uint32_t k, l, seed;
    uint64_t slices, slice_bits, generation, capacity, bits, inserts;
};

AgeShape shape_of(const tf_age_bloom *filter) {
    if (const BlockedAgeBloom *b = filter->blocked.get())
        return {b->k(),          b->l(),        b->seed(),       b->slices(), b->slice_bits(),
                b->generation(), b->capacity(), b->total_bits(), b->inserts()};
    const AgePartitioned &f = *filter->classic;
    return {f.k(),          f.l(),      f.seed(), f.slices(), f.slice_bits(0), f.generation(), f.window_elements(0),
            f.total_bits(), f.inserts()};
}
}  // namespace

TF_API tf_status tf_age_bloom_get_stats(const tf_age_bloom *filter, tf_age_bloom_stats *stats) {
    TF_REQUIRE_NONNULL(filter, "filter");
    return guard([&] {
        const AgeShape s = shape_of(filter);
        tf_age_bloom_stats full = TF_AGE_BLOOM_STATS_INIT;
        full.slices = s.slices;
        full.bits = s.bits;
        full.bits_per_element = double(s.bits) / double(s.capacity);
        full.inserts = s.inserts;
        full.fpr_now = filter->blocked ? filter->blocked->expected_fpr() : filter->classic->expected_fpr(0);
        return tf::put_versioned(stats, full, TF_AGE_BLOOM_STATS_V1, "stats");
    });
}

TF_API tf_status tf_age_bloom_get_info(const tf_age_bloom *filter, tf_age_bloom_info *info) {
    TF_REQUIRE_NONNULL(filter, "filter");
    const AgeShape s = shape_of(filter);
    tf_age_bloom_info full = TF_AGE_BLOOM_INFO_INIT;
    full.k = s.k;
    full.l = s.l;
    full.slice_bits = s.slice_bits;
    full.generation = s.generation;
    full.capacity = s.capacity;
    full.seed = s.seed;
    full.flags = filter->blocked ? TF_AGE_BLOOM_BLOCKED : 0;
    return tf::put_versioned(info, full, TF_AGE_BLOOM_INFO_V1, "info");
}

TF_API tf_status tf_age_bloom_memory(const tf_age_bloom *filter, size_t *bytes) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(bytes, "bytes");
    *bytes = sizeof(*filter) + (filter->blocked ? filter->blocked->memory() : filter->classic->memory());
    return TF_OK;
}

namespace {
size_t age_payload_size(const tf_age_bloom *f) {
    return f->blocked ? f->blocked->payload_size() : f->classic->payload_size();
}
}  // namespace

TF_API tf_status tf_age_bloom_serialized_size(const tf_age_bloom *filter, size_t *size) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(size, "size");
    if (!tf::wire::blob_size(age_payload_size(filter), size))
        return fail(TF_ERR_TOO_LARGE, "blob size overflows size_t");
    return TF_OK;
}

TF_API tf_status tf_age_bloom_serialize(const tf_age_bloom *filter, void *buf, size_t capacity, size_t *written) {
    TF_REQUIRE_NONNULL(filter, "filter");
    if (filter->blocked)
        return tf::wire::encode(tf::wire::Kind::AgeBloom, tf::bloom::kBlockedWireFlag, filter->blocked->payload_size(),
                                buf, capacity, written,
                                [&](tf::wire::Writer &w) { filter->blocked->write_payload(w); });
    return tf::wire::encode(tf::wire::Kind::AgeBloom, 0, filter->classic->payload_size(), buf, capacity, written,
                            [&](tf::wire::Writer &w) { filter->classic->write_payload(w); });
}

TF_API tf_status tf_age_bloom_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                          tf_age_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        TF_REQUIRE_NONNULL(buf, "buf");
        tf::DeserializeLimits limits;
        tf_status st = tf::read_deserialize_options(options, &limits);
        if (st != TF_OK) return st;
        tf::wire::Reader payload;
        uint32_t flags = 0;
        st = tf::wire::open(buf, len, tf::wire::Kind::AgeBloom, tf::bloom::kBlockedWireFlag, &flags, &payload);
        if (st != TF_OK) return st;
        std::unique_ptr<tf_age_bloom> h(new tf_age_bloom);
        if (flags & tf::bloom::kBlockedWireFlag) {
            st = BlockedAgeBloom::read(payload, limits, sizeof(tf_age_bloom), &h->blocked);
        } else {
            std::unique_ptr<AgePartitioned> f;
            st = AgePartitioned::read(Mode::Count, payload, limits, sizeof(tf_age_bloom), &f);
            h->classic = std::move(f);
        }
        if (st != TF_OK) return st;
        *out = h.release();
        return TF_OK;
    });
}

/* ---- time-limited ---------------------------------------------------- */

TF_API tf_status tf_time_bloom_new_for(uint64_t initial_capacity, double error_rate, uint64_t span, uint32_t seed,
                                       uint32_t flags, tf_time_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = check_flags(flags, 0);
        if (st != TF_OK) return st;
        if (initial_capacity == 0) return fail(TF_ERR_INVALID_ARGUMENT, "initial_capacity must be >= 1");
        uint32_t k, l;
        st = tf::bloom::choose_kl(error_rate, &k, &l);
        if (st != TF_OK) return st;
        st = check_span(span, l);
        if (st != TF_OK) return st;
        const uint64_t bits = slice_bits_for(k, std::ceil(double(initial_capacity) / double(l)));
        if (bits == 0)
            return fail(TF_ERR_TOO_LARGE, "initial capacity %llu needs slices over 2^40 bits",
                        (unsigned long long)initial_capacity);
        return make_time(k, l, bits, span, seed, out);
    });
}

TF_API tf_status tf_time_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t span, uint32_t seed,
                                   uint32_t flags, tf_time_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = check_flags(flags, 0);
        if (st != TF_OK) return st;
        st = AgePartitioned::check_params(k, l, slice_bits);
        if (st != TF_OK) return st;
        st = check_span(span, l);
        if (st != TF_OK) return st;
        return make_time(k, l, slice_bits, span, seed, out);
    });
}

TF_API void tf_time_bloom_free(tf_time_bloom *filter) { delete filter; }

TF_API tf_status tf_time_bloom_add(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_TIME(now);
    return guard([&] { return filter->add_at(key, key_len, now); });
}

TF_API tf_status tf_time_bloom_contains(const tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                        int *present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(present, "present");
    TF_REQUIRE_TIME(now);
    *present = filter->contains_at(key, key_len, now) ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_time_bloom_add_if_absent(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                             int *was_present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(was_present, "was_present");
    TF_REQUIRE_TIME(now);
    return guard([&] {
        const bool present = filter->contains_at(key, key_len, now);
        if (!present) {
            tf_status st = filter->add_at(key, key_len, now);
            if (st != TF_OK) return st;
        }
        *was_present = present ? 1 : 0;
        return TF_OK;
    });
}

TF_API tf_status tf_time_bloom_clear(tf_time_bloom *filter) {
    TF_REQUIRE_NONNULL(filter, "filter");
    filter->clear();
    return TF_OK;
}

TF_API tf_status tf_time_bloom_get_stats(const tf_time_bloom *filter, uint64_t now, tf_time_bloom_stats *stats) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_TIME(now);
    return guard([&] {
        tf_time_bloom_stats full = TF_TIME_BLOOM_STATS_INIT;
        full.slices = filter->slices();
        full.bits = filter->total_bits();
        const uint64_t n = filter->window_elements(now);
        full.bits_per_element = n ? double(full.bits) / double(n) : 0.0;
        full.inserts = filter->inserts();
        full.fpr_now = filter->expected_fpr(now);
        return tf::put_versioned(stats, full, TF_TIME_BLOOM_STATS_V1, "stats");
    });
}

TF_API tf_status tf_time_bloom_slice_bits(const tf_time_bloom *filter, uint64_t i, uint64_t *bits) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(bits, "bits");
    if (i >= filter->slices())
        return fail(TF_ERR_INVALID_ARGUMENT, "slice %llu does not exist (%zu slices)", (unsigned long long)i,
                    filter->slices());
    *bits = filter->slice_bits(size_t(i));
    return TF_OK;
}

TF_API tf_status tf_time_bloom_get_info(const tf_time_bloom *filter, tf_time_bloom_info *info) {
    TF_REQUIRE_NONNULL(filter, "filter");
    tf_time_bloom_info full = TF_TIME_BLOOM_INFO_INIT;
    full.k = filter->k();
    full.l = filter->l();
    full.span = filter->span();
    full.seed = filter->seed();
    full.flags = 0;
    return tf::put_versioned(info, full, TF_TIME_BLOOM_INFO_V1, "info");
}

TF_API tf_status tf_time_bloom_memory(const tf_time_bloom *filter, size_t *bytes) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(bytes, "bytes");
    *bytes = filter->memory();
    return TF_OK;
}

TF_API tf_status tf_time_bloom_serialized_size(const tf_time_bloom *filter, size_t *size) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(size, "size");
    if (!tf::wire::blob_size(filter->payload_size(), size)) return fail(TF_ERR_TOO_LARGE, "blob size overflows size_t");
    return TF_OK;
}

TF_API tf_status tf_time_bloom_serialize(const tf_time_bloom *filter, void *buf, size_t capacity, size_t *written) {
    TF_REQUIRE_NONNULL(filter, "filter");
    return tf::wire::encode(tf::wire::Kind::TimeBloom, 0, filter->payload_size(), buf, capacity, written,
                            [&](tf::wire::Writer &w) { filter->write_payload(w); });
}

TF_API tf_status tf_time_bloom_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                           tf_time_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        TF_REQUIRE_NONNULL(buf, "buf");
        tf::DeserializeLimits limits;
        tf_status st = tf::read_deserialize_options(options, &limits);
        if (st != TF_OK) return st;
        tf::wire::Reader payload;
        st = tf::wire::open(buf, len, tf::wire::Kind::TimeBloom, 0, nullptr, &payload);
        if (st != TF_OK) return st;
        std::unique_ptr<AgePartitioned> f;
        st = AgePartitioned::read(Mode::Time, payload, limits, 0, &f);
        if (st != TF_OK) return st;
        *out = new tf_time_bloom(std::move(*f));
        return TF_OK;
    });
}

}  // extern "C"
