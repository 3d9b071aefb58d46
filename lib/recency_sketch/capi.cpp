// The C API of the RecencySketch: argument checks, then the C++ core.
#include <memory>

#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "recency_sketch/recency_sketch.hpp"

// The handle is the sketch itself (no extra indirection on the hot path).
struct tf_recency_sketch : tf::RecencySketch {
    explicit tf_recency_sketch(tf::RecencySketch &&s) : tf::RecencySketch(std::move(s)) {}
};

using tf::fail;
using tf::guard;
using tf::RecencySketch;

namespace {
// The caller's handle for a sketch (its table moves, nothing is copied).
tf_recency_sketch *adopt(std::unique_ptr<RecencySketch> s) { return new tf_recency_sketch(std::move(*s)); }
}  // namespace

extern "C" {

TF_API tf_status tf_recency_sketch_new(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags,
                                       tf_recency_sketch **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        size_t cells;
        tf_status st = RecencySketch::check_shape(width, depth, flags, &cells);
        if (st != TF_OK) return st;
        *out = adopt(std::unique_ptr<RecencySketch>(new RecencySketch(width, depth, seed, flags, cells)));
        return TF_OK;
    });
}

TF_API tf_status tf_recency_sketch_dimensions(uint64_t expected_keys, double p, uint32_t flags, uint64_t *width,
                                              uint32_t *depth) {
    return guard([&] { return RecencySketch::dimensions(expected_keys, p, flags, width, depth); });
}

TF_API tf_status tf_recency_sketch_new_for(uint64_t expected_keys, double p, uint32_t seed, uint32_t flags,
                                           tf_recency_sketch **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        uint64_t width;
        uint32_t depth;
        tf_status st = RecencySketch::dimensions(expected_keys, p, flags, &width, &depth);
        if (st != TF_OK) return st;
        return tf_recency_sketch_new(width, depth, seed, flags, out);
    });
}

TF_API void tf_recency_sketch_free(tf_recency_sketch *sketch) { delete sketch; }

TF_API tf_status tf_recency_sketch_update(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_TIME(now);
    sketch->update(key, key_len, now);
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_query(const tf_recency_sketch *sketch, const void *key, size_t key_len,
                                         uint64_t *last_seen) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(last_seen, "last_seen");
    *last_seen = sketch->query(key, key_len);
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_update_batch(tf_recency_sketch *sketch, const void *const *keys,
                                                const size_t *key_lens, size_t count, const uint64_t *times) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK || count == 0) return st;
    TF_REQUIRE_NONNULL(times, "times");
    for (size_t i = 0; i < count; ++i)
        if (times[i] == 0) return fail(TF_ERR_INVALID_ARGUMENT, "times[%zu] is 0; timestamps must be >= 1", i);
    sketch->update_batch(keys, key_lens, count, times);
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_query_batch(const tf_recency_sketch *sketch, const void *const *keys,
                                               const size_t *key_lens, size_t count, uint64_t *last_seen) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK || count == 0) return st;
    TF_REQUIRE_NONNULL(last_seen, "last_seen");
    sketch->query_batch(keys, key_lens, count, last_seen);
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_pace(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now,
                                        uint64_t interval, int *granted, uint64_t *next_allowed) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(granted, "granted");
    TF_REQUIRE_TIME(now);
    if (interval == 0) return fail(TF_ERR_INVALID_ARGUMENT, "interval must be >= 1");
    uint64_t next;
    *granted = sketch->pace(key, key_len, now, interval, &next) ? 1 : 0;
    if (next_allowed) *next_allowed = next;
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_ttl_insert(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now,
                                              uint64_t ttl) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_TIME(now);
    if (ttl == 0) return fail(TF_ERR_INVALID_ARGUMENT, "ttl must be >= 1");
    sketch->update(key, key_len, tf::sat_add(now, ttl));
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_ttl_maybe_live(const tf_recency_sketch *sketch, const void *key, size_t key_len,
                                                  uint64_t now, int *maybe_live, uint64_t *expires_at) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(maybe_live, "maybe_live");
    TF_REQUIRE_TIME(now);
    uint64_t expiry = sketch->query(key, key_len);
    *maybe_live = expiry > now ? 1 : 0;
    if (expires_at) *expires_at = expiry;
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_merge(tf_recency_sketch *dst, const tf_recency_sketch *src) {
    TF_REQUIRE_NONNULL(dst, "dst");
    TF_REQUIRE_NONNULL(src, "src");
    const RecencySketch &d = *dst, &s = *src;
    if (!d.compatible(s))
        return fail(TF_ERR_INCOMPATIBLE,
                    "cannot merge sketches of different shapes or seeds (%llux%u %s seed %u into %llux%u %s seed %u)",
                    (unsigned long long)s.width(), unsigned(s.depth()), s.blocked() ? "blocked" : "standard",
                    unsigned(s.seed()), (unsigned long long)d.width(), unsigned(d.depth()),
                    d.blocked() ? "blocked" : "standard", unsigned(d.seed()));
    dst->merge_from(s);
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_clear(tf_recency_sketch *sketch) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    sketch->clear();
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_error_estimate(const tf_recency_sketch *sketch, uint64_t since,
                                                  double *probability) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_NONNULL(probability, "probability");
    *probability = sketch->error_estimate(since);
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_memory(const tf_recency_sketch *sketch, size_t *bytes) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    TF_REQUIRE_NONNULL(bytes, "bytes");
    *bytes = sketch->memory();
    return TF_OK;
}

TF_API tf_status tf_recency_sketch_get_info(const tf_recency_sketch *sketch, tf_recency_sketch_info *info) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    const RecencySketch &s = *sketch;
    return tf::put_versioned(info, TF_VERSIONED_END(tf_recency_sketch_info, flags), "info",
                             [&](tf_recency_sketch_info &full) {
                                 full.width = s.width();
                                 full.cells = s.cells();
                                 full.depth = s.depth();
                                 full.seed = s.seed();
                                 full.flags = s.flags();
                             });
}

TF_API tf_status tf_recency_sketch_serialized_size(const tf_recency_sketch *sketch, size_t *size) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    return tf::wire::serialized_size(sketch->payload_size(), size);
}

TF_API tf_status tf_recency_sketch_serialize(const tf_recency_sketch *sketch, void *buf, size_t capacity,
                                             size_t *written) {
    TF_REQUIRE_NONNULL(sketch, "sketch");
    const RecencySketch &s = *sketch;
    return tf::wire::encode(tf::wire::Kind::RecencySketch, s.flags(), s.payload_size(), buf, capacity, written,
                            [&](tf::wire::Writer &w) { s.write_payload(w); });
}

TF_API tf_status tf_recency_sketch_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                               tf_recency_sketch **out) {
    return tf::wire::deserialize<RecencySketch>(buf, len, options, tf::wire::Kind::RecencySketch, out, adopt);
}

}  // extern "C"
