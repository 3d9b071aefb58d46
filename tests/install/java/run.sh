#!/usr/bin/env bash
# run.sh [PREFIX]: builds and runs Consumer.java against the installed Java
# binding, as a user's own project would: from a fresh temporary directory,
# with javac and java and nothing on the class path but the installed jar
# PREFIX/share/java/temporalfilters.jar (PREFIX: /usr, where the Debian
# packages install it). No -Djava.library.path, no property: the jar's loader
# finds the JNI library itself (PREFIX/lib/<triplet>/jni, found from the
# jar's location, or /usr/lib/<triplet>/jni). The JVM logs the libraries it
# loads (-Xlog:library), and the JNI library must be the one under PREFIX.
# Then, when PREFIX has the Redis limiter's JNI library
# (libtemporalfilters_redis_jni.so; TF_INSTALL_REDIS=required: it must),
# RedisConsumer.java the same way against a redis-server started here on a
# free port (../redis_server.sh), that library also loaded from PREFIX.
# Exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:-/usr}
jar=$prefix/share/java/temporalfilters.jar
[ -f "$jar" ] || { echo "run.sh: no $jar" >&2; exit 1; }
source "$here/../redis_server.sh"
work=$(mktemp -d)
trap 'tf_install_redis_stop; rm -rf "$work"' EXIT
cp "$here/Consumer.java" "$here/RedisConsumer.java" "$work/"
cd "$work"
# nothing from the caller's environment reaches the compiler or the JVM
unset CLASSPATH JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS
javac --release 17 -Xlint:all -Werror -cp "$jar" -d classes Consumer.java
java -Xlog:library=info:file=library.log -cp "$jar:classes" Consumer
loaded=$(sed -n 's/.*Loaded library \(.*libtemporalfilters_jni\.so\), handle.*/\1/p' library.log)
echo "JNI library: $loaded"
case $loaded in
"$(cd "$prefix" && pwd -P)"/lib/*/jni/libtemporalfilters_jni.so | "$(cd "$prefix" && pwd -P)"/lib/jni/libtemporalfilters_jni.so) ;;
*) echo "run.sh: the JNI library did not come from $prefix/lib/.../jni" >&2; exit 1 ;;
esac
grep -q 'libtemporalfilters_redis_jni' library.log &&
    { echo "run.sh: the core's classes loaded the Redis limiter's JNI library" >&2; exit 1; }

have_redis=0
for f in "$prefix"/lib/*/jni/libtemporalfilters_redis_jni.so "$prefix"/lib/jni/libtemporalfilters_redis_jni.so; do
    [ -f "$f" ] && have_redis=1
done
if tf_install_redis_wanted "$have_redis"; then
    tf_install_redis_start "$work"
    javac --release 17 -Xlint:all -Werror -cp "$jar" -d classes RedisConsumer.java
    java -Xlog:library=info:file=redis-library.log -cp "$jar:classes" RedisConsumer "$redis_port"
    loaded=$(sed -n 's/.*Loaded library \(.*libtemporalfilters_redis_jni\.so\), handle.*/\1/p' redis-library.log)
    echo "Redis JNI library: $loaded"
    case $loaded in
    "$(cd "$prefix" && pwd -P)"/lib/*/jni/libtemporalfilters_redis_jni.so | "$(cd "$prefix" && pwd -P)"/lib/jni/libtemporalfilters_redis_jni.so) ;;
    *) echo "run.sh: the Redis JNI library did not come from $prefix/lib/.../jni" >&2; exit 1 ;;
    esac
fi
