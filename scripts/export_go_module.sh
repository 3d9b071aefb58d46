#!/usr/bin/env bash
# Exports the Go module temporalfilters.org/go/temporalfilters (bindings/go)
# as a self-contained directory: what a user copies or vendors into a
# project and names in a go.mod `replace`. It holds go.mod, the package's
# sources (no tests: they need the project's golden blobs), the internal
# SWIG package (native.swig, generated from the shared interface, and
# cgo.go), README.md and LICENSE; nothing in it refers to a file above it.
# Building it needs the C library's development files (pkg-config
# temporalfilters) and swig. Refuses to export a stale native.swig.
#
#   scripts/export_go_module.sh DEST    (DEST must not exist or be empty)
set -euo pipefail
dest=${1:?usage: export_go_module.sh DEST}
root=$(cd "$(dirname "$0")/.." && pwd)
mod=$root/bindings/go

python3 "$mod/gen_swig.py" --check >/dev/null
if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ]; then
    echo "export_go_module.sh: $dest exists and is not empty" >&2
    exit 1
fi
mkdir -p "$dest/internal/native"
cp "$mod/go.mod" "$mod/README.md" "$root/LICENSE" "$dest/"
for f in "$mod"/*.go; do
    case $f in *_test.go) ;; *) cp "$f" "$dest/" ;; esac
done
cp "$mod/internal/native/native.swig" "$mod/internal/native/cgo.go" "$dest/internal/native/"
mkdir -p "$dest/internal/bridge"
cp "$mod/internal/bridge/bridge.go" "$dest/internal/bridge/"
# the Redis limiter's package and its own native module
mkdir -p "$dest/redis/internal/redisnative"
cp "$mod/redis/redis.go" "$dest/redis/"
cp "$mod/redis/internal/redisnative/redisnative.swig" "$mod/redis/internal/redisnative/cgo.go" \
    "$dest/redis/internal/redisnative/"
if grep -nE '^[[:space:]]*%include[[:space:]]*"' "$dest/redis/internal/redisnative/redisnative.swig"; then
    echo "export_go_module.sh: redisnative.swig includes a file outside the module" >&2
    exit 1
fi
if grep -nE '^[[:space:]]*%include[[:space:]]*"(\.\./|temporalfilters\.i")' "$dest/internal/native/native.swig"; then
    echo "export_go_module.sh: native.swig includes a file outside the module" >&2
    exit 1
fi
echo "export_go_module.sh: module temporalfilters.org/go/temporalfilters exported to $dest"
