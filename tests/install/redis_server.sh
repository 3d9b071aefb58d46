# Sourced by the installed-copy programs (tests/install/<lang>/run.sh): the
# Redis server their consumers use the Redis limiter against, from Debian's
# redis-server, on a free loopback port, with no persistence, in the
# caller's temporary directory; stopped by its PID.
#
#   tf_install_redis_start WORKDIR   sets redis_port and redis_pid, waits until it answers PING
#   tf_install_redis_stop            stops it (call it from the caller's EXIT trap)
#
# Whether to run the Redis part at all: tf_install_redis_wanted HAVE, where
# HAVE says whether the installed copy has the companion library (1 or 0).
# Without it the part is left out, saying so, unless TF_INSTALL_REDIS=required
# (then its absence fails).

redis_pid=
redis_port=

tf_install_redis_wanted() {
    if [ "$1" = 1 ]; then
        return 0
    fi
    if [ "${TF_INSTALL_REDIS:-}" = required ]; then
        echo "the installed copy has no Redis limiter (libtemporalfilters-redis), and TF_INSTALL_REDIS=required" >&2
        exit 1
    fi
    echo "the installed copy has no Redis limiter (libtemporalfilters-redis): its part is left out"
    return 1
}

tf_install_redis_start() {
    local dir=$1/redis i
    command -v redis-server >/dev/null ||
        { echo "redis-server is not installed (Debian: apt-get install redis-server)" >&2; exit 1; }
    mkdir -p "$dir"
    redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$dir" \
        --logfile "$dir/redis.log" </dev/null >/dev/null 2>&1 &
    redis_pid=$!
    for i in $(seq 100); do
        if [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ]; then
            echo "redis-server $redis_pid on 127.0.0.1:$redis_port"
            return 0
        fi
        kill -0 "$redis_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "redis-server did not start on port $redis_port:" >&2
    cat "$dir/redis.log" >&2 || true
    exit 1
}

tf_install_redis_stop() {
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        redis_pid=
    fi
}
