// The C API of the age-partitioned (count window, either layout) and
// time-limited Bloom filters: argument checks, then the filters.
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <variant>

#include "bloom/count_window.hpp"
#include "bloom/time_bloom.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "temporalfilters/age_bloom.h"
#include "temporalfilters/time_bloom.h"

using tf::check_flags;
using tf::fail;
using tf::guard;
using tf::bloom::BlockedAgeBloom;
using tf::bloom::ClassicAgeBloom;

// A count-window filter in the layout its flags chose.
struct tf_age_bloom {
    std::variant<ClassicAgeBloom, BlockedAgeBloom> f;
};
struct tf_time_bloom : tf::bloom::TimeBloom {
    explicit tf_time_bloom(tf::bloom::TimeBloom &&f) : TimeBloom(std::move(f)) {}
};

// The first versions of the versioned structs (never changed once released).
#define TF_AGE_BLOOM_INFO_V1 TF_VERSIONED_END(tf_age_bloom_info, flags)
#define TF_AGE_BLOOM_STATS_V1 TF_VERSIONED_END(tf_age_bloom_stats, fpr_now)
#define TF_TIME_BLOOM_INFO_V1 TF_VERSIONED_END(tf_time_bloom_info, flags)
#define TF_TIME_BLOOM_STATS_V1 TF_VERSIONED_END(tf_time_bloom_stats, fpr_now)

namespace {

// Calls fn(filter) with the filter of a handle: the count-window filter of
// the handle's layout, or the time-limited filter.
template <class H, class F>
decltype(auto) with_filter(H *h, F &&fn) {
    return std::visit(std::forward<F>(fn), h->f);
}
template <class F>
decltype(auto) with_filter(const tf_time_bloom *h, F &&fn) {
    return fn(static_cast<const tf::bloom::TimeBloom &>(*h));
}

// Calls fn(type tag) with the filter type the flags choose (flags checked).
// Where the library chooses (k, l) (`choosing`), TF_AGE_BLOOM_MIN_MEMORY
// is known too, for the classic layout only.
template <class T>
struct Tag {
    using type = T;
};
template <class F>
tf_status with_layout(uint32_t flags, bool choosing, F &&fn) {
    if (!choosing && (flags & TF_AGE_BLOOM_MIN_MEMORY))
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "TF_AGE_BLOOM_MIN_MEMORY applies where the library chooses (k, l): tf_age_bloom_choose and "
                    "tf_age_bloom_new_for");
    tf_status st = check_flags(flags, TF_AGE_BLOOM_BLOCKED | (choosing ? TF_AGE_BLOOM_MIN_MEMORY : 0u));
    if (st != TF_OK) return st;
    if ((flags & TF_AGE_BLOOM_BLOCKED) && (flags & TF_AGE_BLOOM_MIN_MEMORY))
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "TF_AGE_BLOOM_MIN_MEMORY is for the classic layout: a blocked query reads the same lines "
                    "whatever its shape, and its choice is already the one with the fewest bits");
    if (flags & TF_AGE_BLOOM_BLOCKED) return fn(Tag<BlockedAgeBloom>());
    return fn(Tag<ClassicAgeBloom>());
}

// The probe budget the flags ask for: the default, or none.
double probe_budget_of(uint32_t flags, uint32_t min_memory_flag) {
    return flags & min_memory_flag ? std::numeric_limits<double>::infinity() : tf::bloom::kDefaultProbeBudget;
}

template <class Filter>
tf_status make_age(const tf::bloom::CountShape &shape, uint32_t seed, tf_age_bloom **out) {
    *out = new tf_age_bloom{Filter(shape, seed)};
    return TF_OK;
}

tf_status check_span(uint64_t span, uint32_t l) {
    if (span < l)
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "span (%llu) must be >= l (%u): use a finer time unit so that a generation lasts a unit",
                    (unsigned long long)span, l);
    return TF_OK;
}

tf_status make_time(uint32_t k, uint32_t l, uint64_t bits, uint64_t span, uint32_t seed, tf_time_bloom **out) {
    *out = new tf_time_bloom(tf::bloom::TimeBloom(k, l, bits, span, seed));
    return TF_OK;
}

// ---- what either handle reports ----------------------------------------

// The handle and what its filter holds.
template <class H>
tf_status memory_of(const H *h, size_t *bytes) {
    TF_REQUIRE_NONNULL(h, "filter");
    TF_REQUIRE_NONNULL(bytes, "bytes");
    *bytes = sizeof(*h) + with_filter(h, [](const auto &f) { return f.memory(); });
    return TF_OK;
}

template <class H>
tf_status serialized_size_of(const H *h, size_t *size) {
    TF_REQUIRE_NONNULL(h, "filter");
    TF_REQUIRE_NONNULL(size, "size");
    if (!tf::wire::blob_size(with_filter(h, [](const auto &f) { return f.payload_size(); }), size))
        return fail(TF_ERR_TOO_LARGE, "blob size overflows size_t");
    return TF_OK;
}

template <class H>
tf_status serialize_as(const H *h, tf::wire::Kind kind, void *buf, size_t capacity, size_t *written) {
    TF_REQUIRE_NONNULL(h, "filter");
    return with_filter(h, [&](const auto &f) {
        return tf::wire::encode(kind, f.wire_flags(), f.payload_size(), buf, capacity, written,
                                [&](tf::wire::Writer &w) { f.write_payload(w); });
    });
}

// Every deserialize: the arguments, the options, the envelope of `kind`
// with flags among `known_flags`, then read(payload, limits, flags) makes
// the filter.
template <class H, class Read>
tf_status deserialize_as(const void *buf, size_t len, const tf_deserialize_options *options, tf::wire::Kind kind,
                         uint32_t known_flags, H **out, Read &&read) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        TF_REQUIRE_NONNULL(buf, "buf");
        tf::DeserializeLimits limits;
        tf_status st = tf::read_deserialize_options(options, &limits);
        if (st != TF_OK) return st;
        uint32_t flags = 0;
        tf::wire::Reader payload;
        st = tf::wire::open(buf, len, kind, known_flags, &flags, &payload);
        if (st != TF_OK) return st;
        return read(payload, limits, flags);
    });
}

// A filter of type Filter read from a payload into a new handle H (its
// memory checked against the limits before allocating).
template <class Filter, class H>
tf_status read_into(tf::wire::Reader &payload, const tf::DeserializeLimits &limits, H **out) {
    Filter f;
    tf_status st = Filter::read(payload, limits, sizeof(H), &f);
    if (st != TF_OK) return st;
    *out = new H{std::move(f)};
    return TF_OK;
}
}  // namespace

extern "C" {

TF_API tf_status tf_age_bloom_choose(double error_rate, uint32_t flags, uint32_t *k, uint32_t *l, double *fill) {
    TF_REQUIRE_NONNULL(k, "k");
    TF_REQUIRE_NONNULL(l, "l");
    return guard([&] {
        return with_layout(flags, true, [&](auto tag) {
            using Filter = typename decltype(tag)::type;
            uint32_t ck = 0, cl = 0;
            double rho = 0.0;
            tf_status st = Filter::choose(error_rate, probe_budget_of(flags, TF_AGE_BLOOM_MIN_MEMORY), &ck, &cl, &rho);
            if (st != TF_OK) return st;
            *k = ck;
            *l = cl;
            if (fill != nullptr) *fill = rho;
            return TF_OK;
        });
    });
}

static_assert(TF_AGE_BLOOM_PROBE_BUDGET == tf::bloom::kDefaultProbeBudget, "one probe budget");

TF_API tf_status tf_age_bloom_expected_probes(uint32_t k, uint32_t l, double *absent, double *present) {
    if (absent == nullptr && present == nullptr) return fail(TF_ERR_NULL, "absent and present are both NULL");
    tf_status st = tf::bloom::check_classic_params(k, l, 64);
    if (st != TF_OK) return st;
    return guard([&] {
        const double a = absent != nullptr ? tf::bloom::steady_absent_probes(k, l) : 0.0;
        const double p = present != nullptr ? tf::bloom::steady_present_probes(k, l) : 0.0;
        if (absent != nullptr) *absent = a;
        if (present != nullptr) *present = p;
        return TF_OK;
    });
}

TF_API tf_status tf_age_bloom_false_positive_rate(uint32_t k, uint32_t l, double *rate) {
    TF_REQUIRE_NONNULL(rate, "rate");
    tf_status st = tf::bloom::check_classic_params(k, l, 64);
    if (st != TF_OK) return st;
    return guard([&] {
        *rate = tf::bloom::steady_false_positive_rate(k, l);
        return TF_OK;
    });
}

TF_API tf_status tf_age_bloom_bits_per_element(uint32_t k, uint32_t l, double *bits) {
    TF_REQUIRE_NONNULL(bits, "bits");
    tf_status st = tf::bloom::check_classic_params(k, l, 64);
    if (st != TF_OK) return st;
    *bits = tf::bloom::steady_bits_per_element(k, l);
    return TF_OK;
}

TF_API tf_status tf_age_bloom_new_for(uint64_t capacity, double error_rate, uint32_t seed, uint32_t flags,
                                      tf_age_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        return with_layout(flags, true, [&](auto tag) {
            using Filter = typename decltype(tag)::type;
            tf::bloom::CountShape shape;
            tf_status st =
                Filter::shape_for(capacity, error_rate, probe_budget_of(flags, TF_AGE_BLOOM_MIN_MEMORY), &shape);
            if (st != TF_OK) return st;
            return make_age<Filter>(shape, seed, out);
        });
    });
}

TF_API tf_status tf_age_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, uint32_t flags,
                                  tf_age_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        return with_layout(flags, false, [&](auto tag) {
            using Filter = typename decltype(tag)::type;
            tf::bloom::CountShape shape;
            tf_status st = Filter::shape_of(k, l, slice_bits, &shape);
            if (st != TF_OK) return st;
            return make_age<Filter>(shape, seed, out);
        });
    });
}

TF_API void tf_age_bloom_free(tf_age_bloom *filter) { delete filter; }

TF_API tf_status tf_age_bloom_add(tf_age_bloom *filter, const void *key, size_t key_len) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    with_filter(filter, [&](auto &f) { f.add(key, key_len); });
    return TF_OK;
}

TF_API tf_status tf_age_bloom_contains(const tf_age_bloom *filter, const void *key, size_t key_len, int *present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(present, "present");
    *present = with_filter(filter, [&](const auto &f) { return f.contains(key, key_len); }) ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_age_bloom_add_if_absent(tf_age_bloom *filter, const void *key, size_t key_len, int *was_present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(was_present, "was_present");
    *was_present = with_filter(filter, [&](auto &f) { return f.add_if_absent(key, key_len); }) ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_age_bloom_add_batch(tf_age_bloom *filter, const void *const *keys, const size_t *key_lens,
                                        size_t count) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, tf::kNoTime, nullptr, nullptr);
    if (st != TF_OK) return st;
    with_filter(filter, [&](auto &f) { f.add_batch(keys, key_lens, count); });
    return TF_OK;
}

TF_API tf_status tf_age_bloom_contains_batch(const tf_age_bloom *filter, const void *const *keys,
                                             const size_t *key_lens, size_t count, int *present) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, tf::kNoTime, present, "present");
    if (st != TF_OK || count == 0) return st;
    with_filter(filter, [&](const auto &f) { f.contains_batch(keys, key_lens, count, present); });
    return TF_OK;
}

TF_API tf_status tf_age_bloom_add_if_absent_batch(tf_age_bloom *filter, const void *const *keys, const size_t *key_lens,
                                                  size_t count, int *was_present) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, tf::kNoTime, was_present, "was_present");
    if (st != TF_OK || count == 0) return st;
    with_filter(filter, [&](auto &f) { f.add_if_absent_batch(keys, key_lens, count, was_present); });
    return TF_OK;
}

TF_API tf_status tf_age_bloom_clear(tf_age_bloom *filter) {
    TF_REQUIRE_NONNULL(filter, "filter");
    with_filter(filter, [](auto &f) { f.clear(); });
    return TF_OK;
}

TF_API tf_status tf_age_bloom_get_stats(const tf_age_bloom *filter, tf_age_bloom_stats *stats) {
    TF_REQUIRE_NONNULL(filter, "filter");
    return guard([&] {
        return tf::put_versioned(stats, TF_AGE_BLOOM_STATS_V1, "stats", [&](tf_age_bloom_stats &full) {
            with_filter(filter, [&](const auto &f) {
                full.slices = f.slices();
                full.bits = f.total_bits();
                full.bits_per_element = double(full.bits) / double(f.capacity());
                full.inserts = f.inserts();
                full.fpr_now = f.expected_fpr();
            });
        });
    });
}

TF_API tf_status tf_age_bloom_get_info(const tf_age_bloom *filter, tf_age_bloom_info *info) {
    TF_REQUIRE_NONNULL(filter, "filter");
    return tf::put_versioned(info, TF_AGE_BLOOM_INFO_V1, "info", [&](tf_age_bloom_info &full) {
        with_filter(filter, [&](const auto &f) {
            full.k = f.k();
            full.l = f.l();
            full.slice_bits = f.slice_bits();
            full.generation = f.generation();
            full.capacity = f.capacity();
            full.seed = f.seed();
            full.flags = f.flags();
        });
    });
}

TF_API tf_status tf_age_bloom_memory(const tf_age_bloom *filter, size_t *bytes) { return memory_of(filter, bytes); }

TF_API tf_status tf_age_bloom_serialized_size(const tf_age_bloom *filter, size_t *size) {
    return serialized_size_of(filter, size);
}

TF_API tf_status tf_age_bloom_serialize(const tf_age_bloom *filter, void *buf, size_t capacity, size_t *written) {
    return serialize_as(filter, tf::wire::Kind::AgeBloom, buf, capacity, written);
}

TF_API tf_status tf_age_bloom_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                          tf_age_bloom **out) {
    return deserialize_as(buf, len, options, tf::wire::Kind::AgeBloom, tf::bloom::kBlockedWireFlag, out,
                          [&](tf::wire::Reader &payload, const tf::DeserializeLimits &limits, uint32_t flags) {
                              const uint32_t layout = flags & tf::bloom::kBlockedWireFlag ? TF_AGE_BLOOM_BLOCKED : 0;
                              return with_layout(layout, false, [&](auto tag) {
                                  return read_into<typename decltype(tag)::type>(payload, limits, out);
                              });
                          });
}

/* ---- time-limited ---------------------------------------------------- */

TF_API tf_status tf_time_bloom_new_for(uint64_t initial_capacity, double error_rate, uint64_t span, uint32_t seed,
                                       uint32_t flags, tf_time_bloom **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = check_flags(flags, TF_TIME_BLOOM_MIN_MEMORY);
        if (st != TF_OK) return st;
        if (initial_capacity == 0) return fail(TF_ERR_INVALID_ARGUMENT, "initial_capacity must be >= 1");
        uint32_t k, l;
        st = tf::bloom::choose_kl(error_rate, probe_budget_of(flags, TF_TIME_BLOOM_MIN_MEMORY), &k, &l);
        if (st != TF_OK) return st;
        st = check_span(span, l);
        if (st != TF_OK) return st;
        const uint64_t bits = tf::bloom::classic_slice_bits(k, std::ceil(double(initial_capacity) / double(l)));
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
        if (flags & TF_TIME_BLOOM_MIN_MEMORY)
            return fail(TF_ERR_INVALID_ARGUMENT,
                        "TF_TIME_BLOOM_MIN_MEMORY applies where the library chooses (k, l): tf_time_bloom_new_for");
        tf_status st = check_flags(flags, 0);
        if (st != TF_OK) return st;
        st = tf::bloom::check_classic_params(k, l, slice_bits);
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
    return guard([&] { return filter->add(key, key_len, now); });
}

TF_API tf_status tf_time_bloom_contains(const tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                        int *present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(present, "present");
    TF_REQUIRE_TIME(now);
    *present = filter->contains(key, key_len, now) ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_time_bloom_add_if_absent(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                             int *was_present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(was_present, "was_present");
    TF_REQUIRE_TIME(now);
    return guard([&] {
        const bool present = filter->contains(key, key_len, now);
        if (!present) {
            tf_status st = filter->add(key, key_len, now);
            if (st != TF_OK) return st;
        }
        *was_present = present ? 1 : 0;
        return TF_OK;
    });
}

TF_API tf_status tf_time_bloom_add_batch(tf_time_bloom *filter, const void *const *keys, const size_t *key_lens,
                                         size_t count, uint64_t now) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, now, nullptr, nullptr);
    if (st != TF_OK || count == 0) return st;
    return guard([&] {
        size_t done = 0;
        tf_status s = filter->add_batch(keys, key_lens, count, now, &done);
        return s == TF_OK ? TF_OK : tf::batch_failed(s, done);
    });
}

TF_API tf_status tf_time_bloom_contains_batch(const tf_time_bloom *filter, const void *const *keys,
                                              const size_t *key_lens, size_t count, uint64_t now, int *present) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, now, present, "present");
    if (st != TF_OK || count == 0) return st;
    filter->contains_batch(keys, key_lens, count, now, present);
    return TF_OK;
}

TF_API tf_status tf_time_bloom_add_if_absent_batch(tf_time_bloom *filter, const void *const *keys,
                                                   const size_t *key_lens, size_t count, uint64_t now,
                                                   int *was_present) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, now, was_present, "was_present");
    if (st != TF_OK || count == 0) return st;
    return guard([&] {
        size_t done = 0;
        tf_status s = filter->add_if_absent_batch(keys, key_lens, count, now, was_present, &done);
        return s == TF_OK ? TF_OK : tf::batch_failed(s, done);
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
        return tf::put_versioned(stats, TF_TIME_BLOOM_STATS_V1, "stats", [&](tf_time_bloom_stats &full) {
            full.slices = filter->slices();
            full.bits = filter->total_bits();
            const uint64_t n = filter->window_elements(now);
            full.bits_per_element = n ? double(full.bits) / double(n) : 0.0;
            full.inserts = filter->inserts();
            full.fpr_now = filter->expected_fpr(now);
        });
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
    return tf::put_versioned(info, TF_TIME_BLOOM_INFO_V1, "info", [&](tf_time_bloom_info &full) {
        full.k = filter->k();
        full.l = filter->l();
        full.span = filter->span();
        full.seed = filter->seed();
        full.flags = 0;
    });
}

TF_API tf_status tf_time_bloom_memory(const tf_time_bloom *filter, size_t *bytes) { return memory_of(filter, bytes); }

TF_API tf_status tf_time_bloom_serialized_size(const tf_time_bloom *filter, size_t *size) {
    return serialized_size_of(filter, size);
}

TF_API tf_status tf_time_bloom_serialize(const tf_time_bloom *filter, void *buf, size_t capacity, size_t *written) {
    return serialize_as(filter, tf::wire::Kind::TimeBloom, buf, capacity, written);
}

TF_API tf_status tf_time_bloom_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                           tf_time_bloom **out) {
    return deserialize_as(buf, len, options, tf::wire::Kind::TimeBloom, 0, out,
                          [&](tf::wire::Reader &payload, const tf::DeserializeLimits &limits, uint32_t) {
                              return read_into<tf::bloom::TimeBloom>(payload, limits, out);
                          });
}

}  // extern "C"
