// The C API of the Redis limiter (temporalfilters/redis.h): argument
// checks, the Redis keys of a request, one EVALSHA of limiter_lua.hpp's
// script per decision (reloaded on NOSCRIPT), the two windows' answers
// combined as the embedded limiter combines them (window.hpp), and the
// fallback when Redis cannot answer.
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "common/versioned.hpp"
#include "rate_limiter/window.hpp"
#include "redis/connection.hpp"
#include "redis/limiter_lua.hpp"
#include "redis/options.hpp"
#include "redis/servers.hpp"
#include "temporalfilters/redis.h"

using tf::fail;
using tf::guard;
using tf::rate::Decision;
using tf::redis::Command;
using tf::redis::Reply;
using tf::redis::Servers;

namespace {

// Times, windows and counts the script computes with: its numbers are
// doubles, exact below 2^53; times and windows stay below 2^51 so that
// time + window + bucket arithmetic stays exact.
constexpr uint64_t kMaxTime = uint64_t(1) << 51;
constexpr size_t kMaxKeyLen = 65536;
// The largest global limit (bucketed mode; exact mode's is the embedded
// limiter's 2^24): below 2^51, as n is clamped to 2^51 (clamp_n), so that
// the script holds it and every count and difference exactly.
constexpr uint64_t kMaxGlobalLimit = kMaxTime - 1;

// A global limit as the script stores it (decimal digits): true with *out
// when it is one the script can hold (<= kMaxGlobalLimit).
bool parse_global_limit(const char *s, size_t len, uint64_t *out) {
    if (len == 0 || len > 16) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + uint64_t(s[i] - '0');
    }
    if (v > kMaxGlobalLimit) return false;
    *out = v;
    return true;
}

struct FreeLocal {
    void operator()(tf_rate_limiter *r) const { tf_rate_limiter_free(r); }
};

}  // namespace

struct tf_redis_limiter {
    uint64_t limit, window, width;  // width 0: exact mode
    uint32_t flags;
    uint32_t time_source, fallback;
    uint64_t expiry_ms;
    std::string prefix, global_key;
    std::unique_ptr<Servers> servers;
    // The embedded limiter of the same limits: it checks the limits at
    // creation and for the setters, and decides when Redis cannot
    // (TF_REDIS_FALLBACK_LOCAL).
    std::unique_ptr<tf_rate_limiter, FreeLocal> local;
    tf_redis_limiter_stats stats;

    bool cluster() const { return servers->cluster(); }

    std::string key_name(const void *key, size_t len, char kind) const {
        std::string k = prefix;
        k += "{k:";
        if (len) k.append(static_cast<const char *>(key), len);
        k += '}';
        k += kind;
        return k;
    }

    // The script's arguments for one operation on one key: with the global
    // window on a single server (one atomic call), without it on a cluster
    // (the global window is another slot's: global_call()).
    Command script_call(const char *op, const void *key, size_t len, uint64_t now, uint64_t n) const {
        Command c{"EVALSHA", servers->sha(), cluster() ? "2" : "3", key_name(key, len, 's'), key_name(key, len, 'o')};
        if (!cluster()) c.push_back(global_key);
        for (std::string a : {std::string(op), std::to_string(now), std::to_string(n), std::to_string(limit),
                              std::to_string(window), std::to_string(width), std::to_string(expiry_ms)})
            c.push_back(std::move(a));
        return c;
    }

    // An operation of the global window alone (KEYS[1] = the global key).
    Command global_call(const char *op, uint64_t now, uint64_t n) const {
        return Command{"EVALSHA",
                       servers->sha(),
                       "1",
                       global_key,
                       op,
                       std::to_string(now),
                       std::to_string(n),
                       std::to_string(limit),
                       std::to_string(window),
                       std::to_string(width),
                       std::to_string(expiry_ms)};
    }

    // One call routed by its first key; an error reply is
    // TF_ERR_UNAVAILABLE (the server answered but cannot serve).
    tf_status run(const Command &cmd, Reply *out) {
        tf_status st = servers->call(cmd[3], cmd, out);
        if (st != TF_OK) return st;
        return check_reply(*out);
    }

    static tf_status check_reply(const Reply &r) {
        if (r->type == REDIS_REPLY_ERROR)
            return fail(TF_ERR_UNAVAILABLE, "redis answered with an error: %.*s", int(r->len), r->str);
        return TF_OK;
    }

    static tf_status unexpected() {
        return fail(TF_ERR_UNAVAILABLE, "redis answered the limiter's script with an unexpected reply");
    }

    static tf_status integers(const Reply &r, size_t count, long long *v) {
        if (r->type != REDIS_REPLY_ARRAY || r->elements != count) return unexpected();
        for (size_t i = 0; i < count; ++i) {
            if (r->element[i]->type != REDIS_REPLY_INTEGER) return unexpected();
            v[i] = r->element[i]->integer;
        }
        return TF_OK;
    }

    static Decision one(long long a, long long rem, long long retry) {
        Decision x;
        x.allowed = a == 1;
        x.remaining = uint64_t(rem);
        x.retry_at = retry < 0 ? TF_RETRY_NEVER : uint64_t(retry);
        return x;
    }

    // The key's reply of an acquire or peek: its own decision (*key), the
    // combined one when the global window was in the call (*d), the key's
    // time and whether the key was fresh.
    struct KeyReply {
        Decision key, both;
        uint64_t t = 0;
        bool fresh = false;
    };
    static tf_status key_reply(const Reply &r, uint64_t n, KeyReply *k) {
        long long v[9];
        tf_status st = integers(r, 9, v);
        if (st != TF_OK) return st;
        k->key = k->both = one(v[0], v[1], v[2]);
        if (v[3] == 1) k->both = tf::rate::combine(k->key, one(v[4], v[5], v[6]), n);
        k->t = uint64_t(v[7]);
        k->fresh = v[8] == 1;
        return TF_OK;
    }

    // The global window's reply (cluster) combined into the key's.
    static tf_status global_reply(const Reply &r, uint64_t n, KeyReply *k) {
        long long v[4];
        tf_status st = integers(r, 4, v);
        if (st != TF_OK) return st;
        if (v[0] == 1) k->both = tf::rate::combine(k->key, one(v[1], v[2], v[3]), n);
        return TF_OK;
    }

    // Cluster: the global window's step of a request whose key step gave *k.
    Command global_step(bool take, uint64_t n, const KeyReply &k) const {
        Command c = global_call(take ? "gacquire" : "gpeek", k.t, n);
        c.push_back(take && k.key.allowed ? "1" : "0");
        return c;
    }

    // Cluster: the key gives back the n permits it took when the global
    // window denied them (or could not answer).
    Command undo_call(const void *key, size_t len, uint64_t n, const KeyReply &k) const {
        Command c = script_call("undo", key, len, k.t, n);
        c.push_back(k.fresh ? "1" : "0");
        return c;
    }

    // Cluster: a request the key allowed and the global window did not:
    // the key's permits go back (best effort: counted when it fails).
    void undo(const void *key, size_t len, uint64_t n, const KeyReply &k) {
        Reply r;
        tf_status st = run(undo_call(key, len, n, k), &r);
        if (st == TF_OK)
            stats.global_undos++;
        else
            count_failure(st);
    }

    // Commands routed by their first key, pipelined (one pipeline per
    // node); an error reply is TF_ERR_UNAVAILABLE. Every failure counted.
    void pipeline(const std::vector<Command> &cmds, std::vector<Reply> *replies, std::vector<tf_status> *status) {
        std::vector<std::string> routes;
        for (const Command &c : cmds) routes.push_back(c[3]);
        std::vector<tf_status> failures;
        servers->pipeline(routes, cmds, replies, status, &failures);
        for (tf_status f : failures) count_failure(f);
        for (size_t i = 0; i < cmds.size(); ++i) {
            if ((*status)[i] == TF_OK && ((*status)[i] = check_reply((*replies)[i])) != TF_OK)
                count_failure((*status)[i]);
        }
    }

    void count_failure(tf_status st) {
        if (st == TF_ERR_TIMEOUT)
            stats.timeouts++;
        else
            stats.unavailable++;
    }

    // The fallback's decision for a request Redis could not decide.
    Decision fall_back(const void *key, size_t len, uint64_t now, uint64_t n, bool take) {
        Decision d;
        if (fallback == TF_REDIS_FALLBACK_ALLOW) {
            stats.fallback_allowed++;
            d.allowed = true;
            return d;
        }
        if (fallback == TF_REDIS_FALLBACK_LOCAL) {
            int allowed = 0;
            uint64_t remaining = 0, retry_at = TF_RETRY_NEVER;
            const uint64_t t = time_source == TF_REDIS_TIME_SERVER ? tf_clock_now_ms() : now;
            char keep[tf::kLastErrorCapacity];  // the Redis failure's message stays the last error
            std::snprintf(keep, sizeof keep, "%s", tf_last_error_message());
            const tf_status st =
                take ? tf_rate_limiter_acquire(local.get(), key, len, t, n, &allowed, &remaining, &retry_at)
                     : tf_rate_limiter_peek(local.get(), key, len, t, n, &allowed, &remaining, &retry_at);
            tf_set_last_error_message(keep);
            stats.fallback_local++;
            if (st == TF_OK) {
                d.allowed = allowed != 0;
                d.remaining = remaining;
                d.retry_at = retry_at;
                return d;
            }
        } else {
            stats.fallback_denied++;
        }
        d.retry_at = TF_RETRY_NEVER;  // when Redis will answer again is unknown
        return d;
    }

    tf_status check_key(const void *key, size_t len) const {
        TF_REQUIRE_KEY(key, len);
        if (len > kMaxKeyLen) return fail(TF_ERR_INVALID_ARGUMENT, "key_len %zu exceeds %zu bytes", len, kMaxKeyLen);
        return TF_OK;
    }

    tf_status check_time(uint64_t now, const char *what) const {
        if (time_source == TF_REDIS_TIME_SERVER) {
            if (now != 0)
                return fail(TF_ERR_INVALID_ARGUMENT, "%s must be 0: this limiter reads the server's clock", what);
            return TF_OK;
        }
        if (now == 0) return fail(TF_ERR_INVALID_ARGUMENT, "%s must be >= 1 (0 means never)", what);
        if (now >= kMaxTime)
            return fail(TF_ERR_INVALID_ARGUMENT, "%s %llu is not below 2^51", what, (unsigned long long)now);
        return TF_OK;
    }
};

namespace {

tf_status put(const Decision &d, int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    *allowed = d.allowed ? 1 : 0;
    if (remaining) *remaining = d.remaining;
    if (retry_at) *retry_at = d.retry_at;
    return TF_OK;
}

// n as the script gets it: any n above every limit is the same request.
uint64_t clamp_n(uint64_t n) { return n < kMaxTime ? n : kMaxTime; }

tf_status decide(tf_redis_limiter *rl, const void *key, size_t len, uint64_t now, uint64_t n, bool take, int *allowed,
                 uint64_t *remaining, uint64_t *retry_at) {
    TF_REQUIRE_NONNULL(rl, "limiter");
    TF_REQUIRE_NONNULL(allowed, "allowed");
    tf_status st = rl->check_key(key, len);
    if (st != TF_OK) return st;
    if ((st = rl->check_time(now, "now")) != TF_OK) return st;
    if (n == 0) return fail(TF_ERR_INVALID_ARGUMENT, "n must be >= 1");
    return guard([&] {
        Reply r;
        tf_redis_limiter::KeyReply k;
        tf_status s = rl->run(rl->script_call(take ? "acquire" : "peek", key, len, now, clamp_n(n)), &r);
        if (s == TF_OK) s = tf_redis_limiter::key_reply(r, n, &k);
        if (s == TF_OK && rl->cluster()) {
            // the global window, on its own slot: after the key
            s = rl->run(rl->global_step(take, clamp_n(n), k), &r);
            if (s == TF_OK) s = tf_redis_limiter::global_reply(r, n, &k);
            if (take && k.key.allowed && (s != TF_OK || !k.both.allowed)) {
                if (s != TF_OK) rl->count_failure(s);
                rl->undo(key, len, clamp_n(n), k);
                if (s != TF_OK) {
                    put(rl->fall_back(key, len, now, n, take), allowed, remaining, retry_at);
                    return s;
                }
            }
        }
        if (s == TF_OK) {
            rl->stats.decisions++;
            return put(k.both, allowed, remaining, retry_at);
        }
        rl->count_failure(s);
        put(rl->fall_back(key, len, now, n, take), allowed, remaining, retry_at);
        return s;
    });
}

// A call that changes state in Redis and decides nothing (refund, reset,
// setkey, setglobal).
tf_status change(tf_redis_limiter *rl, Command cmd) {
    Reply r;
    tf_status s = rl->run(std::move(cmd), &r);
    if (s != TF_OK) rl->count_failure(s);
    return s;
}

}  // namespace

extern "C" {

TF_API tf_status tf_redis_limiter_new(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t flags,
                                      const tf_redis_options *options, tf_redis_limiter **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf_status st = tf::check_flags(flags, TF_RATE_LIMITER_EXACT);
        if (st != TF_OK) return st;
        tf_redis_options o;
        if ((st = tf::redis::read_options(options, "tf:rl:", &o)) != TF_OK) return st;
        tf_rate_limiter *local = nullptr;
        if ((st = tf_rate_limiter_new(limit, window, bucket_width, 0, flags, &local)) != TF_OK) return st;
        std::unique_ptr<tf_redis_limiter> rl(new tf_redis_limiter());
        rl->local.reset(local);
        if (window >= kMaxTime)
            return fail(TF_ERR_INVALID_ARGUMENT, "window %llu is not below 2^51", (unsigned long long)window);
        const bool exact = (flags & TF_RATE_LIMITER_EXACT) != 0;
        rl->limit = limit;
        rl->window = window;
        rl->width = exact ? 0 : bucket_width;
        rl->flags = flags;
        rl->time_source = o.time_source;
        rl->fallback = o.fallback;
        rl->expiry_ms = o.idle_expiry_ms ? o.idle_expiry_ms : window;
        rl->prefix = o.prefix;
        rl->global_key = rl->prefix + "{g}";
        rl->stats = TF_REDIS_LIMITER_STATS_INIT;
        tf::redis::Servers::Config cfg;
        if ((st = tf::redis::servers_config(o, &cfg)) != TF_OK) return st;
        rl->servers.reset(new Servers(cfg, tf::redis::kLimiterScript));
        if ((st = rl->servers->start()) != TF_OK) return st;
        // the embedded fallback starts with the global limit stored in Redis
        Reply r;
        if ((st = rl->servers->call(rl->global_key, Command{"HGET", rl->global_key, "m"}, &r)) != TF_OK) return st;
        if ((st = tf_redis_limiter::check_reply(r)) != TF_OK) return st;
        if (r->type == REDIS_REPLY_STRING) {
            uint64_t g = 0;
            if (!parse_global_limit(r->str, r->len, &g))
                return fail(TF_ERR_UNAVAILABLE, "the global limit stored in redis (%.*s) is invalid here",
                            int(r->len < 64 ? r->len : 64), r->str);
            if ((st = tf_rate_limiter_set_global_limit(local, g)) == TF_ERR_OUT_OF_MEMORY) return st;
            if (st != TF_OK)
                return fail(TF_ERR_UNAVAILABLE, "the global limit stored in redis (%llu) is invalid here: %s",
                            (unsigned long long)g, tf_last_error_message());
        }
        *out = rl.release();
        return TF_OK;
    });
}

TF_API void tf_redis_limiter_free(tf_redis_limiter *limiter) { delete limiter; }

TF_API tf_status tf_redis_limiter_acquire(tf_redis_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                          uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    return decide(limiter, key, key_len, now, n, true, allowed, remaining, retry_at);
}

TF_API tf_status tf_redis_limiter_peek(tf_redis_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                       uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    return decide(limiter, key, key_len, now, n, false, allowed, remaining, retry_at);
}

TF_API tf_status tf_redis_limiter_acquire_batch(tf_redis_limiter *limiter, const void *const *keys,
                                                const size_t *key_lens, size_t count, const uint64_t *times, uint64_t n,
                                                int *allowed, uint64_t *remaining, uint64_t *retry_at) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    if (n == 0) return fail(TF_ERR_INVALID_ARGUMENT, "n must be >= 1");
    if (count == 0) return TF_OK;
    tf_status st = tf::check_key_batch(keys, key_lens, count);
    if (st != TF_OK) return st;
    TF_REQUIRE_NONNULL(allowed, "allowed");
    const bool server = limiter->time_source == TF_REDIS_TIME_SERVER;
    if (server && times != nullptr)
        return fail(TF_ERR_INVALID_ARGUMENT, "times must be NULL: this limiter reads the server's clock");
    if (!server) TF_REQUIRE_NONNULL(times, "times");
    for (size_t i = 0; i < count; ++i) {
        if (key_lens[i] > kMaxKeyLen)
            return fail(TF_ERR_INVALID_ARGUMENT, "key_lens[%zu] = %zu exceeds %zu bytes", i, key_lens[i], kMaxKeyLen);
        if (!server && (st = limiter->check_time(times[i], "times[i]")) != TF_OK)
            return fail(st, "times[%zu]: %s", i, tf_last_error_message());
    }
    return guard([&] {
        tf_redis_limiter *rl = limiter;
        std::vector<Decision> d(count);
        tf_status result = TF_OK;
        auto fall_back = [&](size_t i, tf_status s) {
            if (result == TF_OK) result = s;
            d[i] = rl->fall_back(keys[i], key_lens[i], server ? 0 : times[i], n, true);
        };
        // On a cluster, a segment of distinct keys at a time: each phase
        // (the keys' steps, the global window's steps in order, the undos)
        // is one pipeline per node, and no key's later request is decided
        // before its earlier one's undo. A single server takes the whole
        // batch in one pipeline.
        std::vector<tf_redis_limiter::KeyReply> k(count);  // once: a segment may be one request long
        for (size_t begin = 0, end = 0; begin < count; begin = end) {
            std::set<std::string> seen;
            end = begin;
            while (end < count &&
                   (!rl->cluster() ||
                    seen.insert(std::string(static_cast<const char *>(keys[end]), key_lens[end])).second))
                ++end;
            std::vector<size_t> ids;
            std::vector<Command> cmds;
            for (size_t i = begin; i < end; ++i) {
                ids.push_back(i);
                cmds.push_back(rl->script_call("acquire", keys[i], key_lens[i], server ? 0 : times[i], clamp_n(n)));
            }
            std::vector<Reply> replies;
            std::vector<tf_status> status;
            rl->pipeline(cmds, &replies, &status);
            std::vector<size_t> next;
            for (size_t j = 0; j < ids.size(); ++j) {
                tf_status s = status[j];
                if (s == TF_OK) s = tf_redis_limiter::key_reply(replies[j], n, &k[ids[j]]);
                if (s != TF_OK) {
                    if (status[j] == TF_OK) rl->count_failure(s);
                    fall_back(ids[j], s);
                } else if (!rl->cluster()) {
                    rl->stats.decisions++;
                    d[ids[j]] = k[ids[j]].both;
                } else {
                    next.push_back(ids[j]);
                }
            }
            if (next.empty()) continue;
            // cluster: the global window's steps, in order
            cmds.clear();
            for (size_t i : next) cmds.push_back(rl->global_step(true, clamp_n(n), k[i]));
            rl->pipeline(cmds, &replies, &status);
            std::vector<size_t> undo;
            std::vector<tf_status> global_status(next.size());
            for (size_t j = 0; j < next.size(); ++j) {
                const size_t i = next[j];
                tf_status s = status[j];
                if (s == TF_OK) s = tf_redis_limiter::global_reply(replies[j], n, &k[i]);
                if (s != TF_OK && status[j] == TF_OK) rl->count_failure(s);
                global_status[j] = s;
                if (k[i].key.allowed && (s != TF_OK || !k[i].both.allowed)) undo.push_back(i);
            }
            if (!undo.empty()) {
                cmds.clear();
                for (size_t i : undo) cmds.push_back(rl->undo_call(keys[i], key_lens[i], clamp_n(n), k[i]));
                rl->pipeline(cmds, &replies, &status);
                for (size_t j = 0; j < undo.size(); ++j) {
                    if (status[j] == TF_OK) rl->stats.global_undos++;
                }
            }
            for (size_t j = 0; j < next.size(); ++j) {
                if (global_status[j] != TF_OK) {
                    fall_back(next[j], global_status[j]);
                } else {
                    rl->stats.decisions++;
                    d[next[j]] = k[next[j]].both;
                }
            }
        }
        for (size_t i = 0; i < count; ++i) {
            allowed[i] = d[i].allowed ? 1 : 0;
            if (remaining) remaining[i] = d[i].remaining;
            if (retry_at) retry_at[i] = d[i].retry_at;
        }
        return result;
    });
}

TF_API tf_status tf_redis_limiter_refund(tf_redis_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                         uint64_t n) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    tf_status st = limiter->check_key(key, key_len);
    if (st != TF_OK) return st;
    if ((st = limiter->check_time(now, "now")) != TF_OK) return st;
    return guard([&] {
        if (limiter->fallback == TF_REDIS_FALLBACK_LOCAL) {
            const uint64_t t = limiter->time_source == TF_REDIS_TIME_SERVER ? tf_clock_now_ms() : now;
            tf_status s = tf_rate_limiter_refund(limiter->local.get(), key, key_len, t, n);
            if (s != TF_OK) return s;
        }
        tf_redis_limiter *rl = limiter;
        Reply r;
        tf_status s = rl->run(rl->script_call("refund", key, key_len, now, clamp_n(n)), &r);
        if (s == TF_OK && rl->cluster()) {
            // what left the key leaves the global window (its own slot) too
            if (r->type == REDIS_REPLY_INTEGER) {
                // a key with no window: nothing left it
            } else if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 || r->element[0]->type != REDIS_REPLY_INTEGER) {
                s = tf_redis_limiter::unexpected();
            } else if (r->elements > 1) {
                Command g = rl->global_call("grefund", uint64_t(r->element[0]->integer), 0);
                for (size_t i = 1; i < r->elements; ++i) {
                    if (r->element[i]->type != REDIS_REPLY_INTEGER) {
                        s = tf_redis_limiter::unexpected();
                        break;
                    }
                    g.push_back(std::to_string(r->element[i]->integer));
                }
                Reply gr;
                if (s == TF_OK) s = rl->run(g, &gr);
            }
        }
        if (s != TF_OK) rl->count_failure(s);
        return s;
    });
}

TF_API tf_status tf_redis_limiter_reset(tf_redis_limiter *limiter, const void *key, size_t key_len) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    tf_status st = limiter->check_key(key, key_len);
    if (st != TF_OK) return st;
    return guard([&] {
        tf_status s = tf_rate_limiter_reset(limiter->local.get(), key, key_len);
        if (s != TF_OK) return s;
        return change(limiter, limiter->script_call("reset", key, key_len, 1, 1));
    });
}

TF_API tf_status tf_redis_limiter_set_key_limit(tf_redis_limiter *limiter, const void *key, size_t key_len,
                                                uint64_t limit) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    tf_status st = limiter->check_key(key, key_len);
    if (st != TF_OK) return st;
    return guard([&] {
        // the embedded limiter checks the limit (and keeps it for the fallback)
        tf_status s = tf_rate_limiter_set_key_limit(limiter->local.get(), key, key_len, limit);
        if (s != TF_OK) return s;
        return change(limiter, limiter->script_call("setkey", key, key_len, 1, limit));
    });
}

TF_API tf_status tf_redis_limiter_set_global_limit(tf_redis_limiter *limiter, uint64_t limit) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    // bucketed mode; the embedded limiter refuses an exact-mode limit above 2^24
    if (limiter->width != 0 && limit > kMaxGlobalLimit)
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "global limit %llu is not below 2^51 (the limiter's script holds numbers as doubles)",
                    (unsigned long long)limit);
    return guard([&] {
        tf_status s = tf_rate_limiter_set_global_limit(limiter->local.get(), limit);
        if (s != TF_OK) return s;
        // with the server's clock, the script starts the new window just
        // past the server's time (now 0: it reads TIME); see limiter_lua.hpp
        const uint64_t now = limiter->time_source == TF_REDIS_TIME_SERVER ? 0 : 1;
        return change(limiter, limiter->global_call("setglobal", now, limit));
    });
}

TF_API tf_status tf_redis_limiter_get_stats(const tf_redis_limiter *limiter, tf_redis_limiter_stats *stats) {
    TF_REQUIRE_NONNULL(limiter, "limiter");
    return guard([&] {
        return tf::put_versioned(stats, TF_VERSIONED_END(tf_redis_limiter_stats, script_loads), "stats",
                                 [&](tf_redis_limiter_stats &full) {
                                     full = limiter->stats;
                                     full.reconnects = limiter->servers->reconnects();
                                     full.script_loads = limiter->servers->script_loads();
                                     full.redirects = limiter->servers->redirects();
                                 });
    });
}

}  // extern "C"
