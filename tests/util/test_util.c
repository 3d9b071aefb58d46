#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>

#include <murmurhash.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

uint64_t tu_next(tu_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t tu_below(tu_rng *r, uint64_t n) { return n ? tu_next(r) % n : 0; }

double tu_unit(tu_rng *r) { return (double)(tu_next(r) >> 11) * (1.0 / 9007199254740992.0); }

tu_key tu_make_key(unsigned char tag, uint64_t id) {
    tu_key k;
    k.b[0] = tag;
    for (int i = 0; i < 8; ++i) k.b[1 + i] = (unsigned char)(id >> (8 * i));
    return k;
}

unsigned char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    *len = n;
    return buf;
}

const char *tu_data_path(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", TF_TEST_DATA_DIR, name);
    return path;
}

void tu_put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

void tu_fix_checksum(unsigned char *blob, size_t len) {
    uint64_t h[2];
    lmmh_x64_128(blob, (unsigned)(len - 8), 0, h);
    tu_put_le(blob + len - 8, h[0], 8);
}

tf_status tu_flipped_status(const unsigned char *blob, size_t bit) {
    const size_t off = bit / 8;
    if (off < 4) return TF_ERR_BAD_MAGIC;
    if (off < 6) return TF_ERR_UNSUPPORTED_VERSION;
    if (off < 8) return TF_ERR_WRONG_KIND;
    if (off < 12) return TF_ERR_CHECKSUM;
    if (off < 20) return (blob[off] & (1u << (bit % 8))) ? TF_ERR_TRUNCATED : TF_ERR_CORRUPT;
    return TF_ERR_CHECKSUM;
}

void tu_check_bit_flips(unsigned char *blob, size_t len, tu_try_blob_fn try_blob) {
    for (size_t bit = 0; bit < len * 8; ++bit) {
        const size_t off = bit / 8;
        blob[off] ^= (unsigned char)(1u << (bit % 8));
        const tf_status st = try_blob(blob, len), want = tu_flipped_status(blob, bit);
        if (st != want)
            fail_msg("bit %zu (byte %zu): got %s, want %s", bit, off, tf_status_string(st), tf_status_string(want));
        blob[off] ^= (unsigned char)(1u << (bit % 8));
    }
    assert_int_equal(try_blob(blob, len), TF_OK);
}

void tu_check_truncations(const unsigned char *blob, size_t len, tu_try_blob_fn try_blob) {
    for (size_t cut = 0; cut < len; ++cut) {
        unsigned char *copy = malloc(cut ? cut : 1);
        assert_non_null(copy);
        memcpy(copy, blob, cut);
        const tf_status st = try_blob(copy, cut);
        if (st != TF_ERR_TRUNCATED) fail_msg("%zu of %zu bytes: got %s", cut, len, tf_status_string(st));
        free(copy);
    }
}

void tu_check_payload_flips(unsigned char *blob, size_t len, tu_try_blob_fn try_blob) {
    unsigned accepted = 0, rejected = 0;
    for (size_t bit = 20 * 8; bit < (len - 8) * 8; ++bit) {
        blob[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        tu_fix_checksum(blob, len);
        const tf_status st = try_blob(blob, len);
        if (st == TF_OK)
            accepted++;
        else if (st == TF_ERR_CORRUPT)
            rejected++;
        else
            fail_msg("bit %zu: got %s (%s)", bit, tf_status_string(st), tf_last_error_message());
        blob[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    tu_fix_checksum(blob, len);
    assert_int_equal(try_blob(blob, len), TF_OK);
    assert_true(accepted > 0 && rejected > 0);
}

void tu_check_serialize_contract(const void *obj, size_t need, tu_serialize_fn serialize) {
    unsigned char *buf = malloc(need);
    assert_non_null(buf);
    memset(buf, 0xAA, need);
    size_t written = 0;
    assert_int_equal(serialize(obj, buf, need - 1, &written), TF_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(written, need);
    for (size_t i = 0; i < need; ++i) assert_int_equal(buf[i], 0xAA); /* nothing written */
    written = 0; /* the size-query idiom: NULL buffer, zero capacity */
    assert_int_equal(serialize(obj, NULL, 0, &written), TF_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(written, need);
    assert_int_equal(serialize(obj, buf, need, &written), TF_OK);
    assert_int_equal(written, need);
    free(buf);
}

uint64_t tu_check_max_memory(const unsigned char *blob, size_t len, tu_load_fn load) {
    uint64_t need = 0, got = 0;
    assert_int_equal(load(blob, len, NULL, &need), TF_OK);
    assert_true(need > 0);
    tf_deserialize_options opts = TF_DESERIALIZE_OPTIONS_INIT;
    assert_int_equal(opts.max_memory, 0); /* the default: no limit */
    assert_int_equal(load(blob, len, &opts, &got), TF_OK);
    assert_int_equal(got, need);
    opts.max_memory = need; /* exactly enough */
    assert_int_equal(load(blob, len, &opts, &got), TF_OK);
    assert_true(got <= opts.max_memory);
    const uint64_t below[] = {need - 1, need / 2, 1};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; ++i) {
        opts.max_memory = below[i];
        tf_clear_last_error();
        assert_int_equal(load(blob, len, &opts, &got), TF_ERR_TOO_LARGE);
        assert_non_null(strstr(tf_last_error_message(), "max_memory"));
    }
    /* not initialized: refused whatever the limit says */
    tf_deserialize_options bad = opts;
    bad.max_memory = 0;
    bad.size = 0;
    tf_clear_last_error();
    assert_int_equal(load(blob, len, &bad, &got), TF_ERR_INVALID_ARGUMENT);
    assert_true(strlen(tf_last_error_message()) > 0);
    bad.size = sizeof bad - 1;
    assert_int_equal(load(blob, len, &bad, &got), TF_ERR_INVALID_ARGUMENT);
    /* a later, longer version of the struct: its known fields are read */
    struct {
        tf_deserialize_options opts;
        uint64_t later_field;
    } longer;
    memset(&longer, 0, sizeof longer);
    longer.opts.size = sizeof longer;
    longer.opts.max_memory = need - 1;
    longer.later_field = 12345;
    assert_int_equal(load(blob, len, &longer.opts, &got), TF_ERR_TOO_LARGE);
    longer.opts.max_memory = need;
    assert_int_equal(load(blob, len, &longer.opts, &got), TF_OK);
    return need;
}
