#!/usr/bin/env bash
# The installed-copy proof for C (issue 12's contract, tests/install/): in a
# fresh temporary directory outside the source and build trees, builds
# consumer.c with nothing but `pkg-config --cflags --libs temporalfilters`
# (the .pc of the installed library: /usr, as the Debian package
# libtemporalfilters-dev installs it) and runs it with no LD_LIBRARY_PATH:
# the dynamic linker finds libtemporalfilters.so.0 in the system's own
# directories. Takes no argument; exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/consumer.c" "$work/"
cd "$work"

unset LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
pc=$(pkg-config --path temporalfilters) || {
    echo "run.sh: pkg-config does not find temporalfilters (is libtemporalfilters-dev installed?)" >&2
    exit 1
}
flags=$(pkg-config --cflags --libs temporalfilters)
echo "pkg-config: $pc: $flags"
case " $pc $flags " in
*"$src"*)
    echo "run.sh: pkg-config points into the source tree ($src)" >&2
    exit 1
    ;;
esac
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -Wall -Wextra -Werror consumer.c -o consumer $flags
lib=$(ldd ./consumer | awk '$1 == "libtemporalfilters.so.0" { print $3 }')
echo "libtemporalfilters.so.0 => $lib"
case $lib in
"" | "$src"/*)
    echo "run.sh: the consumer does not load an installed libtemporalfilters.so.0" >&2
    exit 1
    ;;
esac
# The versioned symbols: the program records tf_*@TEMPORALFILTERS_0.
# (readelf's whole output first: `grep -q` stopping early would make
# readelf fail on SIGPIPE under pipefail.)
syms=$(readelf --dyn-syms -W consumer)
if ! grep -q 'tf_version_string@TEMPORALFILTERS_0' <<<"$syms"; then
    echo "run.sh: the consumer's tf_* references are not versioned TEMPORALFILTERS_0" >&2
    exit 1
fi
./consumer
