#!/usr/bin/env bash
# The release check: `meson dist` makes the source tarball of the committed
# tree (HEAD), then the tarball, unpacked in a temporary directory, must
# configure, build and pass the C suite on its own.
#
#   scripts/check_dist.sh BUILDDIR     a configured build directory
#
# `meson dist --no-tests` only packs: its own check would rebuild and run
# every suite (bindings, fuzz replays, examples, benchmark smoke runs), which
# scripts/test.sh already does on the tree itself. Here the unpacked tarball
# is built without bindings, examples and benchmarks and runs `--suite c`,
# which proves it complete (every source, header, test and golden blob the
# C build needs is in it) in a few minutes. --allow-dirty lets the check run
# in a tree with uncommitted changes (they are not in the tarball; meson says
# so). The tarball stays in BUILDDIR/meson-dist/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
build=${1:?usage: check_dist.sh BUILDDIR}
cd "$tf_root"

meson dist -C "$build" --no-tests --allow-dirty --formats xztar
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
tarball=$build/meson-dist/temporalfilters-$version.tar.xz
[ -f "$tarball" ] || { echo "check_dist.sh: no $tarball" >&2; exit 1; }
echo "tarball: $tarball ($(stat -c %s "$tarball") bytes)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xf "$tarball"
src=$tmp/temporalfilters-$version
[ -f "$src/meson.build" ] || { echo "check_dist.sh: the tarball has no temporalfilters-$version/meson.build" >&2; exit 1; }
for f in LICENSE README.md CHANGELOG.md; do
    [ -f "$src/$f" ] || { echo "check_dist.sh: the tarball has no $f" >&2; exit 1; }
done
if [ -e "$src/.git" ]; then
    echo "check_dist.sh: the tarball contains .git" >&2
    exit 1
fi

meson setup "$tmp/build" "$src" -Dwerror=true -Djava=disabled -Dgo=disabled -Druby=disabled \
    -Dexamples=false -Dbenchmarks=false >/dev/null
meson test -C "$tmp/build" --suite c --print-errorlogs --num-processes 2
echo "check_dist.sh: temporalfilters-$version.tar.xz builds and passes the C suite"
