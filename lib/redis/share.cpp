// The sketch share of temporalfilters/redis.h: RecencySketches published
// to Redis as blobs (one hash field per publisher, share_lua.hpp) and
// merged back by cell-wise maximum. Everything read from Redis is checked
// as untrusted input before it reaches the caller's sketch, and the
// caller's sketch changes only when a merge succeeds as a whole.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "common/versioned.hpp"
#include "redis/options.hpp"
#include "redis/servers.hpp"
#include "redis/share_lua.hpp"
#include "temporalfilters/recency_sketch.h"
#include "temporalfilters/redis.h"

using tf::fail;
using tf::guard;
using tf::redis::Command;
using tf::redis::Reply;
using tf::redis::Servers;

namespace {

constexpr size_t kMaxName = 256;
constexpr size_t kMaxPublisher = 256;
// Redis's largest string (proto-max-bulk-len's default).
constexpr size_t kMaxBlob = size_t(512) << 20;
// What a deserialized entry may hold beyond the local sketch's memory (its
// header and alignment may differ with the concurrency mode).
constexpr uint64_t kMemorySlack = 64 << 10;

struct FreeSketch {
    void operator()(tf_recency_sketch *s) const { tf_recency_sketch_free(s); }
};
using Sketch = std::unique_ptr<tf_recency_sketch, FreeSketch>;

tf_status check_id(const char *id, size_t max, const char *what) {
    TF_REQUIRE_NONNULL(id, what);
    const size_t n = std::strlen(id);
    if (n == 0) return fail(TF_ERR_INVALID_ARGUMENT, "%s is empty", what);
    if (n > max) return fail(TF_ERR_INVALID_ARGUMENT, "%s is longer than %zu bytes", what, max);
    return TF_OK;
}

tf_recency_sketch_info info_of(const tf_recency_sketch *s) {
    tf_recency_sketch_info i = TF_RECENCY_SKETCH_INFO_INIT;
    tf_recency_sketch_get_info(s, &i);
    return i;
}

}  // namespace

struct tf_redis_sketch_share {
    std::string blobs_key, times_key;  // P{s:N}b, P{s:N}t
    std::string publisher;             // empty: merges only
    uint64_t ttl_ms = 0;
    std::unique_ptr<Servers> servers;
    tf_redis_sketch_share_stats stats;

    void count_failure(tf_status st) {
        if (st == TF_ERR_TIMEOUT)
            stats.timeouts++;
        else if (st == TF_ERR_UNAVAILABLE)
            stats.unavailable++;
    }

    // One script call; an error reply is TF_ERR_UNAVAILABLE. Failures counted.
    tf_status run(std::vector<std::string> args, Reply *out) {
        Command c{"EVALSHA", servers->sha(), "2", blobs_key, times_key};
        for (std::string &a : args) c.push_back(std::move(a));
        tf_status st = servers->call(blobs_key, c, out);
        if (st == TF_OK && (*out)->type == REDIS_REPLY_ERROR)
            st = fail(TF_ERR_UNAVAILABLE, "redis answered the share's script with an error: %.*s", int((*out)->len),
                      (*out)->str);
        count_failure(st);
        return st;
    }

    static tf_status unexpected() {
        return fail(TF_ERR_UNAVAILABLE, "redis answered the share's script with an unexpected reply");
    }
};

namespace {

// One entry read from Redis, checked and merged into `acc` (whose shape is
// the local sketch's). Returns the entry's status; the message names it.
tf_status accept_entry(const std::string &id, const redisReply *v, size_t max_bytes, uint64_t max_memory,
                       const tf_recency_sketch_info &want, tf_recency_sketch *acc) {
    if (v->type == REDIS_REPLY_INTEGER)
        return fail(TF_ERR_TOO_LARGE, "publisher '%s': its blob is %lld bytes, larger than this sketch's %zu",
                    id.c_str(), v->integer, max_bytes);
    if (v->type != REDIS_REPLY_STRING) return tf_redis_sketch_share::unexpected();
    tf_deserialize_options o = TF_DESERIALIZE_OPTIONS_INIT;
    o.max_memory = max_memory;
    tf_recency_sketch *raw = nullptr;
    tf_status st = tf_recency_sketch_deserialize(v->str, v->len, &o, &raw);
    Sketch s(raw);
    if (st != TF_OK) return fail(st, "publisher '%s': its blob is refused: %s", id.c_str(), tf_last_error_message());
    const tf_recency_sketch_info got = info_of(s.get());
    const uint32_t layout = TF_RECENCY_SKETCH_BLOCKED;
    if (got.width != want.width || got.depth != want.depth || got.seed != want.seed ||
        (got.flags & layout) != (want.flags & layout))
        return fail(TF_ERR_INCOMPATIBLE,
                    "publisher '%s': its sketch has width %llu, depth %u, seed %u, %s layout; this one width %llu, "
                    "depth %u, seed %u, %s layout",
                    id.c_str(), (unsigned long long)got.width, got.depth, got.seed,
                    (got.flags & layout) ? "blocked" : "standard", (unsigned long long)want.width, want.depth,
                    want.seed, (want.flags & layout) ? "blocked" : "standard");
    if ((st = tf_recency_sketch_merge(acc, s.get())) != TF_OK)
        return fail(st, "publisher '%s': %s", id.c_str(), tf_last_error_message());
    return TF_OK;
}

tf_status merge_into(tf_redis_sketch_share *sh, tf_recency_sketch *sketch, uint32_t flags, size_t *merged,
                     size_t *refused) {
    // the local sketch's shape: what every entry must have
    const tf_recency_sketch_info want = info_of(sketch);
    size_t max_bytes = 0, memory = 0;
    tf_status st = tf_recency_sketch_serialized_size(sketch, &max_bytes);
    if (st == TF_OK) st = tf_recency_sketch_memory(sketch, &memory);
    if (st != TF_OK) return st;
    Reply r;
    if ((st = sh->run({"pull", std::to_string(max_bytes)}, &r)) != TF_OK) return st;
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 1 || r->element[0]->type != REDIS_REPLY_INTEGER) {
        st = tf_redis_sketch_share::unexpected();
        sh->count_failure(st);
        return st;
    }
    sh->stats.expired += uint64_t(r->element[0]->integer);
    // every entry into a scratch sketch of the local one's shape first
    tf_recency_sketch *raw = nullptr;
    if ((st = tf_recency_sketch_new(want.width, want.depth, want.seed, want.flags & ~TF_RECENCY_SKETCH_CONCURRENT,
                                    &raw)) != TF_OK)
        return st;
    Sketch acc(raw);
    size_t ok = 0, bad = 0;
    tf_status first_bad = TF_OK;
    std::string first_message;
    for (size_t i = 1; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i];
        if (k->type != REDIS_REPLY_STRING) {
            st = tf_redis_sketch_share::unexpected();
            sh->count_failure(st);
            return st;
        }
        const std::string id(k->str, k->len);
        tf_status e = accept_entry(id, r->element[i + 1], max_bytes, uint64_t(memory) + kMemorySlack, want, acc.get());
        if (e == TF_ERR_UNAVAILABLE || e == TF_ERR_OUT_OF_MEMORY || e == TF_ERR_INTERNAL) {
            if (e == TF_ERR_UNAVAILABLE) sh->count_failure(e);
            return e;  // not the entry's fault: nothing merged
        }
        if (e == TF_OK) {
            ++ok;
        } else {
            ++bad;
            if (first_bad == TF_OK) {
                first_bad = e;
                first_message = tf_last_error_message();
            }
        }
    }
    sh->stats.entries_refused += bad;
    if (refused) *refused = bad;
    if (bad && !(flags & TF_REDIS_SHARE_SKIP_REFUSED)) {
        if (merged) *merged = 0;
        return fail(first_bad, "%zu of %zu entries refused, nothing merged; the first: %s", bad, ok + bad,
                    first_message.c_str());
    }
    // the same shape by construction: this merge cannot be refused
    if (ok && (st = tf_recency_sketch_merge(sketch, acc.get())) != TF_OK) return st;
    sh->stats.entries_merged += ok;
    sh->stats.merges++;
    if (merged) *merged = ok;
    if (bad) tf_set_last_error_message(first_message.c_str());
    return TF_OK;
}

tf_status publish(tf_redis_sketch_share *sh, const tf_recency_sketch *sketch) {
    size_t size = 0;
    tf_status st = tf_recency_sketch_serialized_size(sketch, &size);
    if (st != TF_OK) return st;
    if (size > kMaxBlob)
        return fail(TF_ERR_TOO_LARGE, "the sketch's blob is %zu bytes, above Redis's largest string (%zu bytes)", size,
                    kMaxBlob);
    std::string blob(size, '\0');
    size_t written = 0;
    if ((st = tf_recency_sketch_serialize(sketch, &blob[0], blob.size(), &written)) != TF_OK) return st;
    blob.resize(written);
    Reply r;
    if ((st = sh->run({"publish", sh->publisher, std::move(blob), std::to_string(sh->ttl_ms)}, &r)) != TF_OK) return st;
    sh->stats.publishes++;
    return TF_OK;
}

tf_status need_publisher(const tf_redis_sketch_share *sh) {
    if (sh->publisher.empty())
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "this share has no publisher id (created with publisher NULL): it "
                    "can only merge");
    return TF_OK;
}

}  // namespace

extern "C" {

TF_API tf_status tf_redis_sketch_share_new(const char *name, const char *publisher, uint64_t entry_ttl_ms,
                                           const tf_redis_options *options, tf_redis_sketch_share **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = check_id(name, kMaxName, "name");
        if (st != TF_OK) return st;
        if (std::strpbrk(name, "{}"))
            return fail(TF_ERR_INVALID_ARGUMENT, "name must not contain '{' or '}' (it is the share's hash tag)");
        if (publisher && (st = check_id(publisher, kMaxPublisher, "publisher")) != TF_OK) return st;
        if (entry_ttl_ms > TF_REDIS_SHARE_MAX_TTL_MS)
            return fail(TF_ERR_INVALID_ARGUMENT, "entry_ttl_ms %llu is above 2^40 (TF_REDIS_SHARE_MAX_TTL_MS)",
                        (unsigned long long)entry_ttl_ms);
        tf_redis_options o;
        if ((st = tf::redis::read_options(options, "tf:share:", &o)) != TF_OK) return st;
        Servers::Config cfg;
        if ((st = tf::redis::servers_config(o, &cfg)) != TF_OK) return st;
        std::unique_ptr<tf_redis_sketch_share> sh(new tf_redis_sketch_share());
        const std::string base = std::string(o.prefix) + "{s:" + name + "}";
        sh->blobs_key = base + "b";
        sh->times_key = base + "t";
        if (publisher) sh->publisher = publisher;
        sh->ttl_ms = entry_ttl_ms;
        sh->stats = TF_REDIS_SKETCH_SHARE_STATS_INIT;
        sh->servers.reset(new Servers(cfg, tf::redis::kShareScript));
        if ((st = sh->servers->start()) != TF_OK) return st;
        *out = sh.release();
        return TF_OK;
    });
}

TF_API void tf_redis_sketch_share_free(tf_redis_sketch_share *share) { delete share; }

TF_API tf_status tf_redis_sketch_share_publish(tf_redis_sketch_share *share, const tf_recency_sketch *sketch) {
    TF_REQUIRE_NONNULL(share, "share");
    TF_REQUIRE_NONNULL(sketch, "sketch");
    tf_status st = need_publisher(share);
    if (st != TF_OK) return st;
    return guard([&] { return publish(share, sketch); });
}

TF_API tf_status tf_redis_sketch_share_merge_into(tf_redis_sketch_share *share, tf_recency_sketch *sketch,
                                                  uint32_t flags, size_t *merged, size_t *refused) {
    TF_REQUIRE_NONNULL(share, "share");
    TF_REQUIRE_NONNULL(sketch, "sketch");
    tf_status st = tf::check_flags(flags, TF_REDIS_SHARE_SKIP_REFUSED);
    if (st != TF_OK) return st;
    return guard([&] { return merge_into(share, sketch, flags, merged, refused); });
}

TF_API tf_status tf_redis_sketch_share_sync(tf_redis_sketch_share *share, tf_recency_sketch *sketch) {
    TF_REQUIRE_NONNULL(share, "share");
    TF_REQUIRE_NONNULL(sketch, "sketch");
    tf_status st = need_publisher(share);
    if (st != TF_OK) return st;
    return guard([&] {
        tf_status s = merge_into(share, sketch, 0, nullptr, nullptr);
        return s == TF_OK ? publish(share, sketch) : s;
    });
}

TF_API tf_status tf_redis_sketch_share_remove(tf_redis_sketch_share *share, const char *publisher) {
    TF_REQUIRE_NONNULL(share, "share");
    tf_status st = check_id(publisher, kMaxPublisher, "publisher");
    if (st != TF_OK) return st;
    return guard([&] {
        Reply r;
        return share->run({"remove", publisher}, &r);
    });
}

TF_API tf_status tf_redis_sketch_share_get_stats(const tf_redis_sketch_share *share,
                                                 tf_redis_sketch_share_stats *stats) {
    TF_REQUIRE_NONNULL(share, "share");
    return guard([&] {
        return tf::put_versioned(stats, TF_VERSIONED_END(tf_redis_sketch_share_stats, redirects), "stats",
                                 [&](tf_redis_sketch_share_stats &full) {
                                     full = share->stats;
                                     full.reconnects = share->servers->reconnects();
                                     full.redirects = share->servers->redirects();
                                 });
    });
}

}  // extern "C"
