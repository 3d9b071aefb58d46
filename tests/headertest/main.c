/* Links the per-header objects and checks the headers' version macros
 * against the library actually loaded. */
#include <stdio.h>
#include <string.h>

#include "headertest_decls.h"
#include <temporalfilters.h>

int main(void) {
    if (headertest_all() != 0) return 1;
    if (strcmp(tf_version_string(), TF_VERSION_STRING) != 0) {
        fprintf(stderr, "header version %s, library %s\n", TF_VERSION_STRING, tf_version_string());
        return 1;
    }
    printf("ok: headers compile alone, library %s\n", tf_version_string());
    return 0;
}
