// The connection options (tf_redis_options) every handle of the companion
// library reads the same way: the limiter and the sketch share.
#ifndef TF_LIB_REDIS_OPTIONS_HPP
#define TF_LIB_REDIS_OPTIONS_HPP

#include "redis/servers.hpp"
#include "temporalfilters/redis.h"

namespace tf {
namespace redis {

// Reads the caller's options (NULL: the defaults) into *o, checked; a NULL
// prefix becomes `default_prefix`.
tf_status read_options(const tf_redis_options *in, const char *default_prefix, tf_redis_options *o);

// The servers' configuration of checked options (their seeds parsed).
tf_status servers_config(const tf_redis_options &o, Servers::Config *cfg);

}  // namespace redis
}  // namespace tf

#endif
