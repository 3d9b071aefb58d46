// The Redis servers of one limiter: a single server, or a Redis Cluster
// routed by this library (hiredis 0.14 has no cluster API).
//
// Single server: one Connection; every command goes there.
//
// Cluster: the slot of a command is the CRC16-XMODEM of its routing key
// modulo 16384, of the part between the first '{' and the next '}' when
// that part is not empty (the hash-tag rule). The slot table comes from
// CLUSTER SLOTS, asked of any known node (the seeds first); one Connection
// per master. A MOVED reply updates the slot's owner, marks the table for a
// refresh before the next command and retries on the new owner; an ASK
// reply sends ASKING then the command to the node named, once, without
// changing the table; TRYAGAIN (a multi-key command during a slot's
// migration) waits briefly and retries; at most kMaxRedirects hops. A
// connection failure marks the table for a refresh (a failover moves
// slots).
//
// The script cache is per node: an EVALSHA answered NOSCRIPT loads the
// script on that node (SCRIPT LOAD) and retries there.
#ifndef TF_LIB_REDIS_SERVERS_HPP
#define TF_LIB_REDIS_SERVERS_HPP

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis/connection.hpp"

namespace tf {
namespace redis {

// The cluster slot of a routing key (hash-tag rules).
unsigned slot_of(const std::string &key);

class Servers {
   public:
    struct Config {
        Connection::Config conn;  // host and port: the server, or the first seed of a cluster
        bool cluster = false;
        std::vector<std::pair<std::string, int>> more_seeds;  // cluster only
    };
    Servers(Config cfg, const char *script);

    // Connects and loads the script (on every master of a cluster, once
    // each); a cluster whose CLUSTER SLOTS lists no range is unavailable.
    tf_status start();
    // One command routed by `route` (ignored on a single server).
    tf_status call(const std::string &route, const Command &cmd, Reply *out);
    // The commands, each routed by its route, sent as one pipeline per
    // node; replies in order of `cmds`. A command whose node failed gets
    // that status in (*status)[i] and no reply; each failed node's status
    // is appended to *failures once (the calls that failed, to count).
    void pipeline(const std::vector<std::string> &routes, const std::vector<Command> &cmds, std::vector<Reply> *out,
                  std::vector<tf_status> *status, std::vector<tf_status> *failures);

    const std::string &sha() const { return sha_; }
    uint64_t reconnects() const;
    uint64_t script_loads() const { return script_loads_; }
    uint64_t redirects() const { return redirects_; }
    bool cluster() const { return cfg_.cluster; }

   private:
    static constexpr int kMaxRedirects = 5;
    static constexpr unsigned kSlots = 16384;

    Connection *node(const std::string &addr);  // the connection of "host:port", made on first use
    tf_status refresh();                        // the slot table from CLUSTER SLOTS
    tf_status owner(const std::string &route, std::string *addr);
    tf_status load_on(Connection *c);
    // A reply that sends the command elsewhere or asks to try again:
    // handled here (the reply replaced by the final one) unless it failed.
    tf_status follow(const Command &cmd, std::string addr, Reply *out);

    Config cfg_;
    std::string script_, sha_;
    std::map<std::string, std::unique_ptr<Connection>> nodes_;
    std::vector<std::string> seeds_;       // "host:port", in order
    std::vector<std::string> slot_owner_;  // cluster: "host:port" of each slot ("" unknown)
    bool stale_ = true;
    uint64_t script_loads_ = 0, redirects_ = 0;
};

}  // namespace redis
}  // namespace tf

#endif
