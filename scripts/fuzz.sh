#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/ (under the repository root) and
# runs each for a bounded time over a copy of the committed seed corpus.
#
#   scripts/fuzz.sh                 # every target, 30 s each
#   FUZZ_SECONDS=300 scripts/fuzz.sh recency_ops
#   scripts/fuzz.sh --long          # every target to 1e7 executions, then
#                                   # the corpus minimized and written back
#   FUZZ_RUNS=100000 scripts/fuzz.sh --long bloom
#   FUZZ_LONG_SECONDS=7200 scripts/fuzz.sh --long bloom   # at most 2 h
#
# --long (outside CI; hours, see docs/reliability.md, "Fuzzing"): each target
# runs FUZZ_RUNS executions (default 10000000) with no time bound (the CPU
# seconds of the run and the executions per CPU second are printed), then its
# corpus (the committed one plus what the run found) is minimized with
# libFuzzer's -merge=1 into a fresh directory and written back to
# tests/fuzz/corpus/<target> for committing. Named seeds (make_corpus's and
# kept reproducers of past failures) are kept as they are; only the
# libFuzzer-named entries (40 hex digits) are replaced. With
# FUZZ_LONG_SECONDS a run also stops after that many seconds; it then
# counts as the executions it made (printed), and its corpus is minimized
# all the same, so that a later run goes on from it. So does a run stopped
# by Ctrl-C (or SIGINT sent to the fuzzer: libFuzzer then exits 72); the
# script then minimizes that target's corpus, runs no further target and
# exits 130.
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 30; ignored by --long)
#   FUZZ_RUNS       executions per target with --long (default 10000000)
#   FUZZ_LONG_SECONDS  with --long: stop a target's run after this many
#                   seconds if FUZZ_RUNS is not reached (default: no bound)
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
long=0
if [ "${1:-}" = --long ]; then
  long=1
  shift
fi
runs=${FUZZ_RUNS:-10000000}
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

# minimize TARGET CORPUS: the committed named seeds plus the smallest set of
# the other entries (committed or found) that keeps the coverage, written
# back to tests/fuzz/corpus/TARGET.
minimize() {
  local t=$1 found=$2 committed="$root/tests/fuzz/corpus/$1"
  local fresh="$build/fuzz-merged/$1" pool="$build/fuzz-pool/$1"
  rm -rf "$fresh" "$pool"
  mkdir -p "$fresh" "$pool"
  local f
  for f in "$committed"/*; do
    if [[ $(basename "$f") =~ ^[0-9a-f]{40}$ ]]; then cp "$f" "$pool/"; else cp "$f" "$fresh/"; fi
  done
  for f in "$found"/*; do
    if [ ! -e "$fresh/$(basename "$f")" ]; then cp "$f" "$pool/"; fi
  done
  "$build/tests/fuzz/fuzz_$t" -merge=1 -max_len="${max_len[$t]}" -timeout=20 -rss_limit_mb=2048 "$fresh" "$pool"
  find "$committed" -maxdepth 1 -type f -regextype egrep -regex '.*/[0-9a-f]{40}' -delete
  for f in "$fresh"/*; do
    if [ ! -e "$committed/$(basename "$f")" ]; then cp "$f" "$committed/"; fi
  done
  echo "=== $t: corpus minimized: $(find "$committed" -type f | wc -l) entries in $committed (commit them) ==="
}

# children_cpu: the CPU seconds (user + system) of this shell's finished
# children so far, from the builtin `times` (its second line; run in this
# shell, not in a command substitution, whose subshell has no children yet).
children_cpu() {
  times >"$build/.times"
  awk 'NR == 2 {
    s = 0
    for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] }
    printf "%.2f", s
  }' "$build/.times"
}

# Ctrl-C reaches the fuzzer, which prints its statistics and exits 72;
# the script (which outlives it: this trap) goes on to count and minimize,
# and tee -i keeps the log whole.
trap ':' INT

failed=()
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  cp "$root/tests/fuzz/corpus/$t/"* "$corpus/"
  fuzz_args=()
  if [ "$long" = 1 ]; then
    echo "=== fuzzing $t for $runs executions${FUZZ_LONG_SECONDS:+ or ${FUZZ_LONG_SECONDS}s} (corpus copy: $corpus) ==="
    fuzz_args+=(-runs="$runs")
    if [ -n "${FUZZ_LONG_SECONDS:-}" ]; then fuzz_args+=(-max_total_time="$FUZZ_LONG_SECONDS"); fi
  else
    echo "=== fuzzing $t for ${seconds}s (corpus copy: $corpus) ==="
    fuzz_args+=(-max_total_time="$seconds")
  fi
  fuzz_args+=(
    -max_len="${max_len[$t]}"
    -timeout=20
    -rss_limit_mb=2048
    -print_final_stats=1
    -artifact_prefix="$artifacts/"
  )
  if [ "$jobs" -gt 1 ]; then fuzz_args+=(-fork="$jobs"); fi
  # shellcheck disable=SC2206 # word splitting is intended
  if [ -n "${FUZZ_EXTRA_ARGS:-}" ]; then fuzz_args+=($FUZZ_EXTRA_ARGS); fi
  children_cpu >"$build/.cpu0"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$build/fuzz-logs"
  # libFuzzer's output goes to the terminal and to $log (its final stats
  # say how many executions were made); pipefail gives the fuzzer's status.
  status=0
  "$build/tests/fuzz/fuzz_$t" "${fuzz_args[@]}" "$corpus" 2>&1 | tee -i "$log" || status=$?
  interrupted=0
  how=""
  if [ "$status" = 72 ] && grep -q "libFuzzer: run interrupted" "$log"; then
    interrupted=1
    how=", interrupted"
  fi
  if [ "$status" = 0 ] || [ "$interrupted" = 1 ]; then
    children_cpu >"$build/.cpu1"
    cpu=$(awk 'NR == FNR { a = $1; next } { printf "%.1f", $1 - a }' "$build/.cpu0" "$build/.cpu1")
    echo "=== $t: no crash$how ($(find "$corpus" -type f | wc -l) corpus entries; $cpu CPU seconds, user + system) ==="
    if [ "$long" = 1 ]; then
      # executions per CPU second: on a shared machine libFuzzer's own
      # exec/s (wall clock) counts the other jobs' time too
      # (with FUZZ_JOBS > 1, -fork's parent prints "fuzzed for N iterations" instead)
      done_runs=$(awk '/^stat::number_of_executed_units:/ { n = $2 }
        /fuzzed for [0-9]+ iterations/ { for (i = 1; i < NF; i++) if ($i == "for") m = $(i + 1) }
        END { print (n > 0 ? n : m) + 0 }' "$log")
      awk -v r="$done_runs" -v c="$cpu" 'BEGIN { if (c > 0) printf "=== '"$t"': %d executions, %.0f per CPU second ===\n", r, r / c }'
    fi
    if [ "$long" = 1 ]; then minimize "$t" "$corpus"; fi
    if [ "$interrupted" = 1 ]; then
      echo "fuzz.sh: interrupted during $t; the targets after it did not run" >&2
      if [ ${#failed[@]} -gt 0 ]; then echo "fuzz.sh: crashes in: ${failed[*]}" >&2; fi
      exit 130
    fi
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
if [ "$long" = 1 ]; then
  echo "fuzz.sh: all targets ran ${FUZZ_LONG_SECONDS:+up to }$runs executions${FUZZ_LONG_SECONDS:+ or ${FUZZ_LONG_SECONDS}s each (executions above)} without a crash"
else
  echo "fuzz.sh: all targets ran ${seconds}s without a crash"
fi
