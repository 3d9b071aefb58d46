#!/usr/bin/env bash
# meson install --destdir into a staging directory, then check the installed
# tree (headers, soname links, static library, pkg-config file) and build and
# run two consumers against it with nothing but pkg-config: one linked with
# the shared library, one linked statically (`-static`, every library an
# archive) with `pkg-config --static --libs`, which proves Libs.private
# complete. Then the Redis companion (lib/redis/; required, like its header:
# BUILDDIR is configured with hiredis, as scripts/test.sh's is): its
# library, soname and pkg-config file, and c/redis_consumer.c built with
# `pkg-config temporalfilters-redis` and run against a redis-server started
# on a free loopback port (c/redis_server.sh) and stopped by its PID.
set -euo pipefail
build=${1:?usage: check_install.sh BUILDDIR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=c/redis_server.sh
source "$here/c/redis_server.sh"
stage=$(mktemp -d)
redis_dir=$(mktemp -d)
trap 'redis_stop; rm -rf "$stage" "$redis_dir"' EXIT

meson install -C "$build" --destdir "$stage" --quiet
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
libdir=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"][0])')
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$stage$prefix

src=$(cd "$here/../.." && pwd)
for h in "$src"/include/temporalfilters.h "$src"/include/temporalfilters/*.h; do
    f=${h#"$src"/}
    [ -f "$root/$f" ] || { echo "missing installed header: $f"; exit 1; }
done
[ -f "$root/include/temporalfilters/version.h" ] || { echo "missing installed header: version.h"; exit 1; }
so=$stage$libdir/libtemporalfilters.so
[ -L "$so" ] || { echo "missing $so symlink"; exit 1; }
[ -e "$so.0" ] || { echo "missing $so.0"; exit 1; }
soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libtemporalfilters.so.0 ] || { echo "soname is '$soname'"; exit 1; }
a=$stage$libdir/libtemporalfilters.a
[ -f "$a" ] || { echo "missing $a"; exit 1; }
# (Each tool's whole output first: under pipefail, `tool | grep -q` fails when
# grep stops at the first match and the tool dies of SIGPIPE, which would
# hide exactly the finding these checks look for.)
undefined=$(nm -u "$a")
if grep -q lmmh_ <<<"$undefined"; then
    echo "$a refers to libmurmurhash"
    exit 1
fi

export PKG_CONFIG_PATH=$stage$libdir/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$stage
cflags=$(pkg-config --cflags temporalfilters)
libs=$(pkg-config --libs temporalfilters)
cc -std=c99 -Wall -Werror $cflags "$here/c/consumer.c" -o "$stage/consumer" $libs
LD_LIBRARY_PATH=$stage$libdir "$stage/consumer"

static_libs=$(pkg-config --static --libs temporalfilters)
echo "pkg-config --static --libs temporalfilters: $static_libs"
# --whole-archive: every object of the archive is linked, not only those the
# consumer calls, so every reference of the library must resolve against
# what pkg-config lists.
cc -std=c99 -Wall -Werror $cflags "$here/c/consumer.c" -o "$stage/consumer_static" -static \
    -Wl,--whole-archive "$a" -Wl,--no-whole-archive $static_libs
dynamic=$(readelf -d "$stage/consumer_static")
if grep -q NEEDED <<<"$dynamic"; then
    echo "consumer_static is not statically linked:"
    grep NEEDED <<<"$dynamic"
    exit 1
fi
env -u LD_LIBRARY_PATH "$stage/consumer_static"

# The Redis companion (a shared library only).
redis_so=$stage$libdir/libtemporalfilters-redis.so
[ -L "$redis_so" ] || { echo "missing $redis_so symlink (the companion needs hiredis: libhiredis-dev)"; exit 1; }
[ -e "$redis_so.0" ] || { echo "missing $redis_so.0"; exit 1; }
soname=$(readelf -d "$redis_so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libtemporalfilters-redis.so.0 ] || { echo "the companion's soname is '$soname'"; exit 1; }
redis_flags=$(pkg-config --cflags --libs temporalfilters-redis)
echo "pkg-config --cflags --libs temporalfilters-redis: $redis_flags"
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -Wall -Werror "$here/c/redis_consumer.c" -o "$stage/redis_consumer" $redis_flags
redis_start "$redis_dir"
LD_LIBRARY_PATH=$stage$libdir "$stage/redis_consumer" "$redis_port"
redis_stop
echo "install ok: $(cd "$stage" && find . -type f -o -type l | sort | tr '\n' ' ')"
