/* A program built against the installed library with pkg-config only. */
#include <stdio.h>
#include <string.h>
#include <temporalfilters.h>

int main(void) {
    tf_recency_sketch *s = NULL;
    if (tf_recency_sketch_new_for(1000, 0.01, 1, 0, &s) != TF_OK) return 1;
    uint64_t t = 0;
    if (tf_recency_sketch_update(s, "k", 1, 42) != TF_OK || tf_recency_sketch_query(s, "k", 1, &t) != TF_OK) return 1;
    tf_recency_sketch_free(s);
    if (t != 42 || strcmp(tf_version_string(), TF_VERSION_STRING) != 0) return 1;
    printf("consumer ok: libtemporalfilters %s\n", tf_version_string());
    return 0;
}
