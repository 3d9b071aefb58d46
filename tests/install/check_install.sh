#!/usr/bin/env bash
# meson install --destdir into a staging directory, then check the installed
# tree (headers, soname links, static library, pkg-config file) and build and
# run two consumers against it with nothing but pkg-config: one linked with
# the shared library, one linked statically (`-static`, every library an
# archive) with `pkg-config --static --libs`, which proves Libs.private
# complete.
set -euo pipefail
build=${1:?usage: check_install.sh BUILDDIR}
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

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
echo "install ok: $(cd "$stage" && find . -type f -o -type l | sort | tr '\n' ' ')"
