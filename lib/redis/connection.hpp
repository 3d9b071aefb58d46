// One connection to one Redis server (hiredis 0.14, blocking, with
// timeouts), re-established on its own after a failure: the context is
// dropped on any I/O error (hiredis cannot use it again) and a new one is
// made by the first call due after a backoff that doubles from `min_ms` to
// `max_ms`. Calls before that fail fast. Every failure is a status
// (TF_ERR_TIMEOUT: the server did not answer in time; TF_ERR_UNAVAILABLE:
// anything else) with its message in the core's last error. A cluster
// (later) keeps one Connection per node.
#ifndef TF_LIB_REDIS_CONNECTION_HPP
#define TF_LIB_REDIS_CONNECTION_HPP

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "temporalfilters/common.h"

namespace tf {
namespace redis {

struct FreeReply {
    void operator()(redisReply *r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, FreeReply>;

// One command: its arguments, binary-safe.
using Command = std::vector<std::string>;

// Milliseconds of a monotonic clock.
uint64_t monotonic_ms();

class Connection {
   public:
    struct Config {
        std::string host;
        int port = 6379;
        uint32_t connect_timeout_ms = 1000, command_timeout_ms = 1000;
        uint32_t reconnect_min_ms = 100, reconnect_max_ms = 5000;
    };
    explicit Connection(Config cfg) : cfg_(std::move(cfg)), backoff_ms_(cfg_.reconnect_min_ms) {}
    ~Connection() { drop(); }
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    // A usable context: connects now unless a reconnection is not due yet.
    tf_status ensure();
    // One command and its reply (which may be an error reply: the
    // connection is fine then).
    tf_status command(const Command &cmd, Reply *out);
    // Sends every command at once (one pipeline), then reads the replies
    // in order into `out` (resized to cmds.size()). On a failure the
    // replies read so far stay in out[0 .. *read) and the status says why.
    tf_status pipeline(const std::vector<Command> &cmds, std::vector<Reply> *out, size_t *read);

    uint64_t reconnects() const { return reconnects_; }
    const Config &config() const { return cfg_; }

   private:
    // The failure of the context (err set), as a status with its message;
    // drops the context and schedules the next attempt.
    tf_status failed(const char *doing, int err_no);
    void drop();

    Config cfg_;
    redisContext *ctx_ = nullptr;
    bool failed_before_ = false;  // a failure happened since the last connection
    bool ever_connected_ = false;
    uint64_t next_try_ms_ = 0, backoff_ms_;
    uint64_t reconnects_ = 0;
};

}  // namespace redis
}  // namespace tf

#endif
