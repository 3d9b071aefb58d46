#include "redis/connection.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/status.hpp"

namespace tf {
namespace redis {

uint64_t monotonic_ms() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000u + uint64_t(ts.tv_nsec) / 1000000u;
}

namespace {
struct timeval to_timeval(uint32_t ms) {
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

// SIGPIPE held back while this thread writes to a server: hiredis writes
// with write(2), and a write to a connection the server has reset raises
// SIGPIPE, whose default action ends the process (a long pipeline to a
// server that died mid-way did). Blocked, the write fails with EPIPE
// instead, which is the server being unavailable; a SIGPIPE this raised is
// taken off the thread before the mask is restored, one that was pending
// before is left for the program.
class NoSigpipe {
   public:
    NoSigpipe() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
    }
    ~NoSigpipe() {
        if (!blocked_) return;
        if (!was_pending_) {
            sigset_t pending;
            sigemptyset(&pending);
            if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
                const struct timespec zero = {0, 0};
                while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
                }
            }
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    NoSigpipe(const NoSigpipe &) = delete;
    NoSigpipe &operator=(const NoSigpipe &) = delete;

   private:
    sigset_t pipe_, old_;
    bool was_pending_ = false, blocked_ = false;
};

// An I/O error that is the server not answering in time.
bool is_timeout(int err, int err_no) {
    return err == REDIS_ERR_IO && (err_no == EAGAIN || err_no == EWOULDBLOCK || err_no == ETIMEDOUT);
}
}  // namespace

void Connection::drop() {
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
}

tf_status Connection::failed(const char *doing, int err_no) {
    const int err = ctx_ ? ctx_->err : REDIS_ERR_OTHER;
    char why[160];
    std::snprintf(why, sizeof why, "%s", ctx_ && ctx_->errstr[0] ? ctx_->errstr : "no context");
    drop();
    failed_before_ = true;
    next_try_ms_ = monotonic_ms() + backoff_ms_;
    const uint64_t waited = backoff_ms_;
    backoff_ms_ = std::min<uint64_t>(backoff_ms_ * 2, cfg_.reconnect_max_ms);
    if (is_timeout(err, err_no))
        return fail(TF_ERR_TIMEOUT, "redis %s:%d did not answer within %u ms (%s: %s); reconnecting in %llu ms",
                    cfg_.host.c_str(), cfg_.port, doing[0] == 'c' ? cfg_.connect_timeout_ms : cfg_.command_timeout_ms,
                    doing, why, (unsigned long long)waited);
    return fail(TF_ERR_UNAVAILABLE, "redis %s:%d unavailable (%s: %s); reconnecting in %llu ms", cfg_.host.c_str(),
                cfg_.port, doing, why, (unsigned long long)waited);
}

tf_status Connection::ensure() {
    if (ctx_) return TF_OK;
    const uint64_t now = monotonic_ms();
    if (failed_before_ && now < next_try_ms_)
        return fail(TF_ERR_UNAVAILABLE, "redis %s:%d unavailable: reconnecting in %llu ms", cfg_.host.c_str(),
                    cfg_.port, (unsigned long long)(next_try_ms_ - now));
    errno = 0;
    ctx_ = redisConnectWithTimeout(cfg_.host.c_str(), cfg_.port, to_timeval(cfg_.connect_timeout_ms));
    const int err_no = errno;
    if (ctx_ == nullptr) return fail(TF_ERR_OUT_OF_MEMORY, "out of memory (a redis connection)");
    if (ctx_->err) return failed("connect", err_no);
    if (redisSetTimeout(ctx_, to_timeval(cfg_.command_timeout_ms)) != REDIS_OK) return failed("connect", errno);
    if (ever_connected_ && failed_before_) ++reconnects_;
    ever_connected_ = true;
    failed_before_ = false;
    backoff_ms_ = cfg_.reconnect_min_ms;
    return TF_OK;
}

namespace {
void argv_of(const Command &cmd, std::vector<const char *> *argv, std::vector<size_t> *lens) {
    argv->clear();
    lens->clear();
    for (const std::string &a : cmd) {
        argv->push_back(a.data());
        lens->push_back(a.size());
    }
}
}  // namespace

tf_status Connection::command(const Command &cmd, Reply *out) {
    tf_status st = ensure();
    if (st != TF_OK) return st;
    std::vector<const char *> argv;
    std::vector<size_t> lens;
    argv_of(cmd, &argv, &lens);
    errno = 0;
    void *r = nullptr;
    int err_no = 0;
    {
        NoSigpipe quiet;
        r = redisCommandArgv(ctx_, int(argv.size()), argv.data(), lens.data());
        err_no = errno;
    }
    if (r == nullptr) return failed("command", err_no);
    out->reset(static_cast<redisReply *>(r));
    return TF_OK;
}

tf_status Connection::pipeline(const std::vector<Command> &cmds, std::vector<Reply> *out, size_t *read) {
    *read = 0;
    out->clear();
    out->resize(cmds.size());
    tf_status st = ensure();
    if (st != TF_OK) return st;
    std::vector<const char *> argv;
    std::vector<size_t> lens;
    for (const Command &c : cmds) {
        argv_of(c, &argv, &lens);
        if (redisAppendCommandArgv(ctx_, int(argv.size()), argv.data(), lens.data()) != REDIS_OK)
            return failed("pipeline", errno);
    }
    NoSigpipe quiet;  // the first redisGetReply writes the pipeline
    for (size_t i = 0; i < cmds.size(); ++i) {
        void *r = nullptr;
        errno = 0;
        if (redisGetReply(ctx_, &r) != REDIS_OK || r == nullptr) return failed("pipeline", errno);
        (*out)[i].reset(static_cast<redisReply *>(r));
        *read = i + 1;
    }
    return TF_OK;
}

}  // namespace redis
}  // namespace tf
