#!/usr/bin/env bash
# The Debian packaging check and the installed-copy proof (issue 12):
#
#   scripts/check_packages.sh [--out DIR] [BUILDDIR]
#
# --out DIR keeps the built .deb files in DIR (created if needed), to
# install them with `apt-get install ./DIR/<package>_*.deb`.
#
# 1. `meson dist` makes the source tarball of the committed tree (HEAD) from
#    BUILDDIR (a configured build directory; without one, a C-only
#    build/packages is configured for it). The tarball, unpacked in a
#    temporary directory with tests/packaging/debian copied in as debian/,
#    is the source package (3.0 (quilt); the tarball is its .orig.tar.xz).
# 2. `dpkg-buildpackage -us -uc -b` builds the binary packages with
#    DEB_BUILD_OPTIONS=nocheck (and the nocheck build profile): the suites
#    already ran on the tree. The symbols file is checked strictly there
#    (debian/rules: dh_makeshlibs -- -c4).
# 3. lintian checks the packages: any error or warning fails; pedantic and
#    informational tags are shown, not failing.
# 4. The packages are installed with apt-get (which pulls their dependencies
#    from Debian), and the installed-copy program of every language that has
#    one (tests/install/<lang>/run.sh) is built and run from a temporary
#    directory against /usr alone. The packages are removed afterwards, also
#    when a step fails.
#
# Needs root (or sudo) to install the packages. Prints each package's
# contents (dpkg -c) and lintian's findings.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# DIR and BUILDDIR are relative to the caller's directory.
out=
if [ "${1:-}" = --out ]; then
    out=$(realpath -m "${2:?usage: check_packages.sh [--out DIR] [BUILDDIR]}")
    shift 2
fi
build=${1:+$(realpath -m "$1")}
cd "$tf_root"
if [ -z "$build" ]; then
    build=build/packages
    tf_setup "$build" -Djava=disabled -Dgo=disabled -Druby=disabled -Dtests=false -Dexamples=false \
        -Dbenchmarks=false -Ddocs=disabled
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "check_packages.sh: needs root or sudo to install the packages" >&2; exit 1; }
    sudo=(sudo)
fi

version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
debian_version=$(dpkg-parsechangelog -l tests/packaging/debian/changelog -S Version)
if [ "${debian_version%-*}" != "$version" ]; then
    echo "check_packages.sh: tests/packaging/debian/changelog is at $debian_version, meson.build at $version" >&2
    exit 1
fi

meson dist -C "$build" --no-tests --allow-dirty --formats xztar >/dev/null
tarball=$build/meson-dist/temporalfilters-$version.tar.xz
[ -f "$tarball" ] || { echo "check_packages.sh: no $tarball" >&2; exit 1; }

tmp=$(mktemp -d)
installed=()
cleanup() {
    if [ ${#installed[@]} -gt 0 ]; then
        echo "==> removing ${installed[*]}"
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive dpkg --purge "${installed[@]}" >/dev/null ||
            echo "check_packages.sh: could not remove ${installed[*]}" >&2
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

cp "$tarball" "$tmp/temporalfilters_$version.orig.tar.xz"
tar -C "$tmp" -xf "$tarball"
src=$tmp/temporalfilters-$version
cp -r tests/packaging/debian "$src/debian"

echo "==> dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=nocheck)"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b -Pnocheck) >"$tmp/build.log" 2>&1 || {
    tail -n 60 "$tmp/build.log"
    echo "check_packages.sh: dpkg-buildpackage failed (the end of its log is above)" >&2
    exit 1
}
grep -E '^dpkg-gensymbols|^dpkg-buildpackage: info' "$tmp/build.log" || true
changes=$(echo "$tmp"/temporalfilters_"$debian_version"_*.changes)
mapfile -t debs < <(find "$tmp" -maxdepth 1 -name '*.deb' | sort)
[ ${#debs[@]} -gt 0 ] || { echo "check_packages.sh: no .deb built" >&2; exit 1; }
for deb in "${debs[@]}"; do
    echo "==> $(basename "$deb")"
    dpkg-deb -f "$deb" Package Architecture Depends | sed 's/^/  /'
    dpkg -c "$deb" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print "  " $0 }'
done

echo "==> lintian (failing on errors and warnings)"
lintian --fail-on error,warning --display-info --pedantic "$changes"
echo "lintian: no errors, no warnings"
if [ -n "$out" ]; then
    mkdir -p "$out"
    cp "${debs[@]}" "$out/"
    echo "the packages are in $out"
fi

# Every package but the debug symbols.
names=() install=()
for deb in "${debs[@]}"; do
    case $deb in *-dbgsym_*) continue ;; esac
    install+=("$deb")
    names+=("$(dpkg-deb -f "$deb" Package)")
done
echo "==> installing ${names[*]}"
installed=("${names[@]}")
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${install[@]}" >/dev/null
for pcname in temporalfilters temporalfilters-redis; do
    pc=$(pkg-config --path "$pcname")
    owner=$(dpkg -S "$pc" 2>/dev/null | cut -d: -f1 || true)
    if [ "$owner" != "lib$pcname-dev" ]; then
        echo "check_packages.sh: pkg-config finds $pc, which lib$pcname-dev does not own (a copy installed elsewhere?)" >&2
        exit 1
    fi
done

# The installed-copy programs (tests/install/<lang>/run.sh), every language's
# required: C (the core's consumer, and the Redis companion's against a
# redis-server it starts) and Java take no argument; Go takes an exported
# copy of the module (scripts/export_go_module.sh), Ruby the built gem
# (scripts/build_gem.sh).
# The packages ship the Redis companion and its JNI library, so every
# language's Redis part must run too.
export TF_INSTALL_REDIS=required
for lang in c java go ruby; do
    run=tests/install/$lang/run.sh
    [ -f "$run" ] || { echo "check_packages.sh: there is no $run" >&2; exit 1; }
    echo "==> $lang: $run"
    case $lang in
    go)
        bash scripts/export_go_module.sh "$tmp/go-module"
        bash "$run" "$tmp/go-module"
        ;;
    ruby)
        gem=$(bash scripts/build_gem.sh "$tmp/gem" | tail -n 1)
        bash "$run" "$gem"
        ;;
    *) bash "$run" ;;
    esac
done
echo "check_packages.sh: the packages build, pass lintian, install, and the installed-copy programs run"
