#!/bin/sh
# javac_jar.sh [--manifest MANIFEST] [--link LINK.jar] JAVAC JAR OUT.jar CLASSPATH FLAGS SOURCE.java...
#
# Compiles the sources against CLASSPATH (":"-separated, may be empty) into
# OUT.jar, with every lint warning an error (-Xlint:all -Werror) and the extra
# javac FLAGS (space-separated, may be empty). Used by meson.build, which lists
# every source, so that the jar is rebuilt when one changes.
#   --manifest MANIFEST  adds MANIFEST's attributes to the jar's manifest
#   --link LINK.jar      also makes LINK.jar, a symbolic link to OUT.jar in
#                        the same directory (the unversioned name)
set -eu
manifest=
link=
while :; do
    case $1 in
    --manifest) manifest=$2; shift 2 ;;
    --link) link=$2; shift 2 ;;
    *) break ;;
    esac
done
javac=$1
jar=$2
out=$3
classpath=$4
flags=$5
shift 5
classes="$out.classes"
rm -rf "$classes"
mkdir -p "$classes"
# $flags is split on spaces on purpose
# shellcheck disable=SC2086
"$javac" --release 17 -encoding UTF-8 -Xlint:all -Werror -implicit:none $flags \
    -classpath "$classpath" -sourcepath "" -d "$classes" "$@"
# SOURCE_DATE_EPOCH (set by dpkg-buildpackage): every entry gets that date,
# so the jar is the same bytes in every build of the same sources.
date=
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    date=--date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
fi
rm -f "$out"
if [ -n "$manifest" ]; then
    "$jar" --create --file "$out" ${date:+"$date"} --manifest "$manifest" -C "$classes" .
else
    "$jar" --create --file "$out" ${date:+"$date"} -C "$classes" .
fi
if [ -n "$link" ]; then
    [ "$(dirname "$link")" = "$(dirname "$out")" ] || { echo "javac_jar.sh: $link is not beside $out" >&2; exit 1; }
    ln -sfn "$(basename "$out")" "$link"
fi
