#include "redis/servers.hpp"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>

#include "common/status.hpp"

namespace tf {
namespace redis {

namespace {

uint16_t crc16_xmodem(const char *p, size_t n) {
    uint16_t crc = 0;
    for (size_t i = 0; i < n; ++i) {
        crc ^= uint16_t(uint8_t(p[i])) << 8;
        for (int b = 0; b < 8; ++b) crc = (crc & 0x8000) ? uint16_t((crc << 1) ^ 0x1021) : uint16_t(crc << 1);
    }
    return crc;
}

bool starts_with(const redisReply *r, const char *prefix) {
    const size_t n = std::strlen(prefix);
    return r && r->type == REDIS_REPLY_ERROR && r->len >= n && std::memcmp(r->str, prefix, n) == 0;
}

std::string address(const std::string &host, long long port) { return host + ":" + std::to_string(port); }

void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
}

}  // namespace

unsigned slot_of(const std::string &key) {
    const size_t open = key.find('{');
    if (open != std::string::npos) {
        const size_t close = key.find('}', open + 1);
        if (close != std::string::npos && close > open + 1)
            return crc16_xmodem(key.data() + open + 1, close - open - 1) % 16384u;
    }
    return crc16_xmodem(key.data(), key.size()) % 16384u;
}

Servers::Servers(Config cfg, const char *script) : cfg_(std::move(cfg)), script_(script) {
    seeds_.push_back(address(cfg_.conn.host, cfg_.conn.port));
    for (const auto &s : cfg_.more_seeds) seeds_.push_back(address(s.first, s.second));
}

Connection *Servers::node(const std::string &addr) {
    auto it = nodes_.find(addr);
    if (it != nodes_.end()) return it->second.get();
    Connection::Config c = cfg_.conn;
    const size_t colon = addr.rfind(':');
    c.host = addr.substr(0, colon);
    c.port = std::atoi(addr.c_str() + colon + 1);
    Connection *made = new Connection(c);
    nodes_[addr].reset(made);
    return made;
}

uint64_t Servers::reconnects() const {
    uint64_t n = 0;
    for (const auto &kv : nodes_) n += kv.second->reconnects();
    return n;
}

tf_status Servers::load_on(Connection *c) {
    Reply r;
    tf_status st = c->command(Command{"SCRIPT", "LOAD", script_}, &r);
    if (st != TF_OK) return st;
    if (r->type != REDIS_REPLY_STRING)
        return fail(TF_ERR_UNAVAILABLE, "redis %s:%d refused the limiter's script: %s", c->config().host.c_str(),
                    c->config().port, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    script_loads_++;
    sha_.assign(r->str, r->len);
    return TF_OK;
}

tf_status Servers::refresh() {
    std::vector<std::string> candidates = seeds_;
    for (const auto &kv : nodes_) candidates.push_back(kv.first);
    tf_status last = fail(TF_ERR_UNAVAILABLE, "no redis cluster node to ask for its slots");
    for (const std::string &a : candidates) {
        Reply r;
        tf_status st = node(a)->command(Command{"CLUSTER", "SLOTS"}, &r);
        if (st != TF_OK) {
            last = st;
            continue;
        }
        if (r->type != REDIS_REPLY_ARRAY) {
            last = fail(TF_ERR_UNAVAILABLE, "redis %s answered CLUSTER SLOTS with %s (is it a cluster node?)",
                        a.c_str(), r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
            continue;
        }
        std::vector<std::string> table(kSlots);
        bool ok = true;
        for (size_t i = 0; i < r->elements && ok; ++i) {
            const redisReply *e = r->element[i];
            ok = e->type == REDIS_REPLY_ARRAY && e->elements >= 3 && e->element[0]->type == REDIS_REPLY_INTEGER &&
                 e->element[1]->type == REDIS_REPLY_INTEGER && e->element[2]->type == REDIS_REPLY_ARRAY &&
                 e->element[2]->elements >= 2 && e->element[2]->element[0]->type == REDIS_REPLY_STRING &&
                 e->element[2]->element[1]->type == REDIS_REPLY_INTEGER;
            if (!ok) break;
            const long long lo = e->element[0]->integer, hi = e->element[1]->integer;
            ok = lo >= 0 && hi < kSlots && lo <= hi;
            if (!ok) break;
            std::string host(e->element[2]->element[0]->str, e->element[2]->element[0]->len);
            if (host.empty()) host = a.substr(0, a.rfind(':'));  // "unknown endpoint": the node asked
            const std::string owner = address(host, e->element[2]->element[1]->integer);
            for (long long s = lo; s <= hi; ++s) table[size_t(s)] = owner;
        }
        if (!ok) {
            last = fail(TF_ERR_UNAVAILABLE, "redis %s answered CLUSTER SLOTS with an unexpected reply", a.c_str());
            continue;
        }
        slot_owner_.swap(table);
        stale_ = false;
        return TF_OK;
    }
    return last;
}

tf_status Servers::owner(const std::string &route, std::string *addr) {
    if (!cfg_.cluster) {
        *addr = seeds_[0];
        return TF_OK;
    }
    const unsigned slot = slot_of(route);
    if (stale_) {
        tf_status st = refresh();
        // a table that failed to refresh may still route this slot
        if (st != TF_OK && (slot_owner_.empty() || slot_owner_[slot].empty())) return st;
    }
    if (slot_owner_[slot].empty())
        return fail(TF_ERR_UNAVAILABLE, "redis cluster: slot %u has no master (CLUSTER SLOTS)", slot);
    *addr = slot_owner_[slot];
    return TF_OK;
}

tf_status Servers::start() {
    if (!cfg_.cluster) return load_on(node(seeds_[0]));
    tf_status st = refresh();
    if (st != TF_OK) return st;
    // every master once, however many separate slot ranges it owns
    std::set<std::string> masters;
    for (const std::string &o : slot_owner_)
        if (!o.empty()) masters.insert(o);
    if (masters.empty())
        return fail(TF_ERR_UNAVAILABLE,
                    "redis cluster (seed %s): CLUSTER SLOTS lists no slot ranges (no slot is assigned to a master "
                    "yet): nothing to load the script on",
                    seeds_[0].c_str());
    for (const std::string &m : masters)
        if ((st = load_on(node(m))) != TF_OK) return st;
    return TF_OK;
}

tf_status Servers::follow(const Command &cmd, std::string addr, Reply *out) {
    bool asking = false;
    for (int hop = 0;; ++hop) {
        redisReply *r = out->get();
        const bool noscript = starts_with(r, "NOSCRIPT") && cmd[0] == "EVALSHA";
        const bool moved = starts_with(r, "MOVED "), ask = starts_with(r, "ASK "), again = starts_with(r, "TRYAGAIN");
        if (starts_with(r, "CLUSTERDOWN")) stale_ = true;
        if (!noscript && !moved && !ask && !again) return TF_OK;
        if (hop >= kMaxRedirects)
            return fail(TF_ERR_UNAVAILABLE, "redis cluster: no answer after %d redirections (last: %.*s)", hop,
                        int(r->len), r->str);
        tf_status st = TF_OK;
        if (noscript) {
            // the script cache is per node: load it where it is missing
            if ((st = load_on(node(addr))) != TF_OK) return st;
        } else if (moved || ask) {
            // "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>"
            const std::string e(r->str, r->len);
            const size_t sp1 = e.find(' '), sp2 = e.find(' ', sp1 + 1);
            if (sp2 == std::string::npos)
                return fail(TF_ERR_UNAVAILABLE, "redis cluster: unreadable redirection: %s", e.c_str());
            const unsigned long slot = std::strtoul(e.c_str() + sp1 + 1, nullptr, 10);
            std::string target = e.substr(sp2 + 1);
            if (target.empty() || target[0] == ':') target = addr.substr(0, addr.rfind(':')) + target;
            redirects_++;
            if (moved) {
                if (slot < kSlots && !slot_owner_.empty()) slot_owner_[slot] = target;
                stale_ = true;  // a slot moved: others may have too
            }
            asking = ask;
            addr = target;
        } else {
            sleep_ms(10 * (hop + 1));  // TRYAGAIN: the slot is migrating
        }
        Connection *c = node(addr);
        if (asking) {
            std::vector<Reply> replies;
            size_t read = 0;
            st = c->pipeline(std::vector<Command>{Command{"ASKING"}, cmd}, &replies, &read);
            if (st == TF_OK) *out = std::move(replies[1]);
        } else {
            st = c->command(cmd, out);
        }
        if (st != TF_OK) {
            stale_ = true;
            return st;
        }
    }
}

tf_status Servers::call(const std::string &route, const Command &cmd, Reply *out) {
    std::string addr;
    tf_status st = owner(route, &addr);
    if (st != TF_OK) return st;
    if ((st = node(addr)->command(cmd, out)) != TF_OK) {
        stale_ = true;
        return st;
    }
    return follow(cmd, addr, out);
}

void Servers::pipeline(const std::vector<std::string> &routes, const std::vector<Command> &cmds,
                       std::vector<Reply> *out, std::vector<tf_status> *status, std::vector<tf_status> *failures) {
    const size_t n = cmds.size();
    out->clear();
    out->resize(n);
    status->assign(n, TF_OK);
    // the commands of each node, in order
    std::vector<std::string> addr(n);
    std::vector<std::pair<std::string, std::vector<size_t>>> groups;
    for (size_t i = 0; i < n; ++i) {
        tf_status st = owner(routes[i], &addr[i]);
        if (st != TF_OK) {
            (*status)[i] = st;
            if (failures->empty() || failures->back() != st) failures->push_back(st);
            continue;
        }
        size_t g = 0;
        while (g < groups.size() && groups[g].first != addr[i]) ++g;
        if (g == groups.size()) groups.emplace_back(addr[i], std::vector<size_t>());
        groups[g].second.push_back(i);
    }
    for (const auto &g : groups) {
        std::vector<Command> sub;
        for (size_t i : g.second) sub.push_back(cmds[i]);
        std::vector<Reply> replies;
        size_t read = 0;
        tf_status st = node(g.first)->pipeline(sub, &replies, &read);
        for (size_t j = 0; j < g.second.size(); ++j) {
            if (j < read)
                (*out)[g.second[j]] = std::move(replies[j]);
            else
                (*status)[g.second[j]] = st;
        }
        if (st != TF_OK) {
            stale_ = true;
            failures->push_back(st);
        }
    }
    // redirections, NOSCRIPT and TRYAGAIN, one command at a time
    for (size_t i = 0; i < n; ++i) {
        if ((*status)[i] != TF_OK) continue;
        tf_status st = follow(cmds[i], addr[i], &(*out)[i]);
        if (st != TF_OK) {
            (*status)[i] = st;
            failures->push_back(st);
        }
    }
}

}  // namespace redis
}  // namespace tf
