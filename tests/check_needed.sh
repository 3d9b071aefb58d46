#!/bin/sh
# Fails unless the shared library's NEEDED entries are exactly what it uses:
# the C++ runtime, libm, libgcc_s, libc and the dynamic loader (plus the
# sanitizer runtimes in a -Db_sanitize build). Anything else, notably
# libmurmurhash (only the tests link it), is an error.
#
#   check_needed.sh LIBRARY [B_SANITIZE]     B_SANITIZE: meson's b_sanitize
set -eu
lib="$1"
sanitize="${2:-none}"
dyn=$(readelf -d "$lib") || { echo "readelf failed on $lib"; exit 1; }
needed=$(printf '%s\n' "$dyn" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')

# required: must be there. allowed: may be there (the linker drops an unused
# libm or libgcc_s under --as-needed; the loader comes with TLS).
required="libstdc++.so.6 libc.so.6"
allowed="libm.so.6 libgcc_s.so.1"
extra_patterns="ld-linux-*.so.* ld64.so.* ld-linux.so.*"
for s in $(printf '%s' "$sanitize" | tr ',' ' '); do
    case $s in
        address) extra_patterns="$extra_patterns libasan.so.*" ;;
        undefined) extra_patterns="$extra_patterns libubsan.so.*" ;;
        thread) extra_patterns="$extra_patterns libtsan.so.*" ;;
        leak) extra_patterns="$extra_patterns liblsan.so.*" ;;
        memory | none) ;;
        *) echo "unknown b_sanitize value '$s'"; exit 1 ;;
    esac
done

status=0
for r in $required; do
    # (POSIX sh: no pipefail, so grep -q after a pipe is safe here.)
    printf '%s\n' "$needed" | grep -qxF "$r" || { echo "missing NEEDED entry: $r"; status=1; } # pipefail-ok
done
for n in $needed; do
    ok=0
    for a in $required $allowed; do
        [ "$n" = "$a" ] && ok=1
    done
    for p in $extra_patterns; do
        # shellcheck disable=SC2254 # $p is a pattern
        case $n in $p) ok=1 ;; esac
    done
    [ $ok = 1 ] || { echo "unexpected NEEDED entry: $n"; status=1; }
done
echo "NEEDED of $lib:" $needed
[ $status = 0 ] && echo "ok: nothing but the C/C++ runtime"
exit $status
