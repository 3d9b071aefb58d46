#!/usr/bin/env bash
# The installed-copy proof for Go: builds and runs the consumer module
# (go.mod, main.go here) from a fresh temporary directory outside the source
# and build trees, as a user's project: its go.mod requires
# temporalfilters.org/go/temporalfilters and replaces it with MODULE_DIR, an
# exported copy of the module (scripts/export_go_module.sh MODULE_DIR); the
# go tool runs SWIG on the module's native.swig and finds the C library
# installed in the system with pkg-config (#cgo pkg-config: temporalfilters).
# Then the same from a `go mod vendor` copy. No CGO_* variable is passed on
# (they are removed from the environment), and the go tool works offline
# (GOPROXY=off) with its cache in the temporary directory.
# When pkg-config also finds temporalfilters-redis (TF_INSTALL_REDIS=required:
# it must), the consumer's second command, redischeck (the package
# .../temporalfilters/redis, #cgo pkg-config: temporalfilters-redis), is built
# the same two ways and run against a redis-server started here on a free
# port (../redis_server.sh).
#
#   tests/install/go/run.sh MODULE_DIR
set -euo pipefail
module=$(cd "${1:?usage: run.sh MODULE_DIR (from scripts/export_go_module.sh)}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
[ -f "$module/go.mod" ] && grep -q '^module temporalfilters.org/go/temporalfilters$' "$module/go.mod" ||
    { echo "run.sh: $module is not the module temporalfilters.org/go/temporalfilters"; exit 1; }

# Nothing of the caller's cgo configuration: only pkg-config's.
for var in $(compgen -e); do
    case $var in CGO_*) unset "$var" ;; esac
done
source "$here/../redis_server.sh"
work=$(mktemp -d)
trap 'tf_install_redis_stop; chmod -R u+w "$work"; rm -rf "$work"' EXIT
export GO111MODULE=on GOENV=off GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off \
    GOCACHE=$work/cache GOPATH=$work/gopath CGO_ENABLED=1

pcdir=$(pkg-config --variable=pcfiledir temporalfilters) ||
    { echo "run.sh: pkg-config does not find temporalfilters (install libtemporalfilters-dev)"; exit 1; }
case $(cd "$pcdir" && pwd)/ in
    "$src"/*) echo "run.sh: pkg-config finds temporalfilters.pc in the source tree ($pcdir)"; exit 1 ;;
esac
version=$(pkg-config --modversion temporalfilters)
echo "pkg-config: temporalfilters $version from $pcdir"

have_redis=0
pkg-config --exists temporalfilters-redis && have_redis=1
with_redis=0
tf_install_redis_wanted "$have_redis" && with_redis=1

mkdir "$work/consumer"
cp "$here/go.mod" "$here/main.go" "$work/consumer/"
if [ "$with_redis" = 1 ]; then
    mkdir "$work/consumer/redischeck"
    cp "$here/redischeck/main.go" "$work/consumer/redischeck/"
    tf_install_redis_start "$work"
fi
cd "$work/consumer"
go mod edit -replace "temporalfilters.org/go/temporalfilters=$module"
echo "== go build (replace => $module)"
go build -o installcheck .
lib=$(ldd ./installcheck | awk '/libtemporalfilters/ { print $3 }')
echo "installcheck loads $lib"
case $lib in
    "") echo "run.sh: installcheck does not link libtemporalfilters"; exit 1 ;;
    "$src"/*) echo "run.sh: installcheck loads the library from the source tree"; exit 1 ;;
esac
./installcheck "$version"
if [ "$with_redis" = 1 ]; then
    go build -o redischeck-bin ./redischeck
    # The whole output first: under pipefail, `ldd | grep -q` fails whenever
    # grep's early exit kills ldd with SIGPIPE (CI failed on exactly that).
    redis_deps=$(ldd ./redischeck-bin)
    grep -q 'libtemporalfilters-redis\.so\.0 => /' <<<"$redis_deps" ||
        { echo "run.sh: redischeck does not load libtemporalfilters-redis"; exit 1; }
    ./redischeck-bin "$redis_port"
fi

echo "== go mod vendor, go build -mod=vendor"
go mod vendor
[ -f vendor/temporalfilters.org/go/temporalfilters/internal/native/native.swig ] ||
    { echo "run.sh: go mod vendor did not copy native.swig"; exit 1; }
go build -mod=vendor -o installcheck-vendored .
./installcheck-vendored "$version"
if [ "$with_redis" = 1 ]; then
    [ -f vendor/temporalfilters.org/go/temporalfilters/redis/internal/redisnative/redisnative.swig ] ||
        { echo "run.sh: go mod vendor did not copy redisnative.swig"; exit 1; }
    go build -mod=vendor -o redischeck-vendored ./redischeck
    ./redischeck-vendored "$redis_port"
fi
echo "run.sh: the Go consumer built and ran against the installed library (module and vendored copy)"
