/* A program built against the installed library with pkg-config only: every
 * structure (RecencySketch, AgeBloom, TimeBloom, RateLimiter, RotatingCuckoo,
 * RecencyWindow) answers a few
 * calls, and each one's blob goes through a round trip (serialize,
 * deserialize, the copy answers the same and writes the same bytes).
 * tests/install/c/run.sh builds it against /usr (the Debian packages);
 * tests/install/check_install.sh against a staging prefix, shared and
 * static. A later structure joins it (CONTRIBUTING.md, "Adding a
 * structure"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <temporalfilters.h>

static int failed(const char *what, int line, tf_status st) {
    fprintf(stderr, "consumer.c:%d: %s: %s (%s)\n", line, what, tf_status_string(st), tf_last_error_message());
    return 1;
}

#define CHECK(call)                                            \
    do {                                                       \
        tf_status st_ = (call);                                \
        if (st_ != TF_OK) return failed(#call, __LINE__, st_); \
    } while (0)
#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "consumer.c:%d: expected %s\n", __LINE__, #cond); \
            return 1;                                                         \
        }                                                                     \
    } while (0)

/* The blob of h (tf_<noun>_serialize into a buffer of its serialized size)
 * is read back into *copy (tf_<noun>_deserialize with the default limits),
 * and the copy's own blob must be the same bytes. */
#define ROUND_TRIP(noun, h, copy)                                           \
    do {                                                                    \
        size_t size_ = 0, written_ = 0, again_ = 0;                         \
        CHECK(tf_##noun##_serialized_size(h, &size_));                      \
        unsigned char *blob_ = malloc(size_), *blob2_ = malloc(size_);      \
        EXPECT(blob_ != NULL && blob2_ != NULL);                            \
        CHECK(tf_##noun##_serialize(h, blob_, size_, &written_));           \
        EXPECT(written_ == size_);                                          \
        CHECK(tf_##noun##_deserialize(blob_, written_, NULL, copy));        \
        CHECK(tf_##noun##_serialize(*(copy), blob2_, size_, &again_));      \
        EXPECT(again_ == written_ && memcmp(blob_, blob2_, written_) == 0); \
        printf("  %s: %zu-byte blob round trip\n", #noun, written_);        \
        free(blob_);                                                        \
        free(blob2_);                                                       \
    } while (0)

static int recency_sketch(void) {
    tf_recency_sketch *s = NULL, *copy = NULL;
    uint64_t t = 0;
    CHECK(tf_recency_sketch_new_for(1000, 0.01, 7, 0, &s));
    CHECK(tf_recency_sketch_update(s, "alpha", 5, 42));
    CHECK(tf_recency_sketch_query(s, "alpha", 5, &t));
    EXPECT(t == 42);
    ROUND_TRIP(recency_sketch, s, &copy);
    CHECK(tf_recency_sketch_query(copy, "alpha", 5, &t));
    EXPECT(t == 42);
    tf_recency_sketch_free(copy);
    tf_recency_sketch_free(s);
    return 0;
}

static int age_bloom(void) {
    tf_age_bloom *f = NULL, *copy = NULL;
    int present = 0;
    CHECK(tf_age_bloom_new_for(1000, 0.01, 7, TF_AGE_BLOOM_BLOCKED, &f));
    CHECK(tf_age_bloom_add(f, "alpha", 5));
    CHECK(tf_age_bloom_contains(f, "alpha", 5, &present));
    EXPECT(present);
    ROUND_TRIP(age_bloom, f, &copy);
    CHECK(tf_age_bloom_contains(copy, "alpha", 5, &present));
    EXPECT(present);
    tf_age_bloom_info info = TF_AGE_BLOOM_INFO_INIT;
    CHECK(tf_age_bloom_get_info(copy, &info));
    EXPECT(info.flags == TF_AGE_BLOOM_BLOCKED);
    tf_age_bloom_free(copy);
    tf_age_bloom_free(f);
    return 0;
}

static int time_bloom(void) {
    tf_time_bloom *f = NULL, *copy = NULL;
    int present = 0;
    CHECK(tf_time_bloom_new_for(100, 0.01, 1000, 7, 0, &f));
    CHECK(tf_time_bloom_add(f, "alpha", 5, 10));
    CHECK(tf_time_bloom_contains(f, "alpha", 5, 20, &present));
    EXPECT(present);
    ROUND_TRIP(time_bloom, f, &copy);
    CHECK(tf_time_bloom_contains(copy, "alpha", 5, 20, &present));
    EXPECT(present);
    CHECK(tf_time_bloom_contains(copy, "alpha", 5, 5000, &present));
    EXPECT(!present);
    tf_time_bloom_free(copy);
    tf_time_bloom_free(f);
    return 0;
}

static int rate_limiter(void) {
    tf_rate_limiter *l = NULL, *copy = NULL;
    int allowed = 0;
    uint64_t remaining = 0, retry_at = 0;
    CHECK(tf_rate_limiter_new(2, 1000, 100, 7, TF_RATE_LIMITER_EXACT, &l));
    CHECK(tf_rate_limiter_acquire(l, "alpha", 5, 10, 1, &allowed, &remaining, &retry_at));
    EXPECT(allowed && remaining == 1);
    ROUND_TRIP(rate_limiter, l, &copy);
    CHECK(tf_rate_limiter_acquire(copy, "alpha", 5, 20, 1, &allowed, &remaining, &retry_at));
    EXPECT(allowed && remaining == 0);
    CHECK(tf_rate_limiter_acquire(copy, "alpha", 5, 30, 1, &allowed, &remaining, &retry_at));
    EXPECT(!allowed);
    tf_rate_limiter_free(copy);
    tf_rate_limiter_free(l);
    return 0;
}

static int rotating_cuckoo(void) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    tf_rotating_cuckoo *f = NULL, *copy = NULL;
    int present = 0;
    o.table_slots = 64;
    o.ttl = 1000;
    o.seed = 7;
    CHECK(tf_rotating_cuckoo_new(&o, &f));
    CHECK(tf_rotating_cuckoo_add_if_absent(f, "alpha", 5, 10, &present));
    EXPECT(!present);
    CHECK(tf_rotating_cuckoo_add_if_absent(f, "alpha", 5, 20, &present));
    EXPECT(present);
    ROUND_TRIP(rotating_cuckoo, f, &copy);
    CHECK(tf_rotating_cuckoo_contains(copy, "alpha", 5, 20, &present));
    EXPECT(present);
    CHECK(tf_rotating_cuckoo_contains(copy, "beta", 4, 20, &present));
    EXPECT(!present);
    CHECK(tf_rotating_cuckoo_contains(copy, "alpha", 5, 5000, &present));
    EXPECT(!present);
    tf_rotating_cuckoo_free(copy);
    tf_rotating_cuckoo_free(f);
    return 0;
}

static int recency_window(void) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    tf_recency_window *w = NULL, *copy = NULL;
    uint64_t r = 0;
    o.window = 100;
    o.mode = TF_RECENCY_WINDOW_EXACT;
    o.seed = 7;
    CHECK(tf_recency_window_new(&o, &w));
    CHECK(tf_recency_window_insert_report(w, "alpha", 5, &r));
    EXPECT(r == TF_RECENCY_WINDOW_NOT_IN_WINDOW);
    CHECK(tf_recency_window_insert(w, "beta", 4));
    CHECK(tf_recency_window_insert(w, "gamma", 5));
    ROUND_TRIP(recency_window, w, &copy);
    CHECK(tf_recency_window_query(copy, "alpha", 5, &r));
    EXPECT(r == 2); /* two inserts since alpha's */
    CHECK(tf_recency_window_insert_report(copy, "alpha", 5, &r));
    EXPECT(r == 2);
    CHECK(tf_recency_window_query(copy, "delta", 5, &r));
    EXPECT(r == TF_RECENCY_WINDOW_NOT_IN_WINDOW);
    tf_recency_window_free(copy);
    tf_recency_window_free(w);
    return 0;
}

int main(void) {
    EXPECT(strcmp(tf_version_string(), TF_VERSION_STRING) == 0);
    if (recency_sketch() || age_bloom() || time_bloom() || rate_limiter() || rotating_cuckoo() || recency_window())
        return 1;
    printf("consumer ok: libtemporalfilters %s\n", tf_version_string());
    return 0;
}
