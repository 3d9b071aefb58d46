#include "redis/options.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/status.hpp"
#include "common/versioned.hpp"

namespace tf {
namespace redis {

namespace {
// Times the limiter's script computes with stay below 2^51 (its numbers are
// doubles, exact below 2^53).
constexpr uint64_t kMaxTime = uint64_t(1) << 51;
constexpr size_t kMaxPrefix = 256;
}  // namespace

tf_status read_options(const tf_redis_options *in, const char *default_prefix, tf_redis_options *o) {
    *o = TF_REDIS_OPTIONS_INIT;
    tf_status st = tf::get_versioned(in, o, TF_VERSIONED_END(tf_redis_options, prefix), "options");
    if (st != TF_OK) return st;
    if (o->host == nullptr) o->host = "127.0.0.1";
    if (o->host[0] == '\0') return fail(TF_ERR_INVALID_ARGUMENT, "options->host is empty");
    if (o->port == 0 || o->port > 65535)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->port %u is not in 1..65535", o->port);
    if (o->connect_timeout_ms == 0 || o->command_timeout_ms == 0)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->connect_timeout_ms and command_timeout_ms must be >= 1");
    if (o->time_source > TF_REDIS_TIME_SERVER)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->time_source %u is unknown", o->time_source);
    if (o->fallback > TF_REDIS_FALLBACK_LOCAL)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->fallback %u is unknown", o->fallback);
    if (o->reconnect_min_ms == 0) o->reconnect_min_ms = 100;
    if (o->reconnect_max_ms == 0) o->reconnect_max_ms = o->reconnect_min_ms > 5000 ? o->reconnect_min_ms : 5000;
    if (o->reconnect_max_ms < o->reconnect_min_ms)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->reconnect_max_ms %u is below reconnect_min_ms %u",
                    o->reconnect_max_ms, o->reconnect_min_ms);
    if (o->idle_expiry_ms >= kMaxTime)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->idle_expiry_ms is not below 2^51");
    if (o->prefix == nullptr) o->prefix = default_prefix;
    const size_t plen = std::strlen(o->prefix);
    if (plen > kMaxPrefix) return fail(TF_ERR_INVALID_ARGUMENT, "options->prefix is longer than %zu bytes", kMaxPrefix);
    if (std::strpbrk(o->prefix, "{}"))
        return fail(TF_ERR_INVALID_ARGUMENT, "options->prefix must not contain '{' or '}' (the limiter's hash tags)");
    if (o->mode > TF_REDIS_MODE_CLUSTER) return fail(TF_ERR_INVALID_ARGUMENT, "options->mode %u is unknown", o->mode);
    if (o->cluster_seeds && o->mode != TF_REDIS_MODE_CLUSTER)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->cluster_seeds needs options->mode TF_REDIS_MODE_CLUSTER");
    return TF_OK;
}

namespace {

// The seeds of options->cluster_seeds: "host:port[,host:port...]".
tf_status read_seeds(const char *list, std::vector<std::pair<std::string, int>> *out) {
    if (list == nullptr) return TF_OK;
    if (std::strlen(list) > 4096)
        return fail(TF_ERR_INVALID_ARGUMENT, "options->cluster_seeds is longer than 4096 bytes");
    std::string all(list);
    size_t at = 0;
    for (;;) {
        const size_t comma = all.find(',', at);
        const std::string one = all.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        const size_t colon = one.rfind(':');
        char *end = nullptr;
        const unsigned long port = colon == std::string::npos ? 0 : std::strtoul(one.c_str() + colon + 1, &end, 10);
        if (colon == std::string::npos || colon == 0 || end == one.c_str() + colon + 1 || *end != '\0' || port == 0 ||
            port > 65535)
            return fail(TF_ERR_INVALID_ARGUMENT,
                        "options->cluster_seeds: \"%s\" is not host:port with a port in 1..65535", one.c_str());
        out->emplace_back(one.substr(0, colon), int(port));
        if (comma == std::string::npos) return TF_OK;
        at = comma + 1;
    }
}

}  // namespace

tf_status servers_config(const tf_redis_options &o, Servers::Config *cfg) {
    cfg->conn.host = o.host;
    cfg->conn.port = int(o.port);
    cfg->conn.connect_timeout_ms = o.connect_timeout_ms;
    cfg->conn.command_timeout_ms = o.command_timeout_ms;
    cfg->conn.reconnect_min_ms = o.reconnect_min_ms;
    cfg->conn.reconnect_max_ms = o.reconnect_max_ms;
    cfg->cluster = o.mode == TF_REDIS_MODE_CLUSTER;
    return read_seeds(o.cluster_seeds, &cfg->more_seeds);
}

}  // namespace redis
}  // namespace tf
