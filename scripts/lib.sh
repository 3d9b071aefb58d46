# Shared by the scripts: repository root and Debian package installation.
# Source it; do not run it.

tf_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# tf_ensure_packages PKG...: installs the Debian packages that are missing
# (apt-get update first), as root or through sudo. Prints what it does.
tf_ensure_packages() {
    local missing=() p
    for p in "$@"; do
        [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = 'install ok installed' ] || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    echo "==> installing Debian packages: ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; return 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The packages every build needs.
TF_BUILD_PACKAGES=(meson ninja-build g++ gcc pkg-config libcmocka-dev libmurmurhash-dev libhiredis-dev)
# The bindings: SWIG; JDK + JUnit 4; Go; Ruby + minitest.
TF_BINDING_PACKAGES=(python3 swig openjdk-17-jdk-headless junit4 golang-go ruby ruby-dev ruby-minitest)
# The format check (clang-format 14, the version .clang-format is written
# for) and the API reference (doxygen, without graphviz: HAVE_DOT=NO).
TF_LINT_PACKAGES=(clang-format-14 doxygen)
# The ABI check against tests/abi/libtemporalfilters.abi (abidw, abidiff).
TF_ABI_PACKAGES=(abigail-tools)
# Extra packages for the full test run: clang + libFuzzer, sanitizer
# runtimes, the bindings, the format check and the docs. (scripts/tidy.sh
# also wants clang-tidy-14; it is not part of the run.)
TF_TEST_PACKAGES=(clang libclang-rt-14-dev binutils git xz-utils "${TF_BINDING_PACKAGES[@]}" "${TF_LINT_PACKAGES[@]}"
    "${TF_ABI_PACKAGES[@]}")
# tf-demo's plots (tf-demo --out DIR, and its example_demo_plots_* tests):
# gnuplot without X, for its SVG terminal.
TF_DEMO_PACKAGES=(gnuplot-nox)
TF_TEST_PACKAGES+=("${TF_DEMO_PACKAGES[@]}")
# The Redis-backed rate limiter's tests start their own servers (redis-server)
# and clusters (redis-cli --cluster create, from redis-tools).
TF_REDIS_PACKAGES=(redis-server redis-tools)
TF_TEST_PACKAGES+=("${TF_REDIS_PACKAGES[@]}")
# The Debian packaging check (scripts/check_packages.sh): dpkg-buildpackage,
# the build-dependencies of tests/packaging/debian/control, lintian.
TF_PACKAGING_PACKAGES=(dpkg-dev debhelper lintian javahelper maven-repo-helper default-jdk-headless)
TF_TEST_PACKAGES+=("${TF_PACKAGING_PACKAGES[@]}")
# The binding options scripts/test.sh and scripts/demo.sh configure with:
# enabled, so that a missing tool fails loudly instead of skipping a suite.
TF_BINDING_OPTIONS=(-Djava=enabled -Dgo=enabled -Druby=enabled)

# tf_setup BUILDDIR MESON-ARGS...: configures a build directory, wiping a
# stale one whose options differ.
tf_setup() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson setup --wipe "$dir" "$@" >/dev/null
    else
        rm -rf "$dir"
        meson setup "$dir" "$@" >/dev/null
    fi
}

# tf_build_suite BUILDDIR SUITE: builds only the executables the tests of
# one suite run (from meson's introspection), for a build that runs one
# suite and need not compile everything.
tf_build_suite() {
    local dir=$1 suite=$2 targets
    targets=$(meson introspect "$dir" --tests | python3 -c '
import json, os, sys
dir, suite = os.path.abspath(sys.argv[1]), sys.argv[2]
seen = set()
for t in json.load(sys.stdin):
    if any(s == suite or s.endswith(":" + suite) for s in t["suite"]) and t["cmd"] and t["cmd"][0].startswith(dir + "/"):
        p = os.path.relpath(t["cmd"][0], dir)
        if p not in seen:
            seen.add(p)
            print(p)
' "$dir" "$suite")
    if [ -z "$targets" ]; then
        echo "no tests in suite '$suite' of $dir" >&2
        return 1
    fi
    # shellcheck disable=SC2086
    ninja -C "$dir" $targets
}

# tf_tsan_run CMD...: runs a command built with ThreadSanitizer. Its
# runtime needs at most 28 bits of mmap randomisation; on kernels that use
# more, the command runs with address randomisation off (setarch -R).
tf_tsan_run() {
    local bits
    bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
    if [ "$bits" -gt 28 ]; then
        setarch "$(uname -m)" -R "$@"
    else
        "$@"
    fi
}
