#!/usr/bin/env bash
# Builds the API reference; run by `ninja -C build docs` (docs/meson.build).
#
#   run_doxygen.sh DOXYGEN DOXYFILE INCLUDE_DIR [EXTRA_HEADER...]
#
# Doxygen warns about undocumented members only in files that have an @file
# block: a header without one would pass with nothing documented. So every
# header under INCLUDE_DIR (and each EXTRA_HEADER, the generated version.h)
# must have one; then doxygen runs, and any warning fails (the Doxyfile
# sets WARN_AS_ERROR = FAIL_ON_WARNINGS).
set -euo pipefail
doxygen=${1:?usage: run_doxygen.sh DOXYGEN DOXYFILE INCLUDE_DIR [HEADER...]}
doxyfile=${2:?}
include_dir=${3:?}
shift 3

mapfile -t headers < <(find "$include_dir" -name '*.h' | sort)
headers+=("$@")
missing=()
for h in "${headers[@]}"; do
    grep -Eq '^[[:space:]/*]*[@\\]file\b' "$h" || missing+=("$h")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "docs: header(s) without an @file comment block (Doxygen would not check their members):" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 1
fi

# Doxygen writes relative to its working directory: run it beside the Doxyfile.
cd "$(dirname "$doxyfile")"
if ! "$doxygen" "$(basename "$doxyfile")"; then
    echo "docs: doxygen reported the warnings above (every warning is an error)" >&2
    exit 1
fi
echo "docs: $PWD/html/index.html"
