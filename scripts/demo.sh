#!/usr/bin/env bash
# demo.sh - build libtemporalfilters in release mode and run its demo.
#
#   scripts/demo.sh [tf-demo arguments...]
#
# Works from any directory. Installs the Debian build packages that are
# missing (with sudo when not root), configures a release build in
# <repo>/build-demo (reconfiguring it when it exists), builds the demo and
# the C examples, runs tf-demo with the given arguments (e.g. --events N,
# --seed S, or a CSV file of timestamp,key lines), then the two C examples.
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
repo=$tf_root
build="$repo/build-demo"

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo.sh: %s\n' "$*" >&2; exit 1; }

[[ -f "$repo/meson.build" && -d "$repo/examples/demo" ]] || die "cannot find the repository root (looked in $repo)"
# No cd: relative paths among the arguments (a CSV file) stay valid.

# Runs a command quietly; shows its output only when it fails.
logdir=$(mktemp -d)
trap 'rm -rf -- "$logdir"' EXIT
quietly() {
    local log="$logdir/$1"
    shift
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        die "failed: $*"
    fi
}

# 1. Build dependencies (Debian/Ubuntu).
if command -v dpkg >/dev/null 2>&1; then
    tf_ensure_packages "${TF_BUILD_PACKAGES[@]}"
else
    echo "demo.sh: no dpkg here; assuming ${TF_BUILD_PACKAGES[*]} (or equivalents) are installed" >&2
fi
command -v meson >/dev/null 2>&1 || die "meson not found"
command -v ninja >/dev/null 2>&1 || die "ninja not found"

# 2. Configure and build (release).
if [[ -f "$build/meson-private/coredata.dat" ]]; then
    step "reconfiguring $build (release)"
    quietly setup meson setup --reconfigure "$build" "$repo" -Dbuildtype=release -Dexamples=true
else
    step "configuring $build (release)"
    quietly setup meson setup "$build" "$repo" -Dbuildtype=release -Dexamples=true
fi
step "building tf-demo and the C examples"
quietly build ninja -C "$build" examples/demo/tf-demo examples/pacing examples/ttl_cache

# 3. Run.
status=0
step "tf-demo${*:+ $*}"
"$build/examples/demo/tf-demo" "$@" || status=$?

step "examples/pacing"
"$build/examples/pacing" || status=$((status ? status : $?))

step "examples/ttl_cache"
"$build/examples/ttl_cache" || status=$((status ? status : $?))

echo
if ((status == 0)); then
    echo "demo.sh: done (build in ${build#"$repo"/})"
else
    echo "demo.sh: something failed (exit status $status); see above" >&2
fi
exit "$status"
