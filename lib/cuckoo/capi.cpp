// The C API of the rotating cuckoo filter: argument checks, then the C++
// core.
#include <memory>

#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "cuckoo/rotating_cuckoo.hpp"

// The handle is the filter itself (no extra indirection on the hot path).
struct tf_rotating_cuckoo : tf::cuckoo::RotatingCuckoo {
    explicit tf_rotating_cuckoo(tf::cuckoo::RotatingCuckoo &&f) : tf::cuckoo::RotatingCuckoo(std::move(f)) {}
};

using tf::fail;
using tf::guard;
using tf::cuckoo::RotatingCuckoo;

namespace {
tf_rotating_cuckoo *adopt(std::unique_ptr<RotatingCuckoo> f) { return new tf_rotating_cuckoo(std::move(*f)); }

tf_status read_options(const tf_rotating_cuckoo_options *in, tf::cuckoo::Config *out) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    tf_status st = tf::get_versioned(in, &o, TF_VERSIONED_END(tf_rotating_cuckoo_options, flags), "options");
    if (st != TF_OK) return st;
    return RotatingCuckoo::check(o, out);
}
}  // namespace

extern "C" {

TF_API tf_status tf_rotating_cuckoo_new(const tf_rotating_cuckoo_options *options, tf_rotating_cuckoo **out) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        tf::cuckoo::Config cfg;
        tf_status st = read_options(options, &cfg);
        if (st != TF_OK) return st;
        *out = adopt(std::unique_ptr<RotatingCuckoo>(new RotatingCuckoo(cfg)));
        return TF_OK;
    });
}

TF_API void tf_rotating_cuckoo_free(tf_rotating_cuckoo *filter) { delete filter; }

TF_API tf_status tf_rotating_cuckoo_add(tf_rotating_cuckoo *filter, const void *key, size_t key_len, uint64_t now) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_TIME(now);
    return guard([&] { return filter->add(filter->hash(key, key_len), now); });
}

TF_API tf_status tf_rotating_cuckoo_contains(const tf_rotating_cuckoo *filter, const void *key, size_t key_len,
                                             uint64_t now, int *present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(present, "present");
    TF_REQUIRE_TIME(now);
    *present = filter->contains(filter->hash(key, key_len), now) ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_rotating_cuckoo_remove(tf_rotating_cuckoo *filter, const void *key, size_t key_len, uint64_t now,
                                           int *removed) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_TIME(now);
    const bool r = filter->remove(filter->hash(key, key_len), now);
    if (removed) *removed = r ? 1 : 0;
    return TF_OK;
}

TF_API tf_status tf_rotating_cuckoo_add_if_absent(tf_rotating_cuckoo *filter, const void *key, size_t key_len,
                                                  uint64_t now, int *was_present) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_KEY(key, key_len);
    TF_REQUIRE_NONNULL(was_present, "was_present");
    TF_REQUIRE_TIME(now);
    return guard([&] {
        bool present = false;
        tf_status st = filter->add_if_absent(filter->hash(key, key_len), now, &present);
        if (st == TF_OK) *was_present = present ? 1 : 0;
        return st;
    });
}

TF_API tf_status tf_rotating_cuckoo_contains_batch(const tf_rotating_cuckoo *filter, const void *const *keys,
                                                   const size_t *key_lens, size_t count, uint64_t now, int *present) {
    tf_status st = tf::check_batch_call(filter, keys, key_lens, count, now, present, "present");
    if (st != TF_OK || count == 0) return st;
    filter->contains_batch(keys, key_lens, count, now, present);
    return TF_OK;
}

TF_API tf_status tf_rotating_cuckoo_add_if_absent_batch(tf_rotating_cuckoo *filter, const void *const *keys,
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

TF_API tf_status tf_rotating_cuckoo_clear(tf_rotating_cuckoo *filter) {
    TF_REQUIRE_NONNULL(filter, "filter");
    return guard([&] { return filter->clear(); });
}

TF_API tf_status tf_rotating_cuckoo_get_stats(const tf_rotating_cuckoo *filter, uint64_t now,
                                              tf_rotating_cuckoo_stats *stats) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(stats, "stats");
    TF_REQUIRE_TIME(now);
    const RotatingCuckoo &f = *filter;
    return tf::put_versioned(stats, TF_VERSIONED_END(tf_rotating_cuckoo_stats, fill_rotations), "stats",
                             [&](tf_rotating_cuckoo_stats &s) {
                                 const auto &ring = f.ring();
                                 uint64_t live_slots = 0, live_bytes = 0;
                                 s.tables = ring.size();
                                 for (size_t age = 0; age < ring.size(); ++age) {
                                     const auto &t = ring[age].table;
                                     s.slots += t.slots();
                                     if (f.expired(age, now)) continue;
                                     s.live_tables++;
                                     s.items += t.items();
                                     live_slots += t.slots();
                                     live_bytes += t.bytes();
                                 }
                                 s.load = live_slots ? double(s.items) / double(live_slots) : 0.0;
                                 const auto &newest = ring.newest().table;
                                 s.newest_load = double(newest.items()) / double(newest.slots());
                                 s.memory = f.memory();
                                 s.bits_per_item = s.items ? 8.0 * double(live_bytes) / double(s.items) : 0.0;
                                 s.inserts = ring.inserts();
                                 s.removes = f.losses().removes;
                                 s.forgotten_memory = f.losses().forgotten_memory;
                                 s.forgotten_age = f.losses().forgotten_age;
                                 s.kick_rotations = f.losses().kick_rotations;
                                 s.fill_rotations = f.losses().fill_rotations;
                             });
}

TF_API tf_status tf_rotating_cuckoo_get_table(const tf_rotating_cuckoo *filter, uint64_t i, uint64_t now,
                                              tf_rotating_cuckoo_table *table) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(table, "table");
    TF_REQUIRE_TIME(now);
    const RotatingCuckoo &f = *filter;
    if (i >= f.ring().size())
        return fail(TF_ERR_INVALID_ARGUMENT, "there is no table %llu (the filter has %zu)", (unsigned long long)i,
                    f.ring().size());
    return tf::put_versioned(table, TF_VERSIONED_END(tf_rotating_cuckoo_table, reserved), "table",
                             [&](tf_rotating_cuckoo_table &t) {
                                 const auto &g = f.ring()[size_t(i)];
                                 t.slots = g.table.slots();
                                 t.items = g.table.items();
                                 t.load = double(t.items) / double(t.slots);
                                 t.last = g.last;
                                 t.serial = g.serial;
                                 t.expired = f.expired(size_t(i), now) ? 1 : 0;
                             });
}

TF_API tf_status tf_rotating_cuckoo_get_info(const tf_rotating_cuckoo *filter, tf_rotating_cuckoo_info *info) {
    TF_REQUIRE_NONNULL(filter, "filter");
    const tf::cuckoo::Config &c = filter->config();
    return tf::put_versioned(info, TF_VERSIONED_END(tf_rotating_cuckoo_info, ways), "info",
                             [&](tf_rotating_cuckoo_info &full) {
                                 full.table_slots = c.table_slots;
                                 full.max_memory = c.max_memory;
                                 full.ttl = c.ttl;
                                 full.max_occupancy = c.max_occupancy;
                                 full.slots_per_bucket = c.slots_per_bucket;
                                 full.max_kicks = c.max_kicks;
                                 full.max_tables = c.max_tables;
                                 full.seed = c.seed;
                                 full.flags = c.flags;
                                 full.ways = c.ways();
                             });
}

TF_API tf_status tf_rotating_cuckoo_memory(const tf_rotating_cuckoo *filter, size_t *bytes) {
    TF_REQUIRE_NONNULL(filter, "filter");
    TF_REQUIRE_NONNULL(bytes, "bytes");
    *bytes = filter->memory();
    return TF_OK;
}

TF_API tf_status tf_rotating_cuckoo_serialized_size(const tf_rotating_cuckoo *filter, size_t *size) {
    TF_REQUIRE_NONNULL(filter, "filter");
    return tf::wire::serialized_size(filter->payload_size(), size);
}

TF_API tf_status tf_rotating_cuckoo_serialize(const tf_rotating_cuckoo *filter, void *buf, size_t capacity,
                                              size_t *written) {
    TF_REQUIRE_NONNULL(filter, "filter");
    const RotatingCuckoo &f = *filter;
    return tf::wire::encode(tf::wire::Kind::RotatingCuckoo, f.wire_flags(), f.payload_size(), buf, capacity, written,
                            [&](tf::wire::Writer &w) { f.write_payload(w); });
}

TF_API tf_status tf_rotating_cuckoo_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                                tf_rotating_cuckoo **out) {
    return tf::wire::deserialize<RotatingCuckoo>(buf, len, options, tf::wire::Kind::RotatingCuckoo, out, adopt);
}

}  // extern "C"
