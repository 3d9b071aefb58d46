#!/bin/sh
# javadoc_jar.sh JAVADOC JAR OUT-javadoc.jar TITLE SOURCE.java...
#
# The API reference of the public and protected API of the given sources
# (the idiomatic layer; the package-private generated classes are given too,
# for the types they declare, and are not documented), with the JDK's
# javadoc and every doclint check on (-Xdoclint:all: broken references, bad
# HTML and syntax, a public or protected element or serialized field without
# a comment). Every warning fails the build, except doclint's "no @param" and
# "no @return": the comments describe parameters and results in their
# sentences (the project's style), not in tags. Packed into OUT-javadoc.jar
# (the Maven "javadoc" classifier's layout: index.html at the top).
set -eu
javadoc=$1
jar=$2
out=$3
title=$4
shift 4
html="$out.html"
log="$out.log"
rm -rf "$html"
mkdir -p "$html"
status=0
"$javadoc" --release 17 -encoding UTF-8 -docencoding UTF-8 -charset UTF-8 -quiet -notimestamp \
    -Xdoclint:all -Xmaxwarns 100000 -Xmaxerrs 100000 -protected -sourcepath "" \
    -windowtitle "$title" -doctitle "$title" -d "$html" "$@" >"$log" 2>&1 || status=$?
# the findings that count, each with its two lines of context
awk '/(warning|error): / && !/warning: no @(param for [A-Za-z0-9_]+|return)$/ { n = 3 } n > 0 { print; n-- }' \
    "$log" >"$log.findings"
if [ "$status" -ne 0 ] || [ -s "$log.findings" ]; then
    cat "$log.findings" >&2
    echo "javadoc_jar.sh: javadoc failed or warned (status $status); full log: $log" >&2
    exit 1
fi
[ -f "$html/index.html" ] || { echo "javadoc_jar.sh: no index.html in $html" >&2; exit 1; }
# SOURCE_DATE_EPOCH (set by dpkg-buildpackage): reproducible entry dates
date=
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    date=--date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
fi
rm -f "$out"
"$jar" --create --file "$out" ${date:+"$date"} -C "$html" .
