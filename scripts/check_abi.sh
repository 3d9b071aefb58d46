#!/usr/bin/env bash
# The ABI guard: compares the ABI of each shared library just built with the
# committed baseline of its current soname (written by abidw of Debian's
# abigail-tools) and fails on any change abidiff reports, unless that
# library's soname was raised. The libraries, one mechanism for all:
#
#   libtemporalfilters.so        tests/abi/libtemporalfilters.abi
#   libtemporalfilters-redis.so  tests/abi/libtemporalfilters-redis.abi
#                                (the companion, lib/redis/: header
#                                temporalfilters/redis.h, which includes
#                                common.h and rate_limiter.h)
#
#   scripts/check_abi.sh BUILDDIR            check (BUILDDIR built with -g,
#                                            e.g. build/plain, with the
#                                            companion: -Dredis enabled)
#   scripts/check_abi.sh --update BUILDDIR [LIB]
#                                            rewrite the baselines, or only
#                                            LIB's (e.g. libtemporalfilters-redis.so):
#                                            only when its soname is raised,
#                                            or at a release to take in the
#                                            functions added since (abidiff
#                                            of old against new: additions
#                                            only; docs/conventions.md)
#
# What counts: the exported functions (their symbols, parameters and return
# types) and every type reachable from them, as the public headers declare
# them (abidw --headers-dir include/temporalfilters --exported-interfaces-only:
# the opaque handles stay declaration-only, so the library's internals are
# not part of the ABI; the companion reaches only redis.h's types and the
# core's statuses). Added functions are fine (abidiff --no-added-syms);
# a removed or changed function, a changed enum value or a changed struct
# field is not. The one suppression (tests/abi/suppressions.abignore): the
# versioned structs may gain fields at their end, which is what their `size`
# first field is for (docs/conventions.md).
#
# abidiff's exit status is a bit field: 1 error, 2 usage error, 4 an ABI
# change, 8 an incompatible change. Before checking a library, the script
# proves that its check can fail: a copy of its baseline with one field of
# one of its stats structs changed must be refused, and one with a field
# added at the end of that versioned struct must pass.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tf_root"

update=0
if [ "${1:-}" = --update ]; then
    update=1
    shift
fi
build=${1:?usage: check_abi.sh [--update] BUILDDIR [LIB]}
only=${2:-}
[ -z "$only" ] || [ "$update" = 1 ] || { echo "check_abi.sh: LIB is for --update only" >&2; exit 1; }
suppressions=tests/abi/suppressions.abignore
headers=include/temporalfilters
# The libraries checked: the library in BUILDDIR, its baseline, and the stats
# struct and field of the self-test (a versioned struct of that library's
# own header, with a 64-bit field to narrow).
libraries=(
    "lib/libtemporalfilters.so tests/abi/libtemporalfilters.abi tf_rate_limiter_stats keys"
    "lib/redis/libtemporalfilters-redis.so tests/abi/libtemporalfilters-redis.abi tf_redis_limiter_stats decisions"
)

for tool in abidw abidiff; do
    command -v "$tool" >/dev/null || { echo "check_abi.sh: $tool not found (Debian: abigail-tools)" >&2; exit 1; }
done
for entry in "${libraries[@]}"; do
    read -r lib _ <<<"$entry"
    [ -e "$build/$lib" ] || {
        echo "check_abi.sh: no $build/$lib: build $build first (the companion needs -Dredis=enabled)" >&2
        exit 1
    }
done

tmp=${TF_ABI_KEEP:-$(mktemp -d)}; mkdir -p "$tmp"
trap '[ -n "${TF_ABI_KEEP:-}" ] || rm -rf "$tmp"' EXIT

# The ABI of a library as this project records it (stable type ids, no
# paths of the build machine).
abi_of() {
    abidw --headers-dir "$headers" --drop-private-types --drop-undefined-syms --exported-interfaces-only \
        --no-corpus-path --type-id-style hash "$1"
}
soname_of() { sed -n "/<abi-corpus [^>]*soname='/{s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p;q}" "$1"; }
# The versioned structs' fields, old and new: libabigail's suppression of
# fields added at a struct's end (has_data_member_inserted_at = end) also
# hides a changed field of that struct, so each versioned struct of OLD must
# be a prefix of NEW's: the same fields, in the same order, at the same
# offsets, of the same types (abidw's hash type ids name a type by what it
# is), and no smaller.
versioned_prefix() {
    python3 - "$1" "$2" <<'PY'
import re, sys

def structs(path):
    abi = open(path).read()
    out = {}
    for m in re.finditer(r"<class-decl name='(tf_[a-z_]+_(?:info|stats|options))'[^>]*?size-in-bits='(\d+)'[^>]*>(.*?)</class-decl>",
                         abi, re.S):
        fields = re.findall(r"<data-member [^>]*layout-offset-in-bits='(\d+)'[^>]*>\s*"
                            r"<var-decl name='([^']+)' type-id='([^']+)'", m.group(3))
        out[m.group(1)] = (int(m.group(2)), fields)
    return out

old, new = structs(sys.argv[1]), structs(sys.argv[2])
bad = []
for name, (size, fields) in sorted(old.items()):
    if name not in new:
        bad.append("%s is gone" % name)
        continue
    nsize, nfields = new[name]
    if nfields[:len(fields)] != fields:
        bad.append("%s: the fields %s became %s" % (name, [f[1] for f in fields], [f[1] for f in nfields]))
        for a, b in zip(fields, nfields):
            if a != b:
                bad.append("  first difference: %s at bit %s (type %s) vs %s at bit %s (type %s)"
                           % (a[1], a[0], a[2], b[1], b[0], b[2]))
                break
    elif nsize < size:
        bad.append("%s shrank from %d to %d bits" % (name, size, nsize))
if not old:
    bad.append("no versioned struct found in %s" % sys.argv[1])
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
PY
}
# abidiff OLD NEW plus the versioned structs' prefix check: prints the
# report, returns abidiff's status (bit 8 set when a versioned struct broke).
compare() {
    local st=0
    abidiff --no-added-syms --suppressions "$suppressions" "$1" "$2" || st=$?
    versioned_prefix "$1" "$2" || st=$((st | 8))
    return $st
}

# check_library LIB BASELINE STRUCT FIELD: the self-test and the check of
# one library (LIB relative to BUILDDIR), or with --update the rewrite of its
# baseline. Returns non-zero when the library fails. (Called in an `||`
# list, where set -e does not apply: each step that can fail says so.)
check_library() {
    local lib=$build/$1 baseline=$2 struct=$3 field=$4 dir=$tmp/$(basename "$1" .so)
    mkdir -p "$dir"
    echo "--- $(basename "$lib") against $baseline"
    abi_of "$lib" >"$dir/current.abi" || return 1
    local current_soname functions
    current_soname=$(soname_of "$dir/current.abi")
    functions=$(grep -c '<function-decl ' "$dir/current.abi" || true)
    echo "current ABI: $current_soname, $functions functions"

    if [ "$update" = 1 ]; then
        mkdir -p "$(dirname "$baseline")"
        cp "$dir/current.abi" "$baseline" || return 1
        echo "wrote $baseline"
        return 0
    fi
    [ -f "$baseline" ] || { echo "check_abi.sh: no baseline $baseline (scripts/check_abi.sh --update $build)" >&2; return 1; }
    local baseline_soname
    baseline_soname=$(soname_of "$baseline")

    # ---- the check can fail --------------------------------------------------
    # A baseline whose STRUCT.FIELD (a 64-bit field) became a 32-bit field (a
    # changed field of an existing struct) must be refused with bit 4 or 8 ...
    python3 - "$baseline" "$dir" "$struct" "$field" <<'EOF' || return 1
import re, sys
src, tmp, struct, field = sys.argv[1:5]
abi = open(src).read()
m = re.search(r"<class-decl name='%s'[^>]*>(.*?)</class-decl>" % struct, abi, re.S)
if not m:
    sys.exit("check_abi.sh: no %s in the baseline %s" % (struct, src))
body = m.group(1)
# ... the field gets a 32-bit unsigned type
u32 = re.search(r"<type-decl name='unsigned int' size-in-bits='32' id='([^']+)'", abi)
old = re.search(r"<var-decl name='%s' type-id='([^']+)'" % field, body)
if not (u32 and old):
    sys.exit("check_abi.sh: cannot build the self-test ABI of %s (%s.%s)" % (src, struct, field))
changed = body.replace("<var-decl name='%s' type-id='%s'" % (field, old.group(1)),
                       "<var-decl name='%s' type-id='%s'" % (field, u32.group(1)))
open(tmp + "/field_changed.abi", "w").write(abi.replace(body, changed))
# ... and one with a field added at the end of STRUCT must pass.
members = re.findall(r"(\s*<data-member [^>]*layout-offset-in-bits='(\d+)'[^>]*>\s*<var-decl name='([^']+)' type-id='([^']+)'[^>]*/>\s*</data-member>)", body)
last, offset, name, type_id = members[-1]
size = re.search(r"<class-decl name='%s'[^>]* size-in-bits='(\d+)'" % struct, abi)
added_member = last.replace("layout-offset-in-bits='%s'" % offset, "layout-offset-in-bits='%d'" % (int(offset) + 64)) \
                   .replace("name='%s'" % name, "name='later_field'")
grown = abi.replace(body, body.replace(last, last + added_member))
grown = grown.replace(size.group(0), size.group(0).replace("size-in-bits='%s'" % size.group(1),
                                                          "size-in-bits='%d'" % (int(size.group(1)) + 64)))
open(tmp + "/field_added.abi", "w").write(grown)
EOF
    local status=0
    compare "$baseline" "$dir/field_changed.abi" >"$dir/self_test.txt" 2>&1 || status=$?
    if [ $((status & 12)) = 0 ]; then
        cat "$dir/self_test.txt"
        echo "check_abi.sh: a changed field of $struct went unreported (abidiff status $status): the check cannot fail" >&2
        return 1
    fi
    status=0
    compare "$baseline" "$dir/field_added.abi" >"$dir/self_test.txt" 2>&1 || status=$?
    if [ "$status" != 0 ]; then
        cat "$dir/self_test.txt"
        echo "check_abi.sh: a field added at the end of $struct was reported (status $status): the suppression is broken" >&2
        return 1
    fi
    echo "self-test: a changed field of $struct is refused, a field added at its end is accepted"

    # ---- the check -------------------------------------------------------------
    status=0
    compare "$baseline" "$dir/current.abi" >"$dir/report.txt" 2>&1 || status=$?
    cat "$dir/report.txt"
    if [ $((status & 3)) != 0 ]; then
        echo "check_abi.sh: abidiff failed (status $status)" >&2
        return 1
    fi
    if [ $((status & 12)) != 0 ]; then
        if [ "$current_soname" != "$baseline_soname" ]; then
            echo "check_abi.sh: the ABI changed and the soname was raised ($baseline_soname -> $current_soname):"
            echo "  commit the new baseline: scripts/check_abi.sh --update $build"
            return 0
        fi
        echo "check_abi.sh: the ABI of $current_soname changed (abidiff status $status; 4: a change, 8: an" >&2
        echo "  incompatible change). Add functions instead of changing them; a break needs a raised" >&2
        echo "  soname (tf_soversion in meson.build) and a new baseline (docs/conventions.md," >&2
        echo "  \"Versions and the ABI\")." >&2
        return 1
    fi
    echo "ok: the ABI of $current_soname matches $baseline (added functions aside)"
}

failed=() checked=0
for entry in "${libraries[@]}"; do
    read -r lib baseline struct field <<<"$entry"
    [ -z "$only" ] || [ "$(basename "$lib")" = "$only" ] || continue
    checked=$((checked + 1))
    check_library "$lib" "$baseline" "$struct" "$field" || failed+=("$(basename "$lib")")
done
[ "$checked" -gt 0 ] || { echo "check_abi.sh: no library named $only" >&2; exit 1; }
if [ ${#failed[@]} -gt 0 ]; then
    echo "check_abi.sh: failed: ${failed[*]}" >&2
    exit 1
fi
