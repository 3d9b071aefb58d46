#!/usr/bin/env bash
# meson install --destdir into a staging directory, then check the installed
# tree (headers, soname links, pkg-config file) and build and run a consumer
# against it with nothing but pkg-config.
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

export PKG_CONFIG_PATH=$stage$libdir/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$stage
cflags=$(pkg-config --cflags temporalfilters)
libs=$(pkg-config --libs temporalfilters)
cc -std=c99 -Wall -Werror $cflags "$here/consumer.c" -o "$stage/consumer" $libs
LD_LIBRARY_PATH=$stage$libdir "$stage/consumer"
echo "install ok: $(cd "$stage" && find . -type f -o -type l | sort | tr '\n' ' ')"
