// The C API of the rate limiter: argument checks, then the core.
#include <algorithm>
#include <memory>

#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "rate_limiter/rate_limiter.hpp"

using tf::fail;
using tf::guard;
using tf::rate::RateLimiter;

struct tf_rate_limiter {
    std::unique_ptr<RateLimiter> impl;
};

namespace {
tf_status fill(const tf::rate::Decision &d, int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    *allowed = d.allowed ? 1 : 0;
    if (remaining) *remaining = d.remaining;
    if (retry_at) *retry_at = d.retry_at;
    return TF_OK;
}

tf_status decide(const tf_rate_limiter *rl, const void *key, size_t key_len, uint64_t now, uint64_t n, bool take,
                 int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    TF_REQUIRE_NONNULL(rl, "limiter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(allowed, "allowed");
    TF_REQUIRE_TIME(now);
    if (n == 0) return fail(TF_ERR_INVALID_ARGUMENT, "n must be >= 1");
    return guard([&] {
        tf::rate::Decision d;
        if (take)
            rl->impl->acquire(key, key_len, now, n, &d);
        else
            static_cast<const RateLimiter &>(*rl->impl).peek(key, key_len, now, n, &d);
        return fill(d, allowed, remaining, retry_at);
    });
}
}  // namespace

extern "C" {

TF_API tf_status tf_rate_limiter_new(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t seed,
                                     uint32_t flags, tf_rate_limiter **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = RateLimiter::check(limit, window, bucket_width, flags);
        if (st != TF_OK) return st;
        std::unique_ptr<RateLimiter> impl(new RateLimiter(limit, window, bucket_width, seed, flags));
        *out = new tf_rate_limiter{std::move(impl)};
        return TF_OK;
    });
}

TF_API void tf_rate_limiter_free(tf_rate_limiter *limiter) { delete limiter; }

TF_API tf_status tf_rate_limiter_set_global_limit(tf_rate_limiter *limiter, uint64_t limit) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    return guard([&] { return limiter->impl->set_global_limit(limit); });
}

TF_API tf_status tf_rate_limiter_set_key_limit(tf_rate_limiter *limiter, const void *key, size_t key_len,
                                               uint64_t limit) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    TF_REQUIRE_KEY(key, key_len);
    return guard([&] { return limiter->impl->set_key_limit(key, key_len, limit); });
}

TF_API tf_status tf_rate_limiter_set_max_keys(tf_rate_limiter *limiter, uint64_t max_keys) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    limiter->impl->set_max_keys(max_keys);
    return TF_OK;
}

TF_API tf_status tf_rate_limiter_acquire(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                         uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    return decide(limiter, key, key_len, now, n, true, allowed, remaining, retry_at);
}

TF_API tf_status tf_rate_limiter_acquire_batch(tf_rate_limiter *limiter, const void *const *keys,
                                               const size_t *key_lens, size_t count, const uint64_t *times, uint64_t n,
                                               int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK) return st;
    if (n == 0) return fail(TF_ERR_INVALID_ARGUMENT, "n must be >= 1");  // whatever the count, as for one request
    if (count == 0) return TF_OK;
    TF_REQUIRE_NONNULL(times, "times");
    TF_REQUIRE_NONNULL(allowed, "allowed");
    for (size_t i = 0; i < count; ++i)
        if (times[i] == 0) return fail(TF_ERR_INVALID_ARGUMENT, "times[%zu] is 0; timestamps must be >= 1", i);
    return guard([&] {
        // decided in chunks, so that the decisions need no allocation; every
        // decision made is written out, also before a request that ran out
        // of memory
        constexpr size_t kChunk = 64;
        tf::rate::Decision d[kChunk];
        for (size_t at = 0; at < count; at += kChunk) {
            const size_t m = std::min(kChunk, count - at);
            const size_t done = limiter->impl->acquire_batch(keys + at, key_lens + at, m, times + at, n, d);
            for (size_t i = 0; i < done; ++i)
                fill(d[i], &allowed[at + i], remaining ? &remaining[at + i] : nullptr,
                     retry_at ? &retry_at[at + i] : nullptr);
            if (done < m)
                return fail(TF_ERR_OUT_OF_MEMORY, "out of memory at request %zu; the %zu before it were decided",
                            at + done, at + done);
        }
        return TF_OK;
    });
}

TF_API tf_status tf_rate_limiter_peek(const tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                      uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    return decide(limiter, key, key_len, now, n, false, allowed, remaining, retry_at);
}

TF_API tf_status tf_rate_limiter_refund(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                        uint64_t n) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_TIME(now);
    return guard([&] {
        limiter->impl->refund(key, key_len, now, n);
        return TF_OK;
    });
}

TF_API tf_status tf_rate_limiter_reset(tf_rate_limiter *limiter, const void *key, size_t key_len) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    TF_REQUIRE_KEY(key, key_len);
    return guard([&] {
        limiter->impl->reset(key, key_len);
        return TF_OK;
    });
}

TF_API tf_status tf_rate_limiter_get_stats(const tf_rate_limiter *limiter, tf_rate_limiter_stats *stats) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    return guard([&] {
        return tf::put_versioned(stats, TF_VERSIONED_END(tf_rate_limiter_stats, memory), "stats",
                                 [&](tf_rate_limiter_stats &full) { limiter->impl->stats(&full); });
    });
}

// The stats' memory figure, through one out-parameter.
TF_API tf_status tf_rate_limiter_memory(const tf_rate_limiter *limiter, size_t *bytes) {
    TF_REQUIRE_NONNULL(bytes, "bytes");
    tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT;
    const tf_status status = tf_rate_limiter_get_stats(limiter, &st);
    if (status == TF_OK) *bytes = size_t(st.memory);
    return status;
}

TF_API tf_status tf_rate_limiter_get_info(const tf_rate_limiter *limiter, tf_rate_limiter_info *info) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    return tf::put_versioned(info, TF_VERSIONED_END(tf_rate_limiter_info, flags), "info",
                             [&](tf_rate_limiter_info &full) { limiter->impl->info(&full); });
}

TF_API tf_status tf_rate_limiter_serialized_size(const tf_rate_limiter *limiter, size_t *size) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    TF_REQUIRE_NONNULL(size, "size");
    return guard([&] {
        const RateLimiter &rl = *limiter->impl;
        RateLimiter::AllLocked all(rl);
        return tf::wire::serialized_size(rl.payload_size(), size);
    });
}

TF_API tf_status tf_rate_limiter_serialize(const tf_rate_limiter *limiter, void *buf, size_t capacity,
                                           size_t *written) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    return guard([&] {
        const RateLimiter &rl = *limiter->impl;
        RateLimiter::AllLocked all(rl);
        std::vector<tf::rate::Table::Rec> recs;
        const size_t payload = rl.payload_size(&recs);
        return tf::wire::encode(tf::wire::Kind::RateLimiter, rl.wire_flags(), payload, buf, capacity, written,
                                [&](tf::wire::Writer &w) { rl.write_payload(w, recs); });
    });
}

TF_API tf_status tf_rate_limiter_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                             tf_rate_limiter **out) {
    return tf::wire::deserialize<RateLimiter>(
        buf, len, options, tf::wire::Kind::RateLimiter, out,
        [](std::unique_ptr<RateLimiter> rl) { return new tf_rate_limiter{std::move(rl)}; });
}

}  // extern "C"
