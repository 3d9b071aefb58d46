#include "raw_redis.h"

#include <stdarg.h>
#include <stddef.h>

redisReply *raw_redis(const rs_server *s, const char *fmt, ...) {
    redisContext *c = redisConnect("127.0.0.1", s->port);
    if (c == NULL) return NULL;
    redisReply *r = NULL;
    if (c->err == 0) {
        va_list ap;
        va_start(ap, fmt);
        r = redisvCommand(c, fmt, ap);
        va_end(ap);
    }
    redisFree(c);
    return r;
}
