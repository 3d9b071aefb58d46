#!/usr/bin/env bash
# Formats the project's C and C++ sources with clang-format 14 (the version
# .clang-format is written for; Debian's clang-format-14).
#
#   scripts/format.sh           rewrite every tracked C/C++ file in place
#   scripts/format.sh --check   change nothing; list the files that are not
#                               formatted and exit 1 if there are any
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cf=$(command -v clang-format-14 || true)
if [ -z "$cf" ]; then
    echo "format.sh: clang-format-14 not found (Debian package clang-format-14)" >&2
    exit 2
fi
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp')
if [ "${1:-}" = --check ]; then
    bad=()
    for f in "${files[@]}"; do
        if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
            bad+=("$f")
        fi
    done
    if [ ${#bad[@]} -gt 0 ]; then
        echo "format.sh: ${#bad[@]} file(s) not formatted (run scripts/format.sh):" >&2
        printf '  %s\n' "${bad[@]}" >&2
        exit 1
    fi
    echo "format.sh: ${#files[@]} files formatted"
else
    "$cf" -i "${files[@]}"
fi
