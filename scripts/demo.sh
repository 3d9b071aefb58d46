#!/usr/bin/env bash
# demo.sh - build libtemporalfilters in release mode and run its demo.
#
#   scripts/demo.sh [tf-demo arguments...]
#   scripts/demo.sh my.csv
#   scripts/demo.sh --window 60 --limit 100 --out plots my.csv
#   some-command | scripts/demo.sh -
#
# Works from any directory. Installs the Debian build packages that are
# missing (with sudo when not root), configures a release build in
# <repo>/build-demo (reconfiguring it when it exists), builds the demo and
# the examples, runs tf-demo with the given arguments (e.g. --events N,
# --seed S, a CSV file of timestamp,key lines or - for standard input, the
# structures' parameters, --out DIR for plots: `tf-demo --help` lists them),
# then the C examples and the Java, Go and Ruby pacing examples. Standard
# input goes to tf-demo alone.
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
    if ! "$@" </dev/null >"$log" 2>&1; then
        cat "$log" >&2
        die "failed: $*"
    fi
}

# 1. Build dependencies (Debian/Ubuntu), the bindings' toolchains included.
if command -v dpkg >/dev/null 2>&1; then
    tf_ensure_packages "${TF_BUILD_PACKAGES[@]}" "${TF_BINDING_PACKAGES[@]}" "${TF_DEMO_PACKAGES[@]}" </dev/null
else
    echo "demo.sh: no dpkg here; assuming ${TF_BUILD_PACKAGES[*]} ${TF_BINDING_PACKAGES[*]} ${TF_DEMO_PACKAGES[*]} are installed" >&2
fi
command -v meson >/dev/null 2>&1 || die "meson not found"
command -v ninja >/dev/null 2>&1 || die "ninja not found"

# 2. Configure and build (release).
setup_args=(-Dbuildtype=release -Dexamples=true "${TF_BINDING_OPTIONS[@]}")
if [[ -f "$build/meson-private/coredata.dat" ]]; then
    step "reconfiguring $build (release)"
    quietly setup meson setup --reconfigure "$build" "$repo" "${setup_args[@]}"
else
    step "configuring $build (release)"
    quietly setup meson setup "$build" "$repo" "${setup_args[@]}"
fi
step "building tf-demo, the C examples and the binding examples"
quietly build ninja -C "$build" examples/demo/tf-demo examples/pacing examples/ttl_cache examples/click_dedup examples/http_limiter examples/event_dedup \
    examples/cache_admission \
    java-examples go-examples bindings/ruby/temporalfilters_native.so

# 3. Run.
status=0
run() {  # run LABEL CMD...: runs and remembers the first failure
    step "$1"
    shift
    "$@" || status=$((status ? status : $?))
}
run "tf-demo${*:+ $*}" "$build/examples/demo/tf-demo" "$@"
exec </dev/null  # the stream on standard input was tf-demo's
run "examples/pacing.c" "$build/examples/pacing"
run "examples/ttl_cache.c" "$build/examples/ttl_cache"
run "examples/click_dedup.c" "$build/examples/click_dedup"
run "examples/http_limiter.c" "$build/examples/http_limiter"
run "examples/event_dedup.c" "$build/examples/event_dedup"
run "examples/cache_admission.c" "$build/examples/cache_admission"
run "examples/java/Pacing.java" java -Djava.library.path="$build/bindings/java" \
    -cp "$build/bindings/java/temporalfilters.jar:$build/bindings/java/temporalfilters-examples.jar" Pacing
run "examples/go/pacing" "$build/bindings/go/go_pacing"
run "examples/ruby/pacing.rb" ruby -I"$repo/bindings/ruby/lib" -I"$build/bindings/ruby" "$repo/examples/ruby/pacing.rb"

echo
if ((status == 0)); then
    echo "demo.sh: done (build in ${build#"$repo"/})"
else
    echo "demo.sh: something failed (exit status $status); see above" >&2
fi
exit "$status"
