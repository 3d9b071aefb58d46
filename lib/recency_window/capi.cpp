// The C API of the recency window: argument checks, then the C++ core
// (recency_window.hpp).
#include <algorithm>
#include <memory>

#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "recency_window/recency_window.hpp"
#include "temporalfilters/recency_window.h"

// The handle is the structure itself (no extra indirection on the hot path).
struct tf_recency_window : tf::recency::RecencyWindow {
    explicit tf_recency_window(const tf::recency::Config &c) : tf::recency::RecencyWindow(c) {}
    explicit tf_recency_window(tf::recency::RecencyWindow &&w) : tf::recency::RecencyWindow(std::move(w)) {}
};

using tf::fail;
using tf::guard;
using tf::recency::Config;
using tf::recency::Mode;
using tf::recency::RecencyWindow;

namespace {

tf_recency_window *adopt(std::unique_ptr<RecencyWindow> w) { return new tf_recency_window(std::move(*w)); }

// Keys per prefetched group of the batch calls.
constexpr size_t kBatchGroup = 8;

uint64_t answer(int64_t r) { return r < 0 ? TF_RECENCY_WINDOW_NOT_IN_WINDOW : uint64_t(r); }

// The options, read and checked, into a config (block default resolved).
tf_status read_options(const tf_recency_window_options *in, Config *out) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    tf_status st = tf::get_versioned(in, &o, TF_VERSIONED_END(tf_recency_window_options, flags), "options");
    if (st != TF_OK) return st;
    if (o.mode > TF_RECENCY_WINDOW_OPTIMAL_SM)
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "mode is %u, not TF_RECENCY_WINDOW_HISTORICAL (0), _EXACT (1) or _OPTIMAL_SM (2)", o.mode);
    if (o.window == 0) return fail(TF_ERR_INVALID_ARGUMENT, "window must be >= 1");
    Config c;
    c.mode = Mode(o.mode);
    c.window = o.window;
    c.inv_eps = o.inv_eps;
    c.block = o.block;
    if (c.mode == Mode::OptimalSM && c.block == 0 && c.inv_eps != 0)
        c.block = std::max<uint64_t>(1, c.window / c.inv_eps);
    c.delta = o.delta;
    c.seed = o.seed;
    c.max_memory = o.max_memory;
    c.flags = o.flags;
    st = RecencyWindow::check(c);
    if (st != TF_OK) return st;
    *out = c;
    return TF_OK;
}

// Runs `each(i, sig)` for keys[0 .. count) in order, each group of keys
// hashed and every level's buckets prefetched before the first of it.
template <class W, class F>
void for_each_prefetched(W &w, const void *const *keys, const size_t *lens, size_t count, F &&each) {
    uint64_t sig[kBatchGroup];
    for (size_t base = 0; base < count; base += kBatchGroup) {
        const size_t n = std::min(kBatchGroup, count - base);
        for (size_t i = 0; i < n; ++i) {
            sig[i] = w.signature(keys[base + i], lens[base + i]);
            w.prefetch(sig[i]);
        }
        for (size_t i = 0; i < n; ++i) each(base + i, sig[i]);
    }
}

}  // namespace

extern "C" {

TF_API tf_status tf_recency_window_new(const tf_recency_window_options *options, tf_recency_window **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        Config c;
        tf_status st = read_options(options, &c);
        if (st != TF_OK) return st;
        const size_t bytes = RecencyWindow::memory_for(c);
        if (c.max_memory != 0 && bytes > c.max_memory)
            return fail(TF_ERR_TOO_LARGE, "the structure would hold %zu bytes, above max_memory (%llu bytes)", bytes,
                        (unsigned long long)c.max_memory);
        *out = new tf_recency_window(c);
        return TF_OK;
    });
}

TF_API tf_status tf_recency_window_memory_for(const tf_recency_window_options *options, size_t *bytes) {
    TF_REQUIRE_NONNULL(bytes, "bytes");
    return guard([&] {
        Config c;
        tf_status st = read_options(options, &c);
        if (st != TF_OK) return st;
        *bytes = RecencyWindow::memory_for(c);
        return TF_OK;
    });
}

TF_API void tf_recency_window_free(tf_recency_window *window) { delete window; }

TF_API tf_status tf_recency_window_insert(tf_recency_window *window, const void *key, size_t key_len) {
    TF_REQUIRE_NONNULL(window, "window");
    TF_REQUIRE_KEY(key, key_len);
    window->insert(window->signature(key, key_len));
    return TF_OK;
}

TF_API tf_status tf_recency_window_query(const tf_recency_window *window, const void *key, size_t key_len,
                                         uint64_t *recency) {
    TF_REQUIRE_NONNULL(window, "window");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(recency, "recency");
    *recency = answer(window->query(window->signature(key, key_len)));
    return TF_OK;
}

TF_API tf_status tf_recency_window_insert_report(tf_recency_window *window, const void *key, size_t key_len,
                                                 uint64_t *previous) {
    TF_REQUIRE_NONNULL(window, "window");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(previous, "previous");
    *previous = answer(window->insert_report(window->signature(key, key_len)));
    return TF_OK;
}

TF_API tf_status tf_recency_window_insert_batch(tf_recency_window *window, const void *const *keys,
                                                const size_t *key_lens, size_t count) {
    TF_REQUIRE_NONNULL(window, "window");
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK) return st;
    for_each_prefetched(*window, keys, key_lens, count, [&](size_t, uint64_t sig) { window->insert(sig); });
    return TF_OK;
}

TF_API tf_status tf_recency_window_query_batch(const tf_recency_window *window, const void *const *keys,
                                               const size_t *key_lens, size_t count, uint64_t *recency) {
    TF_REQUIRE_NONNULL(window, "window");
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK) return st;
    if (count == 0) return TF_OK;
    TF_REQUIRE_NONNULL(recency, "recency");
    for_each_prefetched(*window, keys, key_lens, count,
                        [&](size_t i, uint64_t sig) { recency[i] = answer(window->query(sig)); });
    return TF_OK;
}

TF_API tf_status tf_recency_window_insert_report_batch(tf_recency_window *window, const void *const *keys,
                                                       const size_t *key_lens, size_t count, uint64_t *previous) {
    TF_REQUIRE_NONNULL(window, "window");
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK) return st;
    if (count == 0) return TF_OK;
    TF_REQUIRE_NONNULL(previous, "previous");
    for_each_prefetched(*window, keys, key_lens, count,
                        [&](size_t i, uint64_t sig) { previous[i] = answer(window->insert_report(sig)); });
    return TF_OK;
}

TF_API tf_status tf_recency_window_clear(tf_recency_window *window) {
    TF_REQUIRE_NONNULL(window, "window");
    window->clear();
    return TF_OK;
}

TF_API tf_status tf_recency_window_get_info(const tf_recency_window *window, tf_recency_window_info *info) {
    TF_REQUIRE_NONNULL(window, "window");
    const RecencyWindow &w = *window;
    const Config &c = w.config();
    return tf::put_versioned(info, TF_VERSIONED_END(tf_recency_window_info, slack), "info",
                             [&](tf_recency_window_info &full) {
                                 full.window = c.window;
                                 full.inv_eps = c.inv_eps;
                                 full.block = c.block;
                                 full.max_memory = c.max_memory;
                                 full.delta = c.delta;
                                 full.mode = uint32_t(c.mode);
                                 full.seed = c.seed;
                                 full.flags = c.flags;
                                 full.signature_bits = RecencyWindow::signature_bits(c);
                                 full.levels = uint32_t(w.levels());
                                 // saturated, never wrapped (the header says where S is in full)
                                 full.slack = uint32_t(std::min<uint64_t>(w.slack(), UINT32_MAX));
                             });
}

TF_API tf_status tf_recency_window_get_stats(const tf_recency_window *window, tf_recency_window_stats *stats) {
    TF_REQUIRE_NONNULL(window, "window");
    const RecencyWindow &w = *window;
    return tf::put_versioned(
        stats, TF_VERSIONED_END(tf_recency_window_stats, stashed), "stats", [&](tf_recency_window_stats &s) {
            const tf::recency::Stats &k = w.stats();
            s.inserts = w.now();
            s.window_items = std::min(w.now(), w.config().window);
            s.levels = w.levels();
            s.items = w.items();
            s.memory = w.memory();
            s.bits_per_window_item = s.window_items ? 8.0 * double(s.memory) / double(s.window_items) : 0.0;
            s.promotions = k.promotions;
            s.expired = k.expired;
            s.merged = k.merged;
            s.lost = k.lost;
            for (size_t l = 0; l < w.levels(); ++l) s.stashed += w.level(l).table.stashed();
        });
}

TF_API tf_status tf_recency_window_get_level(const tf_recency_window *window, uint64_t i,
                                             tf_recency_window_level *level) {
    TF_REQUIRE_NONNULL(window, "window");
    TF_REQUIRE_NONNULL(level, "level");
    const RecencyWindow &w = *window;
    if (i >= w.levels())
        return fail(TF_ERR_INVALID_ARGUMENT, "there is no level %llu (the structure has %zu)", (unsigned long long)i,
                    w.levels());
    return tf::put_versioned(level, TF_VERSIONED_END(tf_recency_window_level, reserved), "level",
                             [&](tf_recency_window_level &v) {
                                 const tf::recency::Level &l = w.level(size_t(i));
                                 v.slots = l.table.slots();
                                 v.items = l.table.items();
                                 v.capacity = l.capacity;
                                 v.block_width = l.width;
                                 v.load = double(v.items) / double(v.slots);
                                 v.entry_bits = l.shape.entry_bits();
                                 v.class_bits = l.shape.class_bits;
                                 v.stashed = l.table.stashed();
                             });
}

TF_API tf_status tf_recency_window_memory(const tf_recency_window *window, size_t *bytes) {
    TF_REQUIRE_NONNULL(window, "window");
    TF_REQUIRE_NONNULL(bytes, "bytes");
    *bytes = window->memory();
    return TF_OK;
}

TF_API tf_status tf_recency_window_serialized_size(const tf_recency_window *window, size_t *size) {
    TF_REQUIRE_NONNULL(window, "window");
    return tf::wire::serialized_size(window->payload_size(), size);
}

TF_API tf_status tf_recency_window_serialize(const tf_recency_window *window, void *buf, size_t capacity,
                                             size_t *written) {
    TF_REQUIRE_NONNULL(window, "window");
    const RecencyWindow &w = *window;
    return tf::wire::encode(tf::wire::Kind::RecencyWindow, w.config().flags, w.payload_size(), buf, capacity, written,
                            [&](tf::wire::Writer &wr) { w.write_payload(wr); });
}

TF_API tf_status tf_recency_window_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                               tf_recency_window **out) {
    return tf::wire::deserialize<RecencyWindow>(buf, len, options, tf::wire::Kind::RecencyWindow, out, adopt);
}

}  // extern "C"
