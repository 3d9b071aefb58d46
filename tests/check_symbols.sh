#!/bin/sh
# Fails if the shared library exports any symbol outside the tf_ prefix,
# exports no tf_ symbol at all, or exports one without the version node
# TEMPORALFILTERS_0 of lib/temporalfilters.map (the node itself is the one
# other dynamic symbol allowed). A companion library names its own node and
# prefix: check_symbols.sh LIB NODE PREFIX (libtemporalfilters-redis:
# TEMPORALFILTERS_REDIS_0 and tf_redis_).
set -eu
lib="$1"
node=${2:-TEMPORALFILTERS_0}
prefix=${3:-tf_}
nm_out=$(nm -D --defined-only "$lib") || { echo "nm failed on $lib"; exit 1; }
exported=$(printf '%s\n' "$nm_out" | awk 'NF >= 3 { print $3 }' | grep -v "^$node\$" || true)
unversioned=$(printf '%s\n' "$exported" | grep -v "@@\?$node\$" || true)
if [ -n "$unversioned" ]; then
    echo "symbols exported without the version node $node:"
    printf '  %s\n' $unversioned
    exit 1
fi
exported=$(printf '%s\n' "$exported" | sed 's/@.*//')
bad=$(printf '%s\n' "$exported" | grep -v "^$prefix" || true)
count=$(printf '%s\n' "$exported" | grep -c "^$prefix" || true)
if [ -n "$bad" ]; then
    echo "symbols exported outside the $prefix prefix:"
    printf '  %s\n' $bad
    exit 1
fi
if [ "$count" -lt 10 ]; then
    echo "only $count $prefix symbols exported from $lib: is the export macro broken?"
    exit 1
fi
echo "ok: $count symbols, all $prefix*@@$node"
