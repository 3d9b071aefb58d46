#!/usr/bin/env bash
# Out of cache, on 4 KiB and on 2 MiB pages (issue 16, point 6): the
# RecencySketch at 32 Mi cells (256 MiB), the age-partitioned filters (both
# layouts) and the time-limited filter at a capacity of 1e7 (1e-3), and the
# rate limiter at 1e7 keys, each run twice, `--pages 2m` (the library's
# default: tables of 4 MiB and more on transparent huge pages) and `--pages
# 4k` (huge pages off for the process), then one table of every case's
# ns/op and ratio to the floor of its own run, side by side.
#
#   scripts/bench_pages.sh [BUILDDIR]     default build/x; an optimized build
#                                         (-Dbuildtype=release or debugoptimized)
#
# About 20 minutes and 4 GiB of memory; the logs stay in BUILDDIR/bench-pages.
# It reports; it never fails on speed (exit 1 only when a benchmark fails).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tf_root"

build=${1:-build/x}
bench=$build/tests/bench
for b in bench_recency_sketch bench_bloom bench_rate_limiter; do
    [ -x "$bench/$b" ] || { echo "bench_pages.sh: $bench/$b not built (meson compile -C $build)"; exit 1; }
done
out=$build/bench-pages
mkdir -p "$out"
for pages in 2m 4k; do
    echo "== --pages $pages ($(uptime | sed 's/.*load/load/'))"
    "$bench/bench_recency_sketch" --sizes 32Mi --reps 3 --pages "$pages" >"$out/sketch_$pages.log" 2>&1
    "$bench/bench_bloom" --sizes 10M --reps 3 --pages "$pages" >"$out/bloom_$pages.log" 2>&1
    "$bench/bench_rate_limiter" --sizes 10M --reps 3 --pages "$pages" >"$out/limiter_$pages.log" 2>&1
done

python3 - "$out" <<'PY'
import sys
out = sys.argv[1]

def csv_rows(path):
    rows, inside = [], False
    for line in open(path):
        line = line.rstrip("\n")
        if line == "BEGIN CSV":
            inside = True
        elif line == "END CSV":
            inside = False
        elif inside and not line.startswith("#"):
            rows.append(line.split(","))
    return rows

def pick(kind, pages):
    """{case: (ns, x floor)} for the cases of the table below."""
    r = {}
    if kind == "sketch":
        for c in csv_rows(f"{out}/sketch_{pages}.log"):
            if c[0] == "throughput" and c[1].endswith("_1t"):
                r[c[1][:-3]] = (float(c[7]), float(c[11]))
    elif kind == "bloom":
        for c in csv_rows(f"{out}/bloom_{pages}.log"):
            if len(c) > 8 and c[1] == "10000000" and c[2] == "0.001":
                r[c[0]] = (float(c[5]), float(c[8]))
    else:
        for c in csv_rows(f"{out}/limiter_{pages}.log"):
            if c[0] == "throughput" and c[2] == "10000000" and c[3] == "1":
                r[c[1][:-3]] = (float(c[6]), float(c[10]))
    return r

cases = [
    ("sketch", "floor_lmmh", "RecencySketch 32 Mi cells: floor"),
    ("sketch", "update_standard", "  update, standard"),
    ("sketch", "query_standard", "  query, standard"),
    ("sketch", "update_blocked", "  update, blocked"),
    ("sketch", "query_blocked", "  query, blocked"),
    ("sketch", "update_batch_standard", "  update, standard, batch of 64"),
    ("sketch", "query_batch_blocked", "  query, blocked, batch of 64"),
    ("bloom", "floor_lmmh", "Bloom filters, 1e7 at 1e-3: floor"),
    ("bloom", "age_add", "  classic add"),
    ("bloom", "age_absent", "  classic contains, absent"),
    ("bloom", "age_present", "  classic contains, present"),
    ("bloom", "age_absent_batch", "  classic contains_batch, absent"),
    ("bloom", "blk_add", "  blocked add"),
    ("bloom", "blk_absent", "  blocked contains, absent"),
    ("bloom", "time_add", "  time-limited add"),
    ("bloom", "time_absent", "  time-limited contains, absent"),
    ("limiter", "floor", "rate limiter, 1e7 keys: floor"),
    ("limiter", "floor_lat", "  latency floor (dependent reads)"),
    ("limiter", "bucketed", "  decision, bucketed"),
    ("limiter", "exact", "  decision, exact"),
    ("limiter", "bucketed_batch", "  decisions in batches of 64, bucketed"),
]
data = {(k, p): pick(k, p) for k in ("sketch", "bloom", "limiter") for p in ("2m", "4k")}
print("| case | 2 MiB pages: ns (x floor) | 4 KiB pages: ns (x floor) | 4 KiB / 2 MiB time |")
print("|---|---|---|---|")
for kind, case, label in cases:
    a, b = data[(kind, "2m")].get(case), data[(kind, "4k")].get(case)
    if a is None or b is None:
        print(f"| {label.strip()} | (not measured) | | |")
        continue
    print(f"| {label.strip()} | {a[0]:.1f} ({a[1]:.2f}) | {b[0]:.1f} ({b[1]:.2f}) | {b[0] / a[0]:.2f} |")
PY
