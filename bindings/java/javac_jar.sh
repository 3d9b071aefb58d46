#!/bin/sh
# javac_jar.sh JAVAC JAR OUT.jar CLASSPATH FLAGS SOURCE.java...
#
# Compiles the sources against CLASSPATH (":"-separated, may be empty) into
# OUT.jar, with every lint warning an error (-Xlint:all -Werror) and the extra
# javac FLAGS (space-separated, may be empty). Used by meson.build, which lists
# every source, so that the jar is rebuilt when one changes.
set -eu
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
"$jar" --create --file "$out" -C "$classes" .
