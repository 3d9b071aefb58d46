#!/bin/sh
# Fails if the shared library exports any symbol outside the tf_ prefix, or
# exports no tf_ symbol at all.
set -eu
lib="$1"
nm_out=$(nm -D --defined-only "$lib") || { echo "nm failed on $lib"; exit 1; }
exported=$(printf '%s\n' "$nm_out" | awk 'NF >= 3 { print $3 }')
bad=$(printf '%s\n' "$exported" | grep -v '^tf_' || true)
count=$(printf '%s\n' "$exported" | grep -c '^tf_' || true)
if [ -n "$bad" ]; then
    echo "symbols exported outside the tf_ prefix:"
    printf '  %s\n' $bad
    exit 1
fi
if [ "$count" -lt 10 ]; then
    echo "only $count tf_ symbols exported from $lib: is the export macro broken?"
    exit 1
fi
echo "ok: $count symbols, all tf_*"
