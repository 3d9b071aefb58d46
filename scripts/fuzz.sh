#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/ (under the repository root) and
# runs each for a bounded time over a copy of the committed seed corpus.
#
#   scripts/fuzz.sh                 # every target, 30 s each
#   FUZZ_SECONDS=300 scripts/fuzz.sh recency_ops
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 30)
#   FUZZ_BUILD_DIR  build directory (default <repo>/build-fuzz)
#   FUZZ_JOBS       parallel fuzzing processes per target (default 1)
#   FUZZ_EXTRA_ARGS extra libFuzzer flags, e.g. "-len_control=0 -seed=1"
#
# Needs clang, clang++ and the libFuzzer runtime (Debian: clang
# libclang-rt-14-dev); installs nothing. The committed corpus is never
# modified: new inputs go to <build>/fuzz-corpus/<target>, crashes to
# <build>/fuzz-artifacts/. Exits non-zero when any target crashes or fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-1}

# target name -> -max_len (bytes) suitable for its inputs
declare -A max_len=(
  [recency_deserialize]=4096
  [recency_ops]=2048
  [bloom]=8192
  [rate_limiter]=4096
  [rotating_cuckoo]=8192
  [recency_window]=8192
)
all_targets=(recency_deserialize recency_ops bloom rate_limiter rotating_cuckoo recency_window)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  if [ -z "${max_len[$t]:-}" ]; then
    echo "fuzz.sh: unknown target '$t' (known: ${all_targets[*]})" >&2
    exit 2
  fi
done

for tool in clang clang++ meson ninja; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fuzz.sh: $tool not found (install clang libclang-rt-14-dev meson ninja-build)" >&2
    exit 2
  fi
done

# shellcheck disable=SC2054 # the comma belongs to the meson option
setup_args=(
  -Dfuzzing=enabled
  -Db_sanitize=address,undefined
  -Db_lundef=false
  -Dbuildtype=debugoptimized
  -Dtests=true
  -Dexamples=false
  -Dbenchmarks=false
  -Djava=disabled
  -Dgo=disabled
  -Druby=disabled
)
export CC=clang CXX=clang++
cd "$root"
if [ -f "$build/meson-private/coredata.dat" ]; then
  # Reconfigure; start afresh if the directory was set up with another compiler.
  if ! meson setup --reconfigure "$build" "${setup_args[@]}"; then
    echo "fuzz.sh: reconfigure failed, wiping $build" >&2
    meson setup --wipe "$build" "${setup_args[@]}"
  fi
else
  meson setup "$build" "${setup_args[@]}"
fi

ninja_targets=()
for t in "${targets[@]}"; do ninja_targets+=("tests/fuzz/fuzz_$t"); done
ninja -C "$build" "${ninja_targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}

failed=()
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  cp "$root/tests/fuzz/corpus/$t/"* "$corpus/"
  echo "=== fuzzing $t for ${seconds}s (corpus copy: $corpus) ==="
  fuzz_args=(
    -max_total_time="$seconds"
    -max_len="${max_len[$t]}"
    -timeout=20
    -rss_limit_mb=2048
    -print_final_stats=1
    -artifact_prefix="$artifacts/"
  )
  if [ "$jobs" -gt 1 ]; then fuzz_args+=(-fork="$jobs"); fi
  # shellcheck disable=SC2206 # word splitting is intended
  if [ -n "${FUZZ_EXTRA_ARGS:-}" ]; then fuzz_args+=($FUZZ_EXTRA_ARGS); fi
  if "$build/tests/fuzz/fuzz_$t" "${fuzz_args[@]}" "$corpus"; then
    echo "=== $t: no crash ($(find "$corpus" -type f | wc -l) corpus entries) ==="
  else
    echo "=== $t: FAILED; reproducers in $artifacts ===" >&2
    ls -l "$artifacts" >&2 || true
    echo "reproduce: ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS $build/tests/fuzz/fuzz_$t <file>" >&2
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: crashes in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: all targets ran ${seconds}s without a crash"
