#!/usr/bin/env bash
# check_layout.sh BUILDDIR: meson install --destdir into a staging directory,
# then checks the Java binding's installed layout and runs the consumer
# against it:
#   <prefix>/share/java/temporalfilters-<version>.jar (classes with their
#     parameter names, Implementation-Version <version> in the manifest) and
#     the link temporalfilters.jar -> temporalfilters-<version>.jar;
#   <prefix>/lib/<triplet>/jni/libtemporalfilters_jni.so (<triplet>: the
#     build's, gcc -print-multiarch), with no unexpected run path;
#   <prefix>/share/maven-repo/org/temporalfilters/temporalfilters/<version>/:
#     the pom (groupId, artifactId, version), a link to the jar, and the
#     javadoc jar (index.html and a page per public class).
# Then run.sh <staged prefix>: the consumer built against the staged jar, its
# loader finding the staged JNI library from the jar's location; the only
# variable set is the runtime linker path to the staged lib directory (so
# that the staged libtemporalfilters.so.0 is used, not one of the system).
set -euo pipefail
build=${1:?usage: check_layout.sh BUILDDIR}
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "check_layout.sh: $*" >&2; exit 1; }

option() {
    meson introspect "$build" --buildoptions |
        python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]==sys.argv[1]][0])' "$1"
}
meson install -C "$build" --destdir "$stage" --quiet
prefix=$(option prefix)
libdir=$(option libdir)
datadir=$(option datadir)
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
case $datadir in /*) ;; *) datadir=$prefix/$datadir ;; esac
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
triplet=$(cc -print-multiarch)
[ -n "$triplet" ] || fail "cc -print-multiarch prints nothing"
root=$stage$prefix
share=$stage$datadir

jar=$share/java/temporalfilters-$version.jar
if [ ! -f "$jar" ] || [ -L "$jar" ]; then fail "missing $jar (a file, not a link)"; fi
[ "$(readlink "$share/java/temporalfilters.jar")" = "temporalfilters-$version.jar" ] ||
    fail "$share/java/temporalfilters.jar is not a link to temporalfilters-$version.jar"
work=$stage/work
mkdir -p "$work"
(cd "$work" && jar --extract --file "$jar" META-INF/MANIFEST.MF org/temporalfilters/RateLimiter.class)
# (Each tool's whole output first: under pipefail, `tool | grep -q` fails when
# grep stops at the first match and the tool dies of SIGPIPE.)
manifest=$(tr -d '\r' <"$work/META-INF/MANIFEST.MF")
grep -qx "Implementation-Version: $version" <<<"$manifest" ||
    fail "the jar's manifest lacks Implementation-Version: $version"
# -parameters: the classes keep their methods' parameter names
javap_out=$(javap -v "$work/org/temporalfilters/RateLimiter.class")
grep -q MethodParameters <<<"$javap_out" ||
    fail "the jar's classes have no parameter names (-parameters)"

jni=$root/lib/$triplet/jni/libtemporalfilters_jni.so
[ -f "$jni" ] || fail "missing $jni"
rpath=$(readelf -d "$jni" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
# shellcheck disable=SC2016 # $ORIGIN is the loader's, literally
case $rpath in '' | '$ORIGIN/..') ;; *) fail "$jni has the run path '$rpath'" ;; esac
jni_dynamic=$(readelf -d "$jni")
grep -q 'NEEDED.*\[libtemporalfilters\.so\.0\]' <<<"$jni_dynamic" || fail "$jni does not need libtemporalfilters.so.0"

# The Redis limiter's JNI library, with the redis option: beside the core's,
# the same run path, needing the companion library (and the consumer's Redis
# part is then required).
if meson introspect "$build" --targets | python3 -c '
import json, sys
sys.exit(not any(t["name"] == "temporalfilters_redis_jni" for t in json.load(sys.stdin)))'; then
    rjni=$root/lib/$triplet/jni/libtemporalfilters_redis_jni.so
    [ -f "$rjni" ] || fail "missing $rjni"
    rpath=$(readelf -d "$rjni" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    # shellcheck disable=SC2016 # $ORIGIN is the loader's, literally
    case $rpath in '' | '$ORIGIN/..') ;; *) fail "$rjni has the run path '$rpath'" ;; esac
    rjni_dynamic=$(readelf -d "$rjni")
    grep -q 'NEEDED.*\[libtemporalfilters-redis\.so\.0\]' <<<"$rjni_dynamic" ||
        fail "$rjni does not need libtemporalfilters-redis.so.0"
    grep -q 'NEEDED.*redis' <<<"$jni_dynamic" && fail "$jni needs the Redis companion"
    export TF_INSTALL_REDIS=required
fi

maven=$share/maven-repo/org/temporalfilters/temporalfilters/$version
pom=$maven/temporalfilters-$version.pom
[ -f "$pom" ] || fail "missing $pom"
python3 - "$pom" "$version" <<'PY' || fail "$pom does not describe org.temporalfilters:temporalfilters:$version"
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
p = ET.parse(sys.argv[1]).getroot()
got = [p.findtext("m:" + t, namespaces=ns) for t in ("groupId", "artifactId", "version", "packaging")]
sys.exit(got != ["org.temporalfilters", "temporalfilters", sys.argv[2], "jar"])
PY
[ -L "$maven/temporalfilters-$version.jar" ] || fail "missing the link $maven/temporalfilters-$version.jar"
cmp -s "$maven/temporalfilters-$version.jar" "$jar" || fail "$maven/temporalfilters-$version.jar does not lead to $jar"
javadoc=$maven/temporalfilters-$version-javadoc.jar
[ -f "$javadoc" ] || fail "missing $javadoc"
pages=$(jar --list --file "$javadoc")
for page in index.html org/temporalfilters/RecencySketch.html org/temporalfilters/AgeBloom.html \
    org/temporalfilters/TimeBloom.html org/temporalfilters/RateLimiter.html org/temporalfilters/RedisLimiter.html; do
    grep -qx "$page" <<<"$pages" || fail "$javadoc has no $page"
done
if grep -q 'NativeLibrary\|TemporalFiltersJNI\|TemporalFiltersRedisJNI\|RedisLimiterNative' <<<"$pages"; then
    fail "$javadoc documents package-private classes"
fi

echo "Java layout ok: $(cd "$stage" && find . -path ./work -prune -o \( -path '*java*' -o -path '*jni*' -o -path '*maven-repo*' \) \( -type f -o -type l \) -print | sort | tr '\n' ' ')"
LD_LIBRARY_PATH=$stage$libdir bash "$here/run.sh" "$root"
