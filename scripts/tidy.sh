#!/usr/bin/env bash
# Runs clang-tidy 14 (.clang-tidy) over the C++ sources of lib/ with a
# build's compile_commands.json, and prints the findings and a count per
# check. Exits 1 when there is any finding.
#
#   scripts/tidy.sh                 configure build/tidy if needed, check lib/
#   scripts/tidy.sh BUILDDIR        use an existing build directory
#   scripts/tidy.sh BUILDDIR FILE.. check only these files
#
# Needs Debian's clang-tidy-14; installs nothing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tf_root"

tidy=$(command -v clang-tidy-14 || true)
if [ -z "$tidy" ]; then
    echo "tidy.sh: clang-tidy-14 not found (Debian package clang-tidy-14)" >&2
    exit 2
fi
build=${1:-build/tidy}
shift || true
if [ ! -f "$build/compile_commands.json" ]; then
    meson setup "$build" -Djava=disabled -Dgo=disabled -Druby=disabled -Dexamples=false -Dbenchmarks=false >/dev/null
fi
# version.h is generated at build time; the sources include it.
ninja -C "$build" include/temporalfilters/version.h >/dev/null

if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files -- 'lib/*.cpp')
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Two files at a time (the machine's cores); each file's output in one piece.
printf '%s\n' "${files[@]}" | xargs -P "${TIDY_JOBS:-2}" -I{} sh -c \
    'o=$("$0" -p "$1" --quiet "$2" 2>/dev/null); printf "%s\n" "$o"' "$tidy" "$build" {} >"$out" || true
# A header's finding is reported once per file including it: count it once.
findings=$(grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' "$out" | sort -u || true)
if [ -z "$findings" ]; then
    echo "tidy.sh: ${#files[@]} files, no finding"
    exit 0
fi
cat "$out"
echo
echo "tidy.sh: findings per check (${#files[@]} files):"
printf '%s\n' "$findings" | sed -n 's/.*\[\([^]]*\)\]$/\1/p' | sort | uniq -c | sort -rn
echo "tidy.sh: $(printf '%s\n' "$findings" | wc -l) findings"
exit 1
