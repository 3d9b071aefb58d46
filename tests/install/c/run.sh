#!/usr/bin/env bash
# The installed-copy proof for C (issue 12's contract, tests/install/): in a
# fresh temporary directory outside the source and build trees, builds
# consumer.c with nothing but `pkg-config --cflags --libs temporalfilters`
# (the .pc of the installed library: /usr, as the Debian package
# libtemporalfilters-dev installs it) and runs it with no LD_LIBRARY_PATH:
# the dynamic linker finds libtemporalfilters.so.0 in the system's own
# directories. The same for the Redis companion: redis_consumer.c with
# `pkg-config ... temporalfilters-redis` (libtemporalfilters-redis-dev), run
# against a redis-server started here on a free loopback port
# (redis_server.sh) and stopped by its PID. Takes no argument; exits
# non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=redis_server.sh
source "$here/redis_server.sh"
work=$(mktemp -d)
trap 'redis_stop; rm -rf "$work"' EXIT
cp "$here/consumer.c" "$here/redis_consumer.c" "$work/"
cd "$work"

unset LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# build PROGRAM PACKAGE SONAME NODE: builds PROGRAM.c with the flags of
# pkg-config's PACKAGE (not from the source tree), checks that it loads the
# installed SONAME and records its symbols under the version node NODE.
build() {
    local program=$1 package=$2 soname=$3 node=$4 pc flags lib syms
    pc=$(pkg-config --path "$package") || {
        echo "run.sh: pkg-config does not find $package (is lib$package-dev installed?)" >&2
        exit 1
    }
    flags=$(pkg-config --cflags --libs "$package")
    echo "pkg-config: $pc: $flags"
    case " $pc $flags " in
    *"$src"*)
        echo "run.sh: pkg-config points into the source tree ($src)" >&2
        exit 1
        ;;
    esac
    # shellcheck disable=SC2086 # the flags are words
    cc -std=c99 -Wall -Wextra -Werror "$program.c" -o "$program" $flags
    lib=$(ldd "./$program" | awk -v so="$soname" '$1 == so { print $3 }')
    echo "$soname => $lib"
    case $lib in
    "" | "$src"/*)
        echo "run.sh: $program does not load an installed $soname" >&2
        exit 1
        ;;
    esac
    # The versioned symbols: the program records each tf_* function under
    # its library's node (tf_redis_*: TEMPORALFILTERS_REDIS_0, the other
    # tf_*: TEMPORALFILTERS_0), and at least one under NODE. (readelf's whole
    # output first: `grep -q` stopping early would make readelf fail on
    # SIGPIPE under pipefail.)
    syms=$(readelf --dyn-syms -W "$program")
    local bad
    bad=$(awk '$8 ~ /^tf_/ {
        name = $8; sub(/@.*/, "", name)
        node = name ~ /^tf_redis_/ ? "TEMPORALFILTERS_REDIS_0" : "TEMPORALFILTERS_0"
        if ($8 != name "@" node) print "  " $8
    }' <<<"$syms")
    if [ -n "$bad" ] || ! grep -q "@$node " <<<"$syms"; then
        echo "run.sh: $program's tf_* references are not versioned (${bad:+$bad; }expected some under $node)" >&2
        exit 1
    fi
}

build consumer temporalfilters libtemporalfilters.so.0 TEMPORALFILTERS_0
./consumer

build redis_consumer temporalfilters-redis libtemporalfilters-redis.so.0 TEMPORALFILTERS_REDIS_0
mkdir redis
redis_start "$PWD/redis"
./redis_consumer "$redis_port"
