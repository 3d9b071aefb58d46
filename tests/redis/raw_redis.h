/* A plain hiredis connection for the Redis tests, to plant what another
 * client (or an older version) may have stored and to look at what the
 * library stored: one command on a fresh connection. */
#ifndef TF_TESTS_RAW_REDIS_H
#define TF_TESTS_RAW_REDIS_H

#include <hiredis/hiredis.h>

#include "redis_server.h"

/* The reply of one command (hiredis's format, as redisCommand) sent to the
 * server `s` over a connection of its own; NULL when it could not connect
 * or send. The caller frees it with freeReplyObject(). */
redisReply *raw_redis(const rs_server *s, const char *fmt, ...);

#endif
