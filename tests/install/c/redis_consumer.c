/* A program built against the installed Redis companion with pkg-config only
 * (`pkg-config --cflags --libs temporalfilters-redis`, which brings the core
 * along): it creates a tf_redis_limiter on the redis-server its run script
 * started on a free loopback port (the port is argv[1]), takes one permit,
 * and makes one deliberate error, whose explanation comes from the core's
 * tf_last_error_message(). tests/install/c/run.sh builds it against /usr
 * (the Debian packages libtemporalfilters-redis-dev and its dependencies);
 * tests/install/check_install.sh against a staging prefix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <temporalfilters.h>
#include <temporalfilters/redis.h>

#define EXPECT(cond)                                                                \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "redis_consumer.c:%d: expected %s\n", __LINE__, #cond); \
            fprintf(stderr, "  last error: %s\n", tf_last_error_message());         \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main(int argc, char **argv) {
    EXPECT(argc == 2);
    long port = strtol(argv[1], NULL, 10);
    EXPECT(port > 0 && port < 65536);
    EXPECT(strcmp(tf_version_string(), TF_VERSION_STRING) == 0);

    /* A fresh key prefix: nothing of an earlier run applies. */
    char prefix[64];
    snprintf(prefix, sizeof prefix, "tf:install:%ld:", port);
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    o.host = "127.0.0.1";
    o.port = (uint32_t)port;
    o.prefix = prefix;
    tf_redis_limiter *l = NULL;
    tf_status st = tf_redis_limiter_new(2, 1000, 100, TF_RATE_LIMITER_EXACT, &o, &l);
    EXPECT(st == TF_OK && l != NULL);

    int allowed = 0;
    uint64_t remaining = 0, retry_at = 1;
    st = tf_redis_limiter_acquire(l, "alpha", 5, 10, 1, &allowed, &remaining, &retry_at);
    EXPECT(st == TF_OK);
    EXPECT(allowed == 1 && remaining == 1 && retry_at == 0);
    printf("  redis limiter on 127.0.0.1:%ld: acquire allowed, %llu remaining\n", port, (unsigned long long)remaining);

    /* The deliberate error: time 0 with the caller's clock. The companion
     * refuses it with a status and explains it through the core's last
     * error message; nothing is decided or taken. */
    tf_clear_last_error();
    EXPECT(tf_last_error_message()[0] == '\0');
    allowed = -1;
    st = tf_redis_limiter_acquire(l, "alpha", 5, 0, 1, &allowed, &remaining, &retry_at);
    EXPECT(st == TF_ERR_INVALID_ARGUMENT);
    const char *message = tf_last_error_message();
    printf("  deliberate error: %s: %s\n", tf_status_string(st), message);
    EXPECT(strstr(message, "now") != NULL);

    st = tf_redis_limiter_peek(l, "alpha", 5, 20, 1, &allowed, &remaining, &retry_at);
    EXPECT(st == TF_OK && allowed == 1 && remaining == 0);
    tf_redis_limiter_stats stats = TF_REDIS_LIMITER_STATS_INIT;
    EXPECT(tf_redis_limiter_get_stats(l, &stats) == TF_OK);
    EXPECT(stats.decisions == 2 && stats.unavailable == 0 && stats.timeouts == 0 && stats.script_loads >= 1);
    tf_redis_limiter_free(l);
    printf("redis consumer ok: libtemporalfilters-redis with libtemporalfilters %s\n", tf_version_string());
    return 0;
}
