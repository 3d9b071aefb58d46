#!/bin/sh
# javac_jar.sh JAVAC JAR OUT.jar CLASSPATH SOURCE.java...
#
# Compiles the sources (with every lint warning an error) against CLASSPATH
# (":"-separated, may be empty) into OUT.jar. Used by meson.build, which lists
# every source, so that the jar is rebuilt when one changes.
set -eu
javac=$1
jar=$2
out=$3
classpath=$4
shift 4
classes="$out.classes"
rm -rf "$classes"
mkdir -p "$classes"
"$javac" --release 17 -encoding UTF-8 -Xlint:all -Werror -implicit:none \
    -classpath "$classpath" -sourcepath "" -d "$classes" "$@"
"$jar" --create --file "$out" -C "$classes" .
