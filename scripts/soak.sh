#!/usr/bin/env bash
# Long streams: runs the soak driver (tests/soak/soak.cpp) on every
# structure, or on the modes named, in an optimized build of its own.
#
#   scripts/soak.sh                      # every mode, the short form (2e6 events)
#   scripts/soak.sh --long               # every mode, 1e9 events (outside CI)
#   scripts/soak.sh --long rate_limiter  # one mode
#   SOAK_EVENTS=1e8 scripts/soak.sh time_bloom
#
# --long: 1e9 events per mode, 6.35 days of simulated time each (an event
# every 0.6 ms on average, bursts, backward steps and idle gaps included).
# Expected duration, measured on the shared 2-core machine under a load of
# 6 to 9 (docs/reliability.md, "Long streams (soak)"): 6 to 30 minutes
# per mode (age_bloom_blocked 6, rotating_cuckoo 13, age_bloom 15, time_bloom 17,
# rate_limiter_exact 28), except HistoricalMembership (recency_window),
# whose inserts take microseconds: 2 to 3 hours; all ten modes, about 5 to
# 6 hours. Each mode runs under `nice`; its output goes to the terminal and
# to <build>/soak-logs/<mode>.log. Exits non-zero when any mode fails.
#
# Environment:
#   SOAK_EVENTS       events per mode (default 2e6; 1e9 with --long)
#   SOAK_PRINT_EVERY  print every n-th checkpoint (default 1; 20 with --long)
#   SOAK_SEED         the stream's seed (default 1)
#   SOAK_BUILD_DIR    build directory (default <repo>/build/soak)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tf_root"

events=${SOAK_EVENTS:-2e6}
every=${SOAK_PRINT_EVERY:-1}
if [ "${1:-}" = --long ]; then
    shift
    events=${SOAK_EVENTS:-1e9}
    every=${SOAK_PRINT_EVERY:-20}
fi
build=${SOAK_BUILD_DIR:-$tf_root/build/soak}

tf_ensure_packages "${TF_BUILD_PACKAGES[@]}"
tf_setup "$build" -Dbuildtype=release -Dbenchmarks=false -Dexamples=false -Ddocs=disabled \
    -Djava=disabled -Dgo=disabled -Druby=disabled -Dredis=disabled
ninja -C "$build" tests/soak/soak >/dev/null

soak=$build/tests/soak/soak
if [ $# -eq 0 ]; then
    read -r -a modes < <("$soak" --help | sed -n 's/^modes: //p')
else
    modes=("$@")
fi
mkdir -p "$build/soak-logs"
failed=()
for mode in "${modes[@]}"; do
    echo "==> soak $mode: $events events ($(date -u +%H:%M:%S) UTC)"
    if ! nice "$soak" "$mode" --events "$events" --print-every "$every" --seed "${SOAK_SEED:-1}" 2>&1 |
        tee "$build/soak-logs/$mode.log"; then
        failed+=("$mode")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "soak.sh: failed: ${failed[*]}" >&2
    exit 1
fi
echo "soak.sh: every mode passed (${modes[*]})"
