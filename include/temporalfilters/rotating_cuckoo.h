/**
 * @file temporalfilters/rotating_cuckoo.h
 * @brief Rotating cuckoo filter: "have I seen this key recently?" with no
 * false positives in practice, in bounded memory, forgetting by fill and by
 * time.
 *
 * The structure of the Time-Rotated Cache Filter README: a ring of cuckoo
 * tables ("Cuckoo Filter: Practically Better Than Bloom", Fan, Andersen,
 * Kaminsky, Mitzenmacher, CoNEXT 2014) holding 64-bit fingerprints. A key's
 * one 128-bit MurmurHash3 gives its primary bucket (first half) and its
 * fingerprint (second half; 0 marks an empty slot, so a fingerprint of 0 is
 * stored as 1). Tables have a power-of-two number of buckets of 1, 2, 4 or
 * 8 slots; a key may live in two buckets, its primary and the alternate
 * `b XOR h(fp)`, an involution of (bucket, fingerprint), or, with
 * ::TF_ROTATING_CUCKOO_THREE_WAY, in three buckets that a permutation of
 * order 3 built from the fingerprint maps onto each other. Inserts go to the
 * newest table; when it reaches its maximum occupancy, or when a kick chain
 * exceeds its limit, a new table is started, sized from the recent insertion
 * rate and the room the ring has under its memory cap: with a ttl, for the
 * inserts one ttl brings at the newest table's rate spread over 4 tables;
 * without one, twice the newest table; always within half and twice the
 * newest, and at most a quarter of the room under the cap, so that a ring
 * that has reached its cap holds 4 tables or more (unless max_tables is
 * lower, or the first table is larger than a quarter of that room). When
 * the cap (or the table limit) would be exceeded the oldest table is
 * dropped and its keys are forgotten. docs/rotating-cuckoo.md explains the
 * algorithm and the measurements.
 *
 * **Its users de-duplicate streams.** A false positive silently drops a
 * real event, a false negative only repeats one, so the promise is the
 * opposite of a Bloom filter's:
 *
 *  - **No false positives, in practice.** A key never added is reported
 *    present only when another key's 128-bit hash matches it in its bucket
 *    and all 64 fingerprint bits: at most about (tables x ways x slots per
 *    bucket) / 2^64 per query (twice that for the stored value 1, which
 *    also stands for a fingerprint of 0): about 2^-55 with the defaults,
 *    2^-49 at the limits (1024 tables, three ways, 8 slots).
 *  - **Bounded false negatives.** A key added at time t is reported present
 *    until at least t + ttl (every key, when no ttl is set, until its table
 *    is dropped), unless the memory cap or the table limit dropped its table
 *    first; every key forgotten that way is counted in
 *    tf_rotating_cuckoo_stats::forgotten_memory. After t + ttl it may be
 *    forgotten (counted in tf_rotating_cuckoo_stats::forgotten_age once its
 *    table goes). A failed kick chain forgets nothing: the chain is undone
 *    and the key goes to a new table (counted in
 *    tf_rotating_cuckoo_stats::kick_rotations).
 *
 * **Time.** `now` and `ttl` are in the caller's unit. A clock that goes
 * backwards is clamped to the highest time seen: it never causes a false
 * negative or corrupts the filter. A table whose newest entry is older than
 * the ttl is dropped by the next call that modifies the filter and
 * succeeds, and ignored by queries until then.
 *
 * **Failures.** A call that fails leaves the filter exactly as it was
 * (tf_rotating_cuckoo_add_if_absent_batch() aside: the keys before the
 * one that failed stay processed): a
 * rotation allocates its new table before it drops any table (older than
 * the ttl, or pushed out by the memory cap or the table limit), so a
 * ::TF_ERR_OUT_OF_MEMORY drops nothing, counts nothing and does not move
 * the clock.
 *
 * **Thread safety.** Not internally synchronised: contains,
 * contains_batch, get_stats, get_table, get_info, memory, serialized_size
 * and serialize are read-only and may run concurrently with each other;
 * add, add_if_absent, add_if_absent_batch, remove, clear and free need
 * exclusive access. Different filters are independent.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_ROTATING_CUCKOO_H
#define TEMPORALFILTERS_ROTATING_CUCKOO_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A rotating cuckoo filter (opaque handle).
 *
 * Created by tf_rotating_cuckoo_new() or tf_rotating_cuckoo_deserialize();
 * destroyed by tf_rotating_cuckoo_free().
 * @since 0.1.0
 */
typedef struct tf_rotating_cuckoo tf_rotating_cuckoo;

/**
 * @brief Flag: three candidate buckets per key instead of two (3-ary
 * cuckoo hashing). Tables fill further before kick chains fail, at the
 * cost of a third bucket read per query of a table.
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_THREE_WAY 0x1u

/**
 * @brief The most tables a filter may be configured to keep.
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_MAX_TABLES 1024u

/**
 * @brief The most slots one table may have (2^36: 512 GiB of fingerprints).
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_MAX_TABLE_SLOTS ((uint64_t)1 << 36)

/**
 * @brief The longest kick chain a filter may be configured with.
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_MAX_KICKS 4096u

/**
 * @brief The options of tf_rotating_cuckoo_new().
 *
 * A versioned struct: initialize it with ::TF_ROTATING_CUCKOO_OPTIONS_INIT
 * (usable defaults), then change what you need. Options added by a later
 * version are refused (::TF_ERR_INVALID_ARGUMENT) by a library that does
 * not know them unless they are left at their defaults.
 * @since 0.1.0
 */
typedef struct tf_rotating_cuckoo_options {
    /** sizeof(tf_rotating_cuckoo_options) as the caller was compiled; set by
     *  ::TF_ROTATING_CUCKOO_OPTIONS_INIT. @since 0.1.0 */
    size_t size;
    /** Slots (fingerprints) of the first table: a power of two, at least
     *  2 x slots_per_bucket, at most ::TF_ROTATING_CUCKOO_MAX_TABLE_SLOTS.
     *  Default 16384 (128 KiB). Later tables are sized from the insertion
     *  rate and the room under max_memory (above; docs/rotating-cuckoo.md,
     *  "Sizing"). @since 0.1.0 */
    uint64_t table_slots;
    /** The memory cap in bytes: what tf_rotating_cuckoo_memory() may report
     *  between calls. It must hold the filter's fixed part and its first
     *  table. Default 64 MiB. @since 0.1.0 */
    uint64_t max_memory;
    /** Time to live, in the caller's unit: a table whose newest entry is
     *  older than this is dropped. 0 (the default): no ttl, tables go only
     *  for memory. @since 0.1.0 */
    uint64_t ttl;
    /** The fill (stored fingerprints / slots) at which the newest table
     *  stops taking inserts and a new one starts, in (0, 1]. 0 (the
     *  default) chooses the layout's measured default: 0.45 with 1 slot
     *  per bucket, 0.80 with 2, 0.92 with 4, 0.95 with 8 (two ways); 0.85,
     *  0.94, 0.97, 0.98 with ::TF_ROTATING_CUCKOO_THREE_WAY: a little below
     *  the fill where the first chain of 500 kicks fails in a table of
     *  2^20 slots (lowest of 5 seeds: 0.497, 0.865, 0.957, 0.986; 0.877,
     *  0.960, 0.987, 0.992; `bench_rotating_cuckoo --load`). @since 0.1.0 */
    double max_occupancy;
    /** Slots per bucket: 1, 2, 4 (the default; 32 bytes) or 8 (one 64-byte
     *  line). @since 0.1.0 */
    uint32_t slots_per_bucket;
    /** The longest kick chain before an insert gives up on the newest
     *  table and starts a new one: 1..::TF_ROTATING_CUCKOO_MAX_KICKS.
     *  Default 500. @since 0.1.0 */
    uint32_t max_kicks;
    /** The most tables kept: 1..::TF_ROTATING_CUCKOO_MAX_TABLES. When a
     *  rotation would exceed it, the oldest table is dropped (counted with
     *  the memory drops). Default 64. @since 0.1.0 */
    uint32_t max_tables;
    /** The hash seed. Default 0. @since 0.1.0 */
    uint32_t seed;
    /** A bitwise OR of `TF_ROTATING_CUCKOO_*` flags
     *  (::TF_ROTATING_CUCKOO_THREE_WAY); other bits are refused. Default 0.
     *  @since 0.1.0 */
    uint32_t flags;
} tf_rotating_cuckoo_options;

/**
 * @brief Initializer of ::tf_rotating_cuckoo_options: every option at its
 * default (16384 slots, 64 MiB, no ttl, the layout's occupancy, 4 slots
 * per bucket, 500 kicks, 64 tables, seed 0, two ways).
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_OPTIONS_INIT \
    { sizeof(tf_rotating_cuckoo_options), 16384, (uint64_t)64 << 20, 0, 0.0, 4, 500, 64, 0, 0 }

/**
 * @brief What was fixed when a filter was created (the options, with the
 * defaults resolved). Filled by tf_rotating_cuckoo_get_info().
 *
 * A versioned struct: initialize it with ::TF_ROTATING_CUCKOO_INFO_INIT;
 * fields are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_rotating_cuckoo_info {
    /** sizeof(tf_rotating_cuckoo_info) as the caller was compiled; set by
     *  ::TF_ROTATING_CUCKOO_INFO_INIT. @since 0.1.0 */
    size_t size;
    /** Slots of the first table. @since 0.1.0 */
    uint64_t table_slots;
    /** The memory cap in bytes. @since 0.1.0 */
    uint64_t max_memory;
    /** The ttl in the caller's unit (0: none). @since 0.1.0 */
    uint64_t ttl;
    /** The maximum occupancy in use (the default resolved). @since 0.1.0 */
    double max_occupancy;
    /** Slots per bucket (1, 2, 4 or 8). @since 0.1.0 */
    uint32_t slots_per_bucket;
    /** The kick chain limit. @since 0.1.0 */
    uint32_t max_kicks;
    /** The most tables kept. @since 0.1.0 */
    uint32_t max_tables;
    /** The hash seed. @since 0.1.0 */
    uint32_t seed;
    /** The flags the filter was created with. @since 0.1.0 */
    uint32_t flags;
    /** Candidate buckets per key: 2, or 3 with ::TF_ROTATING_CUCKOO_THREE_WAY. @since 0.1.0 */
    uint32_t ways;
} tf_rotating_cuckoo_info;

/**
 * @brief Initializer of ::tf_rotating_cuckoo_info: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_INFO_INIT \
    { sizeof(tf_rotating_cuckoo_info), 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief The state of a filter at a time `now`. Filled by
 * tf_rotating_cuckoo_get_stats().
 *
 * A versioned struct: initialize it with ::TF_ROTATING_CUCKOO_STATS_INIT;
 * fields are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_rotating_cuckoo_stats {
    /** sizeof(tf_rotating_cuckoo_stats) as the caller was compiled; set by
     *  ::TF_ROTATING_CUCKOO_STATS_INIT. @since 0.1.0 */
    size_t size;
    /** Tables held (tf_rotating_cuckoo_get_table() reads each), those
     *  older than the ttl at `now` included until a modifying call drops
     *  them. @since 0.1.0 */
    uint64_t tables;
    /** Tables whose keys a query at `now` may find (not older than the
     *  ttl). @since 0.1.0 */
    uint64_t live_tables;
    /** Slots of every table held. @since 0.1.0 */
    uint64_t slots;
    /** Fingerprints stored in the live tables. @since 0.1.0 */
    uint64_t items;
    /** items / the live tables' slots (0 when none). @since 0.1.0 */
    double load;
    /** The newest table's fill (stored / slots). @since 0.1.0 */
    double newest_load;
    /** What tf_rotating_cuckoo_memory() reports, in bytes. @since 0.1.0 */
    uint64_t memory;
    /** Bits of table memory per stored fingerprint in the live tables
     *  (0 when none). @since 0.1.0 */
    double bits_per_item;
    /** Keys stored since creation or the last clear (an add of a key
     *  already in the newest table stores nothing). @since 0.1.0 */
    uint64_t inserts;
    /** Keys removed by tf_rotating_cuckoo_remove(). @since 0.1.0 */
    uint64_t removes;
    /** Keys forgotten because the memory cap or the table limit dropped
     *  their table. @since 0.1.0 */
    uint64_t forgotten_memory;
    /** Keys forgotten because their table's newest entry grew older than
     *  the ttl. @since 0.1.0 */
    uint64_t forgotten_age;
    /** Rotations caused by a kick chain exceeding max_kicks: the chain was
     *  undone and its key stored in the new table (the seed's stash),
     *  nothing forgotten. @since 0.1.0 */
    uint64_t kick_rotations;
    /** Rotations caused by the newest table reaching max_occupancy.
     *  @since 0.1.0 */
    uint64_t fill_rotations;
} tf_rotating_cuckoo_stats;

/**
 * @brief Initializer of ::tf_rotating_cuckoo_stats: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_STATS_INIT \
    { sizeof(tf_rotating_cuckoo_stats), 0, 0, 0, 0, 0.0, 0.0, 0, 0.0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief One table of a filter. Filled by tf_rotating_cuckoo_get_table().
 *
 * A versioned struct: initialize it with ::TF_ROTATING_CUCKOO_TABLE_INIT;
 * fields are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_rotating_cuckoo_table {
    /** sizeof(tf_rotating_cuckoo_table) as the caller was compiled; set by
     *  ::TF_ROTATING_CUCKOO_TABLE_INIT. @since 0.1.0 */
    size_t size;
    /** Its slots (a power of two). @since 0.1.0 */
    uint64_t slots;
    /** Fingerprints stored in it. @since 0.1.0 */
    uint64_t items;
    /** items / slots. @since 0.1.0 */
    double load;
    /** The time of its newest entry (0: none yet). @since 0.1.0 */
    uint64_t last;
    /** Its creation number (consecutive; the newest has the highest). @since 0.1.0 */
    uint64_t serial;
    /** 1 when a query at `now` ignores it (older than the ttl), else 0. @since 0.1.0 */
    uint32_t expired;
    /** 0 (reserved; keeps the struct free of padding). @since 0.1.0 */
    uint32_t reserved;
} tf_rotating_cuckoo_table;

/**
 * @brief Initializer of ::tf_rotating_cuckoo_table: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_ROTATING_CUCKOO_TABLE_INIT \
    { sizeof(tf_rotating_cuckoo_table), 0, 0, 0.0, 0, 0, 0, 0 }

/**
 * @brief Creates an empty filter of one table.
 *
 * @param[in]  options a ::tf_rotating_cuckoo_options initialized with
 *                     ::TF_ROTATING_CUCKOO_OPTIONS_INIT, or NULL for the
 *                     defaults.
 * @param[out] out     receives the new filter, owned by the caller
 *                     (tf_rotating_cuckoo_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT options->size is below the struct's first
 *                                 version or above 4096 (not initialized),
 *                                 it sets a field this library does not
 *                                 know, table_slots is 0, not a power of two
 *                                 or below 2 x slots_per_bucket,
 *                                 slots_per_bucket is not 1, 2, 4 or 8,
 *                                 max_occupancy is not 0 and not in (0, 1]
 *                                 (NaN included), max_kicks or max_tables
 *                                 is 0 or above its maximum, or flags has an
 *                                 unknown bit.
 * @retval TF_ERR_TOO_LARGE        table_slots is above
 *                                 ::TF_ROTATING_CUCKOO_MAX_TABLE_SLOTS, or
 *                                 the first table does not fit in
 *                                 max_memory.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_new(const tf_rotating_cuckoo_options *options, tf_rotating_cuckoo **out);

/**
 * @brief Destroys a filter and frees its memory.
 * @param[in] filter the filter; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_rotating_cuckoo_free(tf_rotating_cuckoo *filter);

/**
 * @brief Adds a key at time `now`, or refreshes it.
 *
 * A key already in the newest table only refreshes that table's time; a
 * key absent from it is stored there (a copy in an older table stays until
 * its table goes), so `add` keeps a key alive until now + ttl. Drops the
 * tables older than the ttl. A rotation allocates a new table before it
 * drops anything; if that fails the call returns ::TF_ERR_OUT_OF_MEMORY
 * and the filter is exactly as it was (no table dropped, for age or for
 * memory; the clock unchanged).
 *
 * @param[in] filter  the filter.
 * @param[in] key     the key's bytes; NULL only when key_len is 0.
 * @param[in] key_len the key's length in bytes.
 * @param[in] now     the current time, >= 1 (clamped to the highest time
 *                    seen).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter is NULL, or key is NULL with
 *                                 key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    a new table could not be allocated
 *                                 (nothing changed).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_add(tf_rotating_cuckoo *filter, const void *key, size_t key_len, uint64_t now);

/**
 * @brief Asks whether a key was added and not yet forgotten.
 *
 * Probes the live tables newest first and stops at the first hit; tables
 * older than the ttl at `now` are ignored.
 *
 * @param[in]  filter  the filter.
 * @param[in]  key     the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len the key's length in bytes.
 * @param[in]  now     the current time, >= 1 (clamped to the highest time
 *                     seen).
 * @param[out] present receives 1 when the key is present (a false positive
 *                     has a probability below 2^-48, about 2^-55 with
 *                     the default options), 0 when it was never
 *                     added or was forgotten.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or present is NULL, or key is NULL
 *                                 with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_contains(const tf_rotating_cuckoo *filter, const void *key, size_t key_len,
                                             uint64_t now, int *present);

/**
 * @brief Removes the newest copy of a key.
 *
 * Only the copy in the newest live table holding it goes: a key refreshed
 * by tf_rotating_cuckoo_add() after a rotation has a copy in an older table
 * too, and is still present until that one is removed as well (call again)
 * or forgotten. Removing a key that is not present is a no-op that says so.
 * Drops the tables older than the ttl first.
 *
 * @param[in]  filter  the filter.
 * @param[in]  key     the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len the key's length in bytes.
 * @param[in]  now     the current time, >= 1 (clamped to the highest time
 *                     seen).
 * @param[out] removed receives 1 when a copy was removed, 0 when the key
 *                     was not present (nothing changed); may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter is NULL, or key is NULL with
 *                                 key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_remove(tf_rotating_cuckoo *filter, const void *key, size_t key_len, uint64_t now,
                                           int *removed);

/**
 * @brief The de-duplication call: tells whether a key is present and adds
 * it when it is not, with one hash and one pass.
 *
 * A hit does not refresh the key: it writes nothing, so that a stream of
 * duplicates costs reads only and leaves no second copy behind, and the
 * key is remembered until at least its first add + ttl (call
 * tf_rotating_cuckoo_add() to extend that).
 *
 * @param[in]  filter      the filter.
 * @param[in]  key         the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len     the key's length in bytes.
 * @param[in]  now         the current time, >= 1 (clamped to the highest
 *                         time seen).
 * @param[out] was_present receives 1 when the key was present (nothing
 *                         changed but the clock and the dropping of tables
 *                         older than the ttl), 0 when it was absent and is
 *                         now added.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or was_present is NULL, or key is
 *                                 NULL with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    a new table could not be allocated
 *                                 (nothing changed: no table dropped, the
 *                                 clock unchanged, *was_present not
 *                                 written).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_add_if_absent(tf_rotating_cuckoo *filter, const void *key, size_t key_len,
                                                  uint64_t now, int *was_present);

/**
 * @brief Batch form of tf_rotating_cuckoo_contains().
 *
 * The same results as calling tf_rotating_cuckoo_contains() for keys[0 ..
 * count) in order, with the buckets of each group of keys prefetched
 * together so that their cache misses overlap. Every argument is checked
 * first; count == 0 is a no-op (the arrays may then be NULL).
 *
 * @param[in]  filter   the filter.
 * @param[in]  keys     `count` key pointers; keys[i] may be NULL only when
 *                      key_lens[i] is 0.
 * @param[in]  key_lens `count` key lengths in bytes.
 * @param[in]  count    the number of keys.
 * @param[in]  now      the current time, >= 1.
 * @param[out] present  receives `count` answers, as
 *                      tf_rotating_cuckoo_contains().
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or an array is NULL, or keys[i] is
 *                                 NULL with key_lens[i] > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_contains_batch(const tf_rotating_cuckoo *filter, const void *const *keys,
                                                   const size_t *key_lens, size_t count, uint64_t now, int *present);

/**
 * @brief Batch form of tf_rotating_cuckoo_add_if_absent().
 *
 * The same results and the same filter as calling
 * tf_rotating_cuckoo_add_if_absent() for keys[0 .. count) in order (a key
 * repeated within the batch is present from its second occurrence on), with
 * the buckets of each group of keys prefetched together. Every argument is
 * checked before anything changes; count == 0 is a no-op.
 *
 * @param[in]  filter      the filter.
 * @param[in]  keys        `count` key pointers; keys[i] may be NULL only
 *                         when key_lens[i] is 0.
 * @param[in]  key_lens    `count` key lengths in bytes.
 * @param[in]  count       the number of keys.
 * @param[in]  now         the current time, >= 1.
 * @param[out] was_present receives `count` answers, as
 *                         tf_rotating_cuckoo_add_if_absent().
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or an array is NULL, or keys[i] is
 *                                 NULL with key_lens[i] > 0 (nothing
 *                                 changed).
 * @retval TF_ERR_INVALID_ARGUMENT now is 0 (nothing changed).
 * @retval TF_ERR_OUT_OF_MEMORY    a new table could not be allocated for
 *                                 key i: keys 0 .. i-1 were processed and
 *                                 their answers written, key i and those
 *                                 after it were not, as if the batch had
 *                                 been keys 0 .. i-1 (the message names
 *                                 i).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_add_if_absent_batch(tf_rotating_cuckoo *filter, const void *const *keys,
                                                        const size_t *key_lens, size_t count, uint64_t now,
                                                        int *was_present);

/**
 * @brief Forgets every key: one empty table of the first table's size
 * remains, the counters of stats restart, the clock keeps its time.
 *
 * @param[in] filter the filter.
 * @retval TF_OK                success.
 * @retval TF_ERR_NULL          filter is NULL.
 * @retval TF_ERR_OUT_OF_MEMORY the first table's size had to be
 *                              allocated anew and could not be (nothing
 *                              changed).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_clear(tf_rotating_cuckoo *filter);

/**
 * @brief Reports the state at time `now`: tables, load, memory, losses by
 * cause, rotations by cause. O(tables).
 *
 * @param[in]     filter the filter.
 * @param[in]     now    the time the state is read at, >= 1 (clamped to
 *                       the highest time seen).
 * @param[in,out] stats  a ::tf_rotating_cuckoo_stats initialized with
 *                       ::TF_ROTATING_CUCKOO_STATS_INIT; receives the
 *                       fields its `size` covers.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0, or stats->size is below the
 *                                 struct's first version or above 4096 (not
 *                                 initialized).
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_get_stats(const tf_rotating_cuckoo *filter, uint64_t now,
                                              tf_rotating_cuckoo_stats *stats);

/**
 * @brief Reports one table: its slots, load, newest entry and whether it
 * has expired at `now`. O(1).
 *
 * @param[in]     filter the filter.
 * @param[in]     i      the table: 0 is the newest, the `tables` of
 *                       tf_rotating_cuckoo_get_stats() minus 1 the oldest.
 * @param[in]     now    the time it is read at, >= 1 (clamped).
 * @param[in,out] table  a ::tf_rotating_cuckoo_table initialized with
 *                       ::TF_ROTATING_CUCKOO_TABLE_INIT.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or table is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT there is no table i, now is 0, or
 *                                 table->size is not initialized.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_get_table(const tf_rotating_cuckoo *filter, uint64_t i, uint64_t now,
                                              tf_rotating_cuckoo_table *table);

/**
 * @brief Reports what was fixed at creation (the options, defaults
 * resolved). O(1).
 *
 * @param[in]     filter the filter.
 * @param[in,out] info   a ::tf_rotating_cuckoo_info initialized with
 *                       ::TF_ROTATING_CUCKOO_INFO_INIT.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or info is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT info->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_get_info(const tf_rotating_cuckoo *filter, tf_rotating_cuckoo_info *info);

/**
 * @brief Reports the bytes of memory the filter holds (the handle, its
 * bookkeeping for max_tables tables and every table); at most max_memory
 * between calls.
 *
 * @param[in]  filter the filter.
 * @param[out] bytes  receives the number of bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter or bytes is NULL.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_memory(const tf_rotating_cuckoo *filter, size_t *bytes);

/**
 * @brief The size of the filter's blob, in bytes (wire format kind 5;
 * docs/wire-format.md).
 *
 * @param[in]  filter the filter.
 * @param[out] size   receives the blob's size.
 * @retval TF_OK            success.
 * @retval TF_ERR_NULL      filter or size is NULL.
 * @retval TF_ERR_TOO_LARGE the size overflows size_t.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_serialized_size(const tf_rotating_cuckoo *filter, size_t *size);

/**
 * @brief Writes the filter as a blob: wire format kind 5, little-endian,
 * checksummed; every option, counter, table and fingerprint, and the clock
 * (so that a table older than the ttl stays expired after a round trip).
 *
 * @param[in]  filter   the filter.
 * @param[out] buf      the buffer; may be NULL when capacity is 0.
 * @param[in]  capacity the buffer's size in bytes.
 * @param[out] written  receives the bytes written; on
 *                      ::TF_ERR_BUFFER_TOO_SMALL, the size needed.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or written is NULL, or buf is NULL
 *                                 while capacity is large enough.
 * @retval TF_ERR_BUFFER_TOO_SMALL capacity is below the blob's size; nothing
 *                                 is written into buf.
 * @retval TF_ERR_TOO_LARGE        the size overflows size_t.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_serialize(const tf_rotating_cuckoo *filter, void *buf, size_t capacity,
                                              size_t *written);

/**
 * @brief Creates a filter from a blob of tf_rotating_cuckoo_serialize().
 *
 * Validates the envelope, the checksum and every field before allocating
 * (each table's fingerprint count, serials, times, sizes and the memory cap
 * the blob declares). The filter it makes holds at most the blob's size
 * plus 256 KiB (the fixed part: the bookkeeping of up to 1024 tables and
 * the kick path; each table's alignment): a hostile blob gets a status, never a crash or a larger
 * allocation.
 *
 * @param[in]  buf     the blob.
 * @param[in]  len     its length in bytes.
 * @param[in]  options a ::tf_deserialize_options initialized with
 *                     ::TF_DESERIALIZE_OPTIONS_INIT, or NULL for the
 *                     defaults; `max_memory` caps what
 *                     tf_rotating_cuckoo_memory() of the new filter may
 *                     report.
 * @param[out] out     receives the new filter, owned by the caller
 *                     (tf_rotating_cuckoo_free()).
 * @retval TF_OK                      success.
 * @retval TF_ERR_NULL                buf or out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT    options->size is not initialized, or
 *                                    options sets a field this library does
 *                                    not know.
 * @retval TF_ERR_TOO_LARGE           the filter would hold more than
 *                                    options->max_memory bytes (nothing is
 *                                    allocated).
 * @retval TF_ERR_TRUNCATED           the blob is shorter than its header says.
 * @retval TF_ERR_BAD_MAGIC           the blob does not start with "TFLT".
 * @retval TF_ERR_UNSUPPORTED_VERSION the format version is unknown.
 * @retval TF_ERR_WRONG_KIND          the blob holds another structure.
 * @retval TF_ERR_CHECKSUM            the checksum does not match.
 * @retval TF_ERR_CORRUPT             a field breaks the filter's invariants,
 *                                    or the blob sets an unknown flag bit.
 * @retval TF_ERR_OUT_OF_MEMORY       an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_rotating_cuckoo_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                                tf_rotating_cuckoo **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_ROTATING_CUCKOO_H */
