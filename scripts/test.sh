#!/usr/bin/env bash
# Installs what is missing, checks the formatting, builds, and runs every
# test suite: a plain build (warnings as errors), the same under
# AddressSanitizer + UndefinedBehaviorSanitizer (halting on the first
# error), the thread suites under ThreadSanitizer, the API reference
# (Doxygen, every warning an error), the ABI check against the committed
# baseline, an install check, the release tarball's check, a short
# libFuzzer run, and the C suites built for s390x (big-endian) and run
# under qemu-user with reduced counts (scripts/cross.sh). Exits non-zero on
# any failure.
#
#   scripts/test.sh            everything
#   FUZZ_SECONDS=0 scripts/test.sh   skip the libFuzzer run
#   CROSS_ARCHS= scripts/test.sh     skip the emulated run (or "arm64 s390x": both)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tf_root"

tf_ensure_packages "${TF_BUILD_PACKAGES[@]}" "${TF_TEST_PACKAGES[@]}"

start=$(date +%s)
step() { echo; echo "==> $* ($(($(date +%s) - start)) s)"; }

step "formatting (clang-format 14) and the shell scripts' pipelines under pipefail"
bash scripts/format.sh --check
bash scripts/check_scripts.sh

step "plain build (gcc, -Werror)"
tf_setup build/plain -Dwerror=true -Dbuildtype=debugoptimized -Ddocs=enabled "${TF_BINDING_OPTIONS[@]}"
meson compile -C build/plain
meson test -C build/plain --print-errorlogs --num-processes 2

step "API reference (Doxygen; an undocumented function fails)"
ninja -C build/plain docs

step "ABI: the libraries against their baselines tests/abi/libtemporalfilters{,-redis}.abi (abidiff)"
bash scripts/check_abi.sh build/plain

step "AddressSanitizer + UndefinedBehaviorSanitizer"
# gcc's -fsanitize=undefined leaves out float-cast-overflow; clang's has it.
tf_setup build/sanitize -Dwerror=true -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=float-cast-overflow -Dcpp_args=-fsanitize=float-cast-overflow \
    -Dbenchmarks=false "${TF_BINDING_OPTIONS[@]}"
meson compile -C build/sanitize
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
    meson test -C build/sanitize --print-errorlogs --num-processes 2 --timeout-multiplier 4

step "ThreadSanitizer (clang): the suites of many threads on one structure (suite 'threads')"
CC=clang CXX=clang++ tf_setup build/tsan -Dwerror=true -Dbuildtype=debugoptimized -Db_sanitize=thread \
    -Db_lundef=false -Dbenchmarks=false -Dexamples=false -Ddocs=disabled -Djava=disabled -Dgo=disabled -Druby=disabled
tf_build_suite build/tsan threads
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    tf_tsan_run meson test -C build/tsan --no-rebuild --suite threads --print-errorlogs --num-processes 2

step "install into a staging directory and build consumers with pkg-config (shared and static)"
bash tests/install/check_install.sh build/plain

step "Java: the installed layout (jar + link, JNI directory, pom, javadoc jar) and the consumer on the staged copy"
bash tests/install/java/check_layout.sh build/plain

step "release: meson dist, then the unpacked tarball builds and passes the C suite"
bash scripts/check_dist.sh build/plain

step "Debian packages: build, lintian, install, the installed-copy programs, remove"
bash scripts/check_packages.sh build/plain

if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
    step "libFuzzer (clang, ${FUZZ_SECONDS:-20} s per target)"
    FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/fuzz.sh
fi

if [ -n "${CROSS_ARCHS-s390x}" ]; then
    step "other CPUs under qemu-user (${CROSS_ARCHS-s390x}): the C suites, reduced counts"
    # shellcheck disable=SC2086 # a list of architectures
    bash scripts/cross.sh ${CROSS_ARCHS-s390x}
fi

step "all suites passed"
