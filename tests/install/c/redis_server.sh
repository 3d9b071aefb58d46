# Sourced by tests/install/c/run.sh and tests/install/check_install.sh: the
# redis-server the Redis companion's consumer (redis_consumer.c) talks to.
#
#   redis_start DIR   starts Debian's redis-server on a free loopback port
#                     (never 6379), in DIR, without persistence, and waits
#                     until it answers PING; sets redis_port and redis_pid
#   redis_stop        stops it by its PID (a no-op when none runs)
#
# A port is found free by binding it and letting it go; should the server
# lose it to another program in between, the next free port is tried.
redis_pid=
redis_port=
redis_start() {
    local dir=$1 try tool
    for tool in redis-server redis-cli; do
        command -v "$tool" >/dev/null || {
            echo "redis_start: $tool not found (Debian: redis-server, redis-tools)" >&2
            return 1
        }
    done
    for try in 1 2 3; do
        redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
            --daemonize no --logfile "$dir/redis.log" </dev/null >/dev/null 2>&1 &
        redis_pid=$!
        for _ in $(seq 200); do
            if [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" = PONG ]; then
                echo "redis-server (pid $redis_pid) on 127.0.0.1:$redis_port"
                return 0
            fi
            kill -0 "$redis_pid" 2>/dev/null || break
            sleep 0.05
        done
        redis_stop
        echo "redis_start: redis-server did not answer on port $redis_port (try $try):" >&2
        cat "$dir/redis.log" >&2 || true
    done
    return 1
}
redis_stop() {
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        redis_pid=
    fi
}
