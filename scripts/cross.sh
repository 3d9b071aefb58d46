#!/usr/bin/env bash
# Builds the C library and its C suites for other CPUs with Debian's cross
# compilers and runs them under qemu-user: arm64 (little-endian, no SSE2 or
# AVX2: the portable paths) and s390x (big-endian: the wire format's
# little-endian promise, golden blobs of tests/data included).
#
#   scripts/cross.sh                    # arm64 and s390x
#   scripts/cross.sh s390x              # one architecture
#   CROSS_SUITES="c fuzz" scripts/cross.sh s390x   # more meson suites
#
# Outside CI (docs/reliability.md, "Other machines", gives the times). What
# it does, per architecture, saying so as it goes:
#   1. installs the cross compiler and qemu-user (Debian packages
#      crossbuild-essential-<arch> and qemu-user; native packages, no
#      `dpkg --add-architecture`);
#   2. fetches the target's libraries the C suites link (libcmocka,
#      libmurmurhash; the library itself links nothing) as .deb files into
#      build/cross/debs, through a temporary apt list
#      /etc/apt/sources.list.d/tf-cross.list naming only the foreign
#      architectures (removed again, then apt-get update), once: cached .debs
#      are reused;
#   3. unpacks them (dpkg -x) into build/cross/sysroot-<arch>;
#   4. writes a meson cross file build/cross/<arch>.ini (the cross gcc/g++,
#      pkg-config restricted to the sysroot, qemu-<cpu> -L /usr/<triplet> as
#      exe_wrapper with LD_LIBRARY_PATH set for the sysroot's libraries);
#   5. configures build/cross/<arch> with the bindings, Redis, docs,
#      examples, benchmarks and fuzzing off, builds (nice, CROSS_JOBS jobs,
#      default 2) and runs `meson test --suite c` under qemu, with
#      CROSS_TIMEOUT_MULTIPLIER (default 10) on the suites' timeouts, the
#      tests of CROSS_LAST in a second run after the others.
#
# Environment:
#   CROSS_SUITES                meson suites to run (default "c")
#   CROSS_JOBS                  ninja jobs (default 2)
#   CROSS_TIMEOUT_MULTIPLIER    meson test --timeout-multiplier (default 10)
#   CROSS_BUILD                 build root (default <repo>/build/cross)
#   CROSS_LAST                  tests run last, after the others (default
#                               rate_limiter_decisions, the longest)
#   CROSS_FULL                  1: the long property tests run their full
#                               counts (default 0: the reduced counts the
#                               sanitized builds run, -DTF_TEST_REDUCED=1;
#                               see TU_REDUCED in tests/util/test_util.h)
#
# Exits non-zero if any architecture fails to build or any test fails; the
# summary at the end gives each architecture's counts and times.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib.sh
source "$root/scripts/lib.sh"

out=${CROSS_BUILD:-$root/build/cross}
suites=${CROSS_SUITES:-c}
jobs=${CROSS_JOBS:-2}
tmult=${CROSS_TIMEOUT_MULTIPLIER:-10}
full=${CROSS_FULL:-0}
# Tests run after all the others, in a second `meson test`: the longest
# under emulation.
last=${CROSS_LAST:-rate_limiter_decisions}
debs=$out/debs
# The target libraries the C suites need (tests/meson.build: cmocka, and
# libmurmurhash as the tests' reference hash), runtime and -dev package.
target_libs=(libcmocka0 libcmocka-dev libmurmurhash2 libmurmurhash-dev)

archs=("$@")
if [ ${#archs[@]} -eq 0 ]; then archs=(arm64 s390x); fi

# arch -> GNU triplet, qemu's CPU name, meson's cpu_family and endianness
declare -A triplet=([arm64]=aarch64-linux-gnu [s390x]=s390x-linux-gnu [ppc64el]=powerpc64le-linux-gnu
    [armhf]=arm-linux-gnueabihf [riscv64]=riscv64-linux-gnu)
declare -A qemu_cpu=([arm64]=aarch64 [s390x]=s390x [ppc64el]=ppc64le [armhf]=arm [riscv64]=riscv64)
declare -A cpu_family=([arm64]=aarch64 [s390x]=s390x [ppc64el]=ppc64 [armhf]=arm [riscv64]=riscv64)
declare -A endian=([arm64]=little [s390x]=big [ppc64el]=little [armhf]=little [riscv64]=little)
for a in "${archs[@]}"; do
    if [ -z "${triplet[$a]:-}" ]; then
        echo "cross.sh: unknown architecture '$a' (known: ${!triplet[*]})" >&2
        exit 2
    fi
done

say() { printf '==> %s\n' "$*"; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        command -v sudo >/dev/null || { echo "cross.sh: need root or sudo for: $*" >&2; return 1; }
        sudo "$@"
    fi
}

# The machine's Debian suite (bookworm on Debian 12): the target packages
# must match its cross compilers' C library.
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || { echo "cross.sh: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }

# 1. Cross compilers and qemu-user (native packages).
host_pkgs=(qemu-user meson ninja-build pkg-config binutils python3)
for a in "${archs[@]}"; do host_pkgs+=("crossbuild-essential-$a"); done
say "cross compilers and qemu-user: ${host_pkgs[*]}"
tf_ensure_packages "${host_pkgs[@]}"

# 2. The target libraries as .deb files, cached in $debs.
mkdir -p "$debs"
missing=()
for a in "${archs[@]}"; do
    for p in "${target_libs[@]}"; do
        ls "$debs/${p}_"*"_$a.deb" >/dev/null 2>&1 || missing+=("$p:$a")
    done
done
if [ ${#missing[@]} -gt 0 ]; then
    list=/etc/apt/sources.list.d/tf-cross.list
    arch_list=$(IFS=,; echo "${archs[*]}")
    say "downloading ${missing[*]} into $debs (temporary apt list $list: deb [arch=$arch_list] $suite main)"
    restore_apt() {
        as_root rm -f "$list"
        say "removed $list; apt-get update"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || true
    }
    trap restore_apt EXIT
    # The same Signed-By as the machine's own entry for the archive (apt
    # refuses two entries for one source with different keyrings).
    signed=""
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    if grep -rqs "Signed-By: *$keyring" /etc/apt/sources.list.d/ /etc/apt/sources.list; then
        signed=" signed-by=$keyring"
    fi
    echo "deb [arch=$arch_list$signed] http://deb.debian.org/debian $suite main" | as_root tee "$list" >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    # apt-get download writes to the current directory; as root, apt's
    # sandbox user must be able to write there, hence a world-writable
    # temporary directory moved into place afterwards.
    tmp=$(mktemp -d)
    chmod 777 "$tmp"
    (cd "$tmp" && as_root apt-get download -q "${missing[@]}")
    mv "$tmp"/*.deb "$debs"/
    rmdir "$tmp"
    restore_apt
    trap - EXIT
else
    say "target libraries already in $debs"
fi

cxx_wrap=()
if command -v ccache >/dev/null; then cxx_wrap=(ccache); fi

declare -A result
status=0
for a in "${archs[@]}"; do
    t=${triplet[$a]}
    sysroot=$out/sysroot-$a
    build=$out/$a
    cross=$out/$a.ini

    # 3. The sysroot: the target libraries unpacked.
    say "[$a] sysroot $sysroot (dpkg -x of ${target_libs[*]})"
    rm -rf "$sysroot"
    mkdir -p "$sysroot"
    for p in "${target_libs[@]}"; do
        dpkg -x "$(ls "$debs/${p}_"*"_$a.deb" | tail -n 1)" "$sysroot"
    done

    # 4. The meson cross file.
    say "[$a] cross file $cross ($t-gcc, qemu-${qemu_cpu[$a]} -L /usr/$t)"
    c_cmd=("${cxx_wrap[@]}" "$t-gcc")
    cpp_cmd=("${cxx_wrap[@]}" "$t-g++")
    q() { local s="" x; for x in "$@"; do s+="${s:+, }'$x'"; done; printf '[%s]' "$s"; }
    cat >"$cross" <<EOF
# Written by scripts/cross.sh for $a; do not edit.
[binaries]
c = $(q "${c_cmd[@]}")
cpp = $(q "${cpp_cmd[@]}")
ar = '$t-ar'
strip = '$t-strip'
pkgconfig = 'pkg-config'
exe_wrapper = $(q "qemu-${qemu_cpu[$a]}" -L "/usr/$t" -E "LD_LIBRARY_PATH=$sysroot/usr/lib/$t")

[properties]
sys_root = '$sysroot'
pkg_config_libdir = ['$sysroot/usr/lib/$t/pkgconfig', '$sysroot/usr/share/pkgconfig']
needs_exe_wrapper = true

# libmurmurhash.pc says libdir=/usr/lib, not the multiarch directory: the
# linker is told where the sysroot's libraries are.
[built-in options]
c_link_args = ['-L$sysroot/usr/lib/$t', '-Wl,-rpath-link,$sysroot/usr/lib/$t']
cpp_link_args = ['-L$sysroot/usr/lib/$t', '-Wl,-rpath-link,$sysroot/usr/lib/$t']

[host_machine]
system = 'linux'
cpu_family = '${cpu_family[$a]}'
cpu = '${cpu_family[$a]}'
endian = '${endian[$a]}'
EOF

    # 5. Configure, build, test.
    say "[$a] meson setup $build (bindings, redis, docs, examples, benchmarks, fuzzing off)"
    opts=(--cross-file "$cross" -Dtests=true -Dexamples=false -Dbenchmarks=false -Dfuzzing=disabled
        -Djava=disabled -Dgo=disabled -Druby=disabled -Ddocs=disabled -Dredis=disabled)
    # The long property tests' reduced counts (TU_REDUCED, tests/util/test_util.h)
    # unless CROSS_FULL=1.
    if [ "$full" != 1 ]; then opts+=(-Dc_args=-DTF_TEST_REDUCED=1 -Dcpp_args=-DTF_TEST_REDUCED=1); fi
    t0=$(date +%s)
    if ! tf_setup "$build" "${opts[@]}"; then
        result[$a]="configure failed"
        status=1
        continue
    fi
    say "[$a] nice ninja -C $build -j$jobs"
    if ! nice ninja -C "$build" -j"$jobs"; then
        result[$a]="build failed"
        status=1
        continue
    fi
    t1=$(date +%s)
    suite_args=()
    for s in $suites; do suite_args+=(--suite "$s"); done
    # The suites' tests, those of CROSS_LAST held back to a second run.
    mapfile -t all_tests < <(meson test -C "$build" "${suite_args[@]}" --list 2>/dev/null | sed -n 's#^.* / ##p')
    first=() later=()
    for n in "${all_tests[@]}"; do
        if [[ " $last " == *" $n "* ]]; then later+=("$n"); else first+=("$n"); fi
    done
    rc=0
    logs=()
    run_tests() {
        local what=$1
        shift
        say "[$a] meson test ($what: $# tests) under qemu-${qemu_cpu[$a]} (timeout multiplier $tmult)"
        nice meson test -C "$build" "${suite_args[@]}" --timeout-multiplier "$tmult" --num-processes "$jobs" \
            --print-errorlogs "$@" || rc=$?
        cp "$build/meson-logs/testlog.json" "$build/meson-logs/testlog-$what.json"
        logs+=("$build/meson-logs/testlog-$what.json")
    }
    run_tests first "${first[@]}"
    [ ${#later[@]} -eq 0 ] || run_tests last "${later[@]}"
    t2=$(date +%s)
    counts=$(python3 - "${logs[@]}" <<'EOF'
import collections, json, sys
c = collections.Counter()
for log in sys.argv[1:]:
    for line in open(log):
        if line.strip():
            c[json.loads(line)["result"]] += 1
print(", ".join(f"{k.lower()} {v}" for k, v in sorted(c.items())))
EOF
)
    result[$a]="$counts; build $((t1 - t0)) s, tests $((t2 - t1)) s"
    [ "$rc" -eq 0 ] || status=1
done

say "summary (suites: $suites; counts: $([ "$full" = 1 ] && echo full || echo reduced))"
for a in "${archs[@]}"; do
    printf '  %-8s %s\n' "$a" "${result[$a]}"
done
exit "$status"
