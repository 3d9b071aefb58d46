#!/usr/bin/env bash
# Line coverage of the library by the committed fuzz corpus, with clang's
# source-based coverage (-fprofile-instr-generate -fcoverage-mapping).
#
#   scripts/fuzz_coverage.sh            # every target's corpus
#   scripts/fuzz_coverage.sh bloom      # one target's
#
# Builds the corpus replayers (tests/fuzz/replay_main.cpp: each committed
# input run once, no random inputs) and the library with coverage in
# build-cov/ (FUZZ_COV_BUILD_DIR), runs them, merges the profiles and prints
#   - llvm-cov's per-file report of lib/ (build-cov/fuzz-coverage/files.txt),
#   - the line coverage of each deserializer: the functions that read a blob
#     (DESERIALIZERS below), summed per structure
#     (build-cov/fuzz-coverage/deserializers.txt).
# Needs clang 14 and llvm-14 (llvm-profdata-14, llvm-cov-14); installs
# nothing. Outside CI; figures in docs/reliability.md, "Fuzzing".
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_COV_BUILD_DIR:-$root/build-cov}
all_targets=(recency_deserialize recency_ops bloom rate_limiter rotating_cuckoo recency_window)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all_targets[@]}"); fi
for tool in clang clang++ llvm-profdata-14 llvm-cov-14 meson ninja; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fuzz_coverage.sh: $tool not found (Debian: clang llvm-14 meson ninja-build)" >&2
    exit 2
  fi
done

cov_flags='-fprofile-instr-generate -fcoverage-mapping'
setup_args=(
  -Dbuildtype=debug
  -Dtests=true
  -Dexamples=false
  -Dbenchmarks=false
  -Dfuzzing=disabled
  -Djava=disabled
  -Dgo=disabled
  -Druby=disabled
  "-Dc_args=$cov_flags"
  "-Dcpp_args=$cov_flags"
  -Dc_link_args=-fprofile-instr-generate
  -Dcpp_link_args=-fprofile-instr-generate
)
export CC=clang CXX=clang++
# profiles of anything else an instrumented build runs stay in the build
export LLVM_PROFILE_FILE="$build/other-%p.profraw"
cd "$root"
if [ ! -f "$build/meson-private/coredata.dat" ]; then meson setup "$build" "${setup_args[@]}"; fi
ninja_targets=()
for t in "${targets[@]}"; do ninja_targets+=("tests/fuzz/fuzz_replay_$t"); done
ninja -C "$build" "${ninja_targets[@]}"

out="$build/fuzz-coverage"
rm -rf "$out"
mkdir -p "$out"
objects=()
for t in "${targets[@]}"; do
  LLVM_PROFILE_FILE="$out/$t.profraw" "$build/tests/fuzz/fuzz_replay_$t" "$root/tests/fuzz/corpus/$t" >"$out/$t.log"
  if [ ${#objects[@]} -eq 0 ]; then objects+=("$build/tests/fuzz/fuzz_replay_$t"); else objects+=(-object "$build/tests/fuzz/fuzz_replay_$t"); fi
done
lib=$(find "$build/lib" -maxdepth 1 -name 'libtemporalfilters.so.*.*' -print -quit)
if [ -n "$lib" ]; then objects+=(-object "$lib"); fi
llvm-profdata-14 merge -sparse "$out"/*.profraw -o "$out/corpus.profdata"
cd "$build"
llvm-cov-14 report "${objects[@]}" -instr-profile="$out/corpus.profdata" 2>/dev/null | grep -E '^(Filename|-|TOTAL|\.\./lib/)' |
  grep -v '/redis/' | tee "$out/files.txt"

# The deserializers' functions, line by line (llvm-cov show of the functions
# whose names suggest reading a blob; classified below by demangled name).
llvm-cov-14 show "${objects[@]}" -instr-profile="$out/corpus.profdata" \
  -name-regex='.*(read|parse|deserial|Reader|decode|open|Build|Measure|versioned|check|Overrides|layout|audit|flaw).*' \
  >"$out/functions.txt" 2>/dev/null
cd "$root"

python3 - "$out/functions.txt" "$out/deserializers.txt" <<'EOF'
import re, subprocess, sys
# structure -> regex over demangled function names
DESERIALIZERS = [
    ('envelope (wire.cpp, all kinds)',
     r'tf::wire::(Reader::|open|deserialize<)|^tf::read_deserialize_options|get_versioned<tf_deserialize_options>'),
    ('recency_sketch', r'^tf::RecencySketch::read|^tf_recency_sketch_deserialize'),
    ('age_bloom', r'tf::bloom::(CountWindowBloom<.*>::read|ClassicLayout::read|BlockedLayout::read|read_slices|check_slices'
                  r'|read_blocked_header|check_blocked_lines)|^tf_age_bloom_deserialize|deserialize_as<tf_age_bloom'
                  r'|with_layout<tf_age_bloom_deserialize'),
    ('time_bloom', r'tf::bloom::(TimeBloom::read|read_slices|check_slices)|^tf_time_bloom_deserialize'
                   r'|deserialize_as<tf_time_bloom'),
    ('rate_limiter', r'tf::rate::(RateLimiter::read|ExactView::read|GrantRing::read|.*parse_payload|.*read_header'
                     r'|.*read_global|.*read_key|.*check|RateLimiter::Build|RateLimiter::Measure|.*Overrides)'
                     r'|^tf_rate_limiter_deserialize|deserialize<tf::rate::RateLimiter'),
    ('rotating_cuckoo', r'^tf::cuckoo::RotatingCuckoo::read|^tf_rotating_cuckoo_deserialize'
                        r'|deserialize<tf::cuckoo::RotatingCuckoo'),
    ('recency_window', r'^tf::recency::(RecencyWindow::read|SlidingTable::read_with|SlidingTable::stash_flaw)|SlidingTable::audit<'
                       r'|^tf_recency_window_deserialize|deserialize<tf::recency::RecencyWindow'),
]
src, dst = sys.argv[1], sys.argv[2]
funcs = {}  # mangled name -> {line number: covered}
cur = None
line_re = re.compile(r'^\s*(\d+)\|\s*([0-9.]+[kMGTE]?)?\|')
for raw in open(src, errors='replace'):
    if raw.startswith('  |') or raw.startswith('  -'):
        continue  # template instantiation sub-views repeat the lines
    m = line_re.match(raw)
    if m:
        if cur is not None and m.group(2) is not None:
            n = int(m.group(1))
            funcs[cur][n] = funcs[cur].get(n, False) or m.group(2) != '0'
        continue
    t = raw.rstrip('\n')
    if t.endswith(':') and t.strip():
        parts = t[:-1].split(':')
        # local symbols carry their file; the fuzz targets' own are not counted
        if len(parts) > 1 and re.match(r'(fuzz_|replay_main)', parts[-2]):
            cur = None
            continue
        cur = parts[-1]
        funcs.setdefault(cur, {})
names = list(funcs)
dem = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True, text=True).stdout.split('\n')
with open(dst, 'w') as out:
    for label, rx in DESERIALIZERS:
        pat = re.compile(rx)
        lines = covered = 0
        picked = []
        for mangled, d in zip(names, dem):
            if pat.search(d) and funcs[mangled]:
                n, c = len(funcs[mangled]), sum(funcs[mangled].values())
                lines += n
                covered += c
                picked.append((d, c, n))
        pct = 100.0 * covered / lines if lines else 0.0
        out.write('%-31s %5.1f%% of %4d lines (%d functions)\n' % (label, pct, lines, len(picked)))
        for d, c, n in sorted(picked):
            out.write('    %4d/%-4d %s\n' % (c, n, d[:140]))
print(open(dst).read())
EOF
