#!/bin/sh
# Fails if the shared library exports any symbol outside the tf_ prefix,
# exports no tf_ symbol at all, or exports one without the version node
# TEMPORALFILTERS_0 of lib/temporalfilters.map (the node itself is the one
# other dynamic symbol allowed).
set -eu
lib="$1"
nm_out=$(nm -D --defined-only "$lib") || { echo "nm failed on $lib"; exit 1; }
node=TEMPORALFILTERS_0
exported=$(printf '%s\n' "$nm_out" | awk 'NF >= 3 { print $3 }' | grep -v "^$node\$" || true)
unversioned=$(printf '%s\n' "$exported" | grep -v "@@\?$node\$" || true)
if [ -n "$unversioned" ]; then
    echo "symbols exported without the version node $node:"
    printf '  %s\n' $unversioned
    exit 1
fi
exported=$(printf '%s\n' "$exported" | sed 's/@.*//')
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
echo "ok: $count symbols, all tf_*@@$node"
