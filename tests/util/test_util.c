#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>

#include <murmurhash.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

uint64_t tu_resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) fail_msg("cannot read /proc/self/statm");
    unsigned long long size = 0, resident = 0;
    const int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    if (n != 2) fail_msg("cannot parse /proc/self/statm");
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

const char *tu_data_path(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", TF_TEST_DATA_DIR, name);
    return path;
}

void tu_put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t tu_get_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
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

void tu_check_truncations(unsigned char *blob, size_t len, tu_try_blob_fn try_blob) {
    for (size_t cut = 0; cut < len; ++cut) {
        unsigned char *copy = malloc(cut ? cut : 1);
        assert_non_null(copy);
        memcpy(copy, blob, cut);
        const tf_status st = try_blob(copy, cut);
        if (st != TF_ERR_TRUNCATED) fail_msg("%zu of %zu bytes: got %s", cut, len, tf_status_string(st));
        free(copy);
    }
    unsigned char *longer = malloc(len + 1);
    assert_non_null(longer);
    memcpy(longer, blob, len);
    longer[len] = 0;
    assert_int_equal(try_blob(longer, len + 1), TF_ERR_CORRUPT); /* a byte too many */
    for (size_t cut = 8; cut < len - 28; cut += 8) {
        const size_t shorter = len - cut;
        memcpy(longer, blob, shorter);
        tu_put_le(longer + 12, shorter - 28, 8);
        tu_fix_checksum(longer, shorter);
        const tf_status st = try_blob(longer, shorter);
        if (st != TF_ERR_CORRUPT) fail_msg("payload cut by %zu bytes: got %s", cut, tf_status_string(st));
    }
    free(longer);
}

void tu_check_random_blobs(uint16_t kind, uint32_t known_flags, uint64_t seed, size_t max_len, tu_plant_fn plant,
                           const void *ctx, tu_try_blob_fn try_blob) {
    tu_rng g = {seed};
    unsigned char *buf = malloc(max_len),
                  header[8] = {'T', 'F', 'L', 'T', 1, 0, (unsigned char)kind, (unsigned char)(kind >> 8)};
    assert_non_null(buf);
    for (int i = 0; i < 20000; ++i) {
        const size_t len = tu_below(&g, max_len);
        for (size_t j = 0; j < len; ++j) buf[j] = (unsigned char)tu_next(&g);
        if (i % 2) memcpy(buf, header, len < 8 ? len : 8);
        const int consistent = plant ? i % 2 : i % 4 == 3;
        if (consistent && len >= 28) { /* a consistent envelope: the payload is parsed */
            tu_put_le(buf + 8, tu_below(&g, (uint64_t)known_flags + 1) & known_flags, 4);
            tu_put_le(buf + 12, len - 28, 8);
            if (plant) plant(buf, len, &g, ctx);
            tu_fix_checksum(buf, len);
        }
        const tf_status st = try_blob(buf, len);
        if (!(st < 0 && st >= TF_STATUS_MIN)) fail_msg("random blob %d (%zu bytes): got %d", i, len, (int)st);
    }
    free(buf);
}

void tu_check_resealed(unsigned char *blob, size_t len, tu_try_blob_fn try_blob) {
    unsigned char *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, blob, len);
    tu_fix_checksum(copy, len);
    assert_memory_equal(copy, blob, len);
    assert_int_equal(try_blob(copy, len), TF_OK);
    free(copy);
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

void tu_check_envelope(const unsigned char *blob, size_t len, uint16_t kind, uint32_t flags) {
    assert_true(len >= 28);
    assert_memory_equal(blob, "TFLT", 4);
    assert_int_equal(tu_get_le(blob + 4, 2), 1);
    assert_int_equal(tu_get_le(blob + 6, 2), kind);
    assert_int_equal(tu_get_le(blob + 8, 4), flags);
    assert_int_equal(tu_get_le(blob + 12, 8), len - 28);
}

tf_status tu_try_patched(const unsigned char *good, size_t n, size_t off, uint64_t value, int bytes,
                         tu_try_blob_fn try_blob) {
    unsigned char *b = malloc(n);
    assert_non_null(b);
    memcpy(b, good, n);
    tu_put_le(b + off, value, bytes);
    tu_fix_checksum(b, n);
    const tf_status st = try_blob(b, n);
    free(b);
    return st;
}

void tu_check_field_cases(const unsigned char *good, size_t n, const tu_field_case *cases, size_t count,
                          tu_try_blob_fn try_blob) {
    for (size_t i = 0; i < count; ++i) {
        const tf_status st = tu_try_patched(good, n, cases[i].off, cases[i].value, cases[i].bytes, try_blob);
        if (st != cases[i].want)
            fail_msg("case %zu (offset %zu = %llu): got %s (%s), want %s", i, cases[i].off,
                     (unsigned long long)cases[i].value, tf_status_string(st), tf_last_error_message(),
                     tf_status_string(cases[i].want));
    }
    /* the untouched blob with the checksum recomputed by libmurmurhash */
    unsigned char *b = malloc(n);
    assert_non_null(b);
    memcpy(b, good, n);
    tu_check_resealed(b, n, try_blob);
    free(b);
}

void tu_check_foreign_blob(const tu_structure *other, const void *obj, uint16_t kind, tf_status edited,
                           tu_try_blob_fn try_blob) {
    size_t n;
    unsigned char *blob = tu_snapshot(obj, other->serialize, &n);
    assert_int_equal(try_blob(blob, n), TF_ERR_WRONG_KIND);
    if (edited != TF_OK) {
        tu_put_le(blob + 6, kind, 2);
        tu_fix_checksum(blob, n);
        assert_int_equal(try_blob(blob, n), edited);
    }
    free(blob);
}

unsigned char *tu_snapshot(const void *obj, tu_serialize_fn serialize, size_t *len) {
    size_t need = 0, written = 0;
    assert_int_equal(serialize(obj, NULL, 0, &need), TF_ERR_BUFFER_TOO_SMALL);
    unsigned char *buf = malloc(need);
    assert_non_null(buf);
    assert_int_equal(serialize(obj, buf, need, &written), TF_OK);
    assert_int_equal(written, need);
    *len = need;
    return buf;
}

int tu_same_blob(const void *a, const void *b, tu_serialize_fn serialize) {
    size_t na, nb;
    unsigned char *x = tu_snapshot(a, serialize, &na), *y = tu_snapshot(b, serialize, &nb);
    const int eq = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return eq;
}

void tu_assert_blob(const void *obj, tu_serialize_fn serialize, const unsigned char *before, size_t len) {
    size_t n;
    unsigned char *now = tu_snapshot(obj, serialize, &n);
    assert_int_equal(n, len);
    assert_memory_equal(now, before, len);
    free(now);
}

void *tu_copy(const tu_structure *st, const void *obj) {
    size_t n;
    unsigned char *blob = tu_snapshot(obj, st->serialize, &n);
    void *copy = NULL;
    assert_int_equal(st->deserialize(blob, n, NULL, &copy), TF_OK);
    assert_non_null(copy);
    free(blob);
    return copy;
}

void tu_check_blob_of(const void *obj, tu_serialize_fn serialize, tu_blob_check_fn check, tu_try_blob_fn try_blob) {
    size_t n;
    unsigned char *blob = tu_snapshot(obj, serialize, &n);
    check(blob, n, try_blob);
    free(blob);
}

size_t tu_check_serialize_contract(const void *obj, const tu_structure *st) {
    size_t need = 0;
    assert_int_equal(st->serialized_size(obj, &need), TF_OK);
    const tu_serialize_fn serialize = st->serialize;
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
    return need;
}

void tu_check_refused_calls(const tu_structure *st, const void *obj, size_t info_size) {
    size_t n, sz = 7;
    unsigned char *before = tu_snapshot(obj, st->serialize, &n);
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
#define BAD(call, status) TU_REFUSED_UNCHANGED(call, status, obj, st->serialize, before, n)
    BAD(st->serialized_size(NULL, &sz), TF_ERR_NULL);
    BAD(st->serialized_size(obj, NULL), TF_ERR_NULL);
    BAD(st->serialize(NULL, buf, n, &sz), TF_ERR_NULL);
    BAD(st->serialize(obj, buf, n, NULL), TF_ERR_NULL);
    BAD(st->serialize(obj, NULL, n, &sz), TF_ERR_NULL);
    assert_int_equal(sz, 7); /* out-parameters untouched on failure */
    BAD(st->serialize(obj, buf, n - 1, &sz), TF_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(sz, n); /* the size it needs */
    sz = 7;
    BAD(st->memory_call(NULL, &sz), TF_ERR_NULL);
    BAD(st->memory_call(obj, NULL), TF_ERR_NULL);
    assert_int_equal(sz, 7);
    unsigned char *info = calloc(1, info_size), *zero = calloc(1, info_size);
    assert_true(info && zero);
    memcpy(info, &info_size, sizeof info_size);
    BAD(st->get_info(NULL, info), TF_ERR_NULL);
    assert_memory_equal(info + sizeof(size_t), zero + sizeof(size_t), info_size - sizeof(size_t));
    BAD(st->get_info(obj, NULL), TF_ERR_NULL);
    /* every size below the first version: never initialized, refused and
     * left alone */
    for (size_t below = 0; below < info_size; ++below) {
        memcpy(info, &below, sizeof below);
        BAD(st->get_info(obj, info), TF_ERR_INVALID_ARGUMENT);
        assert_memory_equal(info + sizeof(size_t), zero + sizeof(size_t), info_size - sizeof(size_t));
    }
#undef BAD
    free(info);
    free(zero);
    free(buf);
    free(before);
}

void tu_check_deserialize_nulls(const tu_structure *st) {
    unsigned char buf[10] = {0};
    void *out = NULL;
    TU_REFUSED(st->deserialize(NULL, 10, NULL, &out), TF_ERR_NULL);
    TU_REFUSED(st->deserialize(buf, 10, NULL, NULL), TF_ERR_NULL);
    TU_REFUSED(st->deserialize(NULL, 0, NULL, &out), TF_ERR_NULL);
    assert_null(out);
}

tf_status tu_load(const tu_structure *st, const unsigned char *blob, size_t len, const tf_deserialize_options *options,
                  uint64_t *memory) {
    void *obj = NULL;
    const tf_status status = st->deserialize(blob, len, options, &obj);
    if (status != TF_OK) {
        assert_null(obj);
        return status;
    }
    assert_non_null(obj);
    assert_int_equal(st->memory(obj, memory), TF_OK);
    st->free(obj);
    return TF_OK;
}

uint64_t tu_check_max_memory(const unsigned char *blob, size_t len, const tu_structure *st) {
    uint64_t need = 0, got = 0;
    assert_int_equal(tu_load(st, blob, len, NULL, &need), TF_OK);
    assert_true(need > 0);
    tf_deserialize_options opts = TF_DESERIALIZE_OPTIONS_INIT;
    assert_int_equal(opts.max_memory, 0); /* the default: no limit */
    assert_int_equal(tu_load(st, blob, len, &opts, &got), TF_OK);
    assert_int_equal(got, need);
    opts.max_memory = need; /* exactly enough */
    assert_int_equal(tu_load(st, blob, len, &opts, &got), TF_OK);
    assert_true(got <= opts.max_memory);
    const uint64_t below[] = {need - 1, need / 2, 1};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; ++i) {
        opts.max_memory = below[i];
        tf_clear_last_error();
        assert_int_equal(tu_load(st, blob, len, &opts, &got), TF_ERR_TOO_LARGE);
        assert_non_null(strstr(tf_last_error_message(), "max_memory"));
    }
    /* not initialized: refused whatever the limit says */
    tf_deserialize_options bad = opts;
    bad.max_memory = 0;
    bad.size = 0;
    tf_clear_last_error();
    assert_int_equal(tu_load(st, blob, len, &bad, &got), TF_ERR_INVALID_ARGUMENT);
    assert_true(strlen(tf_last_error_message()) > 0);
    bad.size = sizeof bad - 1;
    assert_int_equal(tu_load(st, blob, len, &bad, &got), TF_ERR_INVALID_ARGUMENT);
    /* a later, longer version of the struct: its known fields are read, and
     * a later option left at its default (0) is accepted */
    struct {
        tf_deserialize_options opts;
        uint64_t later_field;
    } longer;
    memset(&longer, 0, sizeof longer);
    longer.opts.size = sizeof longer;
    longer.opts.max_memory = need - 1;
    assert_int_equal(tu_load(st, blob, len, &longer.opts, &got), TF_ERR_TOO_LARGE);
    longer.opts.max_memory = need;
    assert_int_equal(tu_load(st, blob, len, &longer.opts, &got), TF_OK);
    /* a later option this library does not know, set: refused, not ignored */
    longer.later_field = 12345;
    tf_clear_last_error();
    assert_int_equal(tu_load(st, blob, len, &longer.opts, &got), TF_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tf_last_error_message(), "unknown to this library version"));
    return need;
}

void *tu_golden_read(const char *name, const void *built, const tu_structure *st) {
    assert_non_null(built);
    char file[256];
    snprintf(file, sizeof file, "%s.tfb", name);
    size_t len, written;
    unsigned char *golden = tu_read_file(tu_data_path(file), &len);
    if (!golden) fail_msg("cannot read %s", tu_data_path(file));
    /* the same operations today give the same bytes */
    unsigned char *now = tu_snapshot(built, st->serialize, &written);
    if (written != len) fail_msg("%s: the golden operations give %zu bytes, the blob has %zu", file, written, len);
    assert_memory_equal(now, golden, len);
    free(now);
    /* and the blob reads */
    void *read = NULL;
    assert_int_equal(st->deserialize(golden, len, NULL, &read), TF_OK);
    assert_non_null(read);
    free(golden);
    return read;
}

unsigned tu_for_each_answer(const char *name, int count, tu_answer_fn answer, void *ctx) {
    char file[256];
    snprintf(file, sizeof file, "%s.expected", name);
    size_t len;
    char *text = (char *)tu_read_file(tu_data_path(file), &len);
    if (!text) fail_msg("cannot read %s", tu_data_path(file));
    char *nul = realloc(text, len + 1);
    assert_non_null(nul);
    text = nul;
    text[len] = 0;
    assert_true(count >= 1 && count <= 4);
    unsigned lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char hex[129];
        int used = 0;
        assert_int_equal(sscanf(line, "%128s%n", hex, &used), 1);
        const size_t klen = strlen(hex) / 2;
        unsigned char key[64];
        assert_true(strlen(hex) % 2 == 0 && klen <= sizeof key);
        for (size_t i = 0; i < klen; ++i) {
            unsigned v;
            assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
            key[i] = (unsigned char)v;
        }
        unsigned long long numbers[4];
        const char *p = line + used;
        for (int i = 0; i < count; ++i) {
            char *end;
            numbers[i] = strtoull(p, &end, 10);
            if (end == p) fail_msg("%s: a line with fewer than %d numbers: %s", file, count, line);
            p = end;
        }
        while (*p == ' ') ++p;
        if (*p) fail_msg("%s: a line with more than %d numbers: %s", file, count, line);
        answer(key, klen, numbers, ctx);
        lines++;
    }
    free(text);
    return lines;
}

tf_status tu_try_load(const tu_structure *st, const unsigned char *blob, size_t len) {
    uint64_t memory = 0;
    tf_clear_last_error();
    const tf_status status = tu_load(st, blob, len, NULL, &memory);
    if (status == TF_OK)
        assert_true(memory > 0);
    else
        assert_true(strlen(tf_last_error_message()) > 0);
    return status;
}

void tu_check_versioned_out(const void *obj, size_t size, tu_get_fn get, void *out) {
    const size_t later = 16; /* what a later version might have added */
    unsigned char *buf = malloc(size + later), *zero = calloc(1, size + later);
    assert_true(buf && zero);
    const size_t refused[] = {0, size - 1};
    for (size_t i = 0; i < 2; ++i) {
        memset(buf, 0, size + later);
        memcpy(buf, &refused[i], sizeof(size_t));
        tf_clear_last_error();
        assert_int_equal(get(obj, buf), TF_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tf_last_error_message(), "_INIT"));
        assert_memory_equal(buf + sizeof(size_t), zero + sizeof(size_t), size + later - sizeof(size_t));
    }
    /* its own size, then a longer struct: the same fields, the rest kept */
    unsigned char *own = malloc(size);
    assert_non_null(own);
    memset(own, 0, size);
    memcpy(own, &size, sizeof size);
    assert_int_equal(get(obj, own), TF_OK);
    memset(buf, 0xA5, size + later);
    const size_t longer = size + later;
    memcpy(buf, &longer, sizeof longer);
    assert_int_equal(get(obj, buf), TF_OK);
    size_t got;
    memcpy(&got, buf, sizeof got);
    assert_int_equal(got, longer); /* `size` is the caller's */
    for (size_t i = size; i < size + later; ++i) assert_int_equal(buf[i], 0xA5);
    /* the same fields as with its own size */
    assert_memory_equal(buf + sizeof(size_t), own + sizeof(size_t), size - sizeof(size_t));
    if (out) memcpy(out, own, size);
    free(own);
    free(buf);
    free(zero);
}
