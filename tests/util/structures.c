/* The structures' calls behind one set of signatures (tu_structure,
 * test_util.h), for the checks every suite shares and for make_golden.
 * No cmocka here: make_golden links this file alone. */
#include "test_util.h"

/* tf_<noun>_memory as it is (noun_memory_call), and in bytes as uint64_t
 * (noun_memory) */
#define TU_MEMORY_OF(noun)                                                                                         \
    static tf_status noun##_memory_call(const void *obj, size_t *bytes) { return tf_##noun##_memory(obj, bytes); } \
    static tf_status noun##_memory(const void *obj, uint64_t *bytes) {                                             \
        size_t b = 0;                                                                                              \
        const tf_status st = tf_##noun##_memory(obj, &b);                                                          \
        *bytes = b;                                                                                                \
        return st;                                                                                                 \
    }
TU_MEMORY_OF(recency_sketch)
TU_MEMORY_OF(age_bloom)
TU_MEMORY_OF(time_bloom)
TU_MEMORY_OF(rate_limiter)
TU_MEMORY_OF(rotating_cuckoo)
TU_MEMORY_OF(recency_window)

/* tu_<noun>: tf_<noun>'s calls as a tu_structure */
#define TU_STRUCTURE(noun)                                                                                         \
    static tf_status noun##_serialize(const void *obj, void *buf, size_t capacity, size_t *written) {              \
        return tf_##noun##_serialize(obj, buf, capacity, written);                                                 \
    }                                                                                                              \
    static tf_status noun##_serialized_size(const void *obj, size_t *size) {                                       \
        return tf_##noun##_serialized_size(obj, size);                                                             \
    }                                                                                                              \
    static tf_status noun##_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,        \
                                        void **out) {                                                              \
        tf_##noun *made = NULL;                                                                                    \
        const tf_status st = tf_##noun##_deserialize(buf, len, options, out ? &made : NULL);                       \
        if (out) *out = made;                                                                                      \
        return st;                                                                                                 \
    }                                                                                                              \
    static tf_status noun##_get_info(const void *obj, void *info) { return tf_##noun##_get_info(obj, info); }      \
    static void noun##_free(void *obj) { tf_##noun##_free(obj); }                                                  \
    const tu_structure tu_##noun = {#noun,         noun##_serialize,   noun##_serialized_size, noun##_deserialize, \
                                    noun##_memory, noun##_memory_call, noun##_get_info,        noun##_free}
TU_STRUCTURE(recency_sketch);
TU_STRUCTURE(age_bloom);
TU_STRUCTURE(time_bloom);
TU_STRUCTURE(rate_limiter);
TU_STRUCTURE(rotating_cuckoo);
TU_STRUCTURE(recency_window);
