#!/usr/bin/env bash
# Builds the temporalfilters gem: stages bindings/ruby's gemspec, lib/,
# the two extconf.rb and README with the LICENSE into OUTDIR/temporalfilters-<version>/,
# generates the SWIG wrappers there (the same swig commands as the Meson
# build's extensions: bindings/temporalfilters.i + bindings/ruby/temporalfilters_ruby.i,
# and with -DTF_BINDING_REDIS the Redis limiter's over bindings/temporalfilters_redis.i,
# which the gem compiles where pkg-config finds temporalfilters-redis),
# writes VERSION (meson.build's project version, the only place it is kept),
# and runs `gem build`, failing on any warning of RubyGems' spec validation
# but one: the project has no public home page yet, so the gemspec has no
# homepage (give it one, and drop the allowance below, when it does).
#
#   scripts/build_gem.sh [OUTDIR]     (default: build/gem; `ninja -C BUILD gem` uses BUILD/gem)
#
# Prints the path of OUTDIR/temporalfilters-<version>.gem on its last line.
# Needs swig, ruby (with gem) and meson; no build directory, no network.
# The staged directory stays: it is an unpacked gem, which a Gemfile can use
# with `gem "temporalfilters", path: "OUTDIR/temporalfilters-<version>"`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build/gem}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$root/bindings/ruby

version=$(meson introspect --projectinfo "$root/meson.build" 2>/dev/null |
    ruby -rjson -e 'print JSON.parse($stdin.read).fetch("version")')
[ -n "$version" ] || { echo "build_gem.sh: no project version in $root/meson.build" >&2; exit 1; }

stage=$out/temporalfilters-$version
ext=$stage/ext/temporalfilters_native
redis_ext=$stage/ext/temporalfilters_redis_native
rm -rf "$stage"
mkdir -p "$ext" "$redis_ext"
cp -R "$src/lib" "$stage/lib"
cp "$src/temporalfilters.gemspec" "$src/README.md" "$root/LICENSE" "$stage/"
cp "$src/ext/temporalfilters_native/extconf.rb" "$ext/"
cp "$src/ext/temporalfilters_redis_native/extconf.rb" "$redis_ext/"
printf '%s\n' "$version" >"$stage/VERSION"
swig -ruby -initname temporalfilters_native -I"$root/bindings" -I"$root/include" \
    -o "$ext/temporalfilters_ruby_wrap.c" "$src/temporalfilters_ruby.i"
swig -ruby -DTF_BINDING_REDIS -initname temporalfilters_redis_native -I"$root/bindings" -I"$root/include" \
    -o "$redis_ext/temporalfilters_redis_ruby_wrap.c" "$src/temporalfilters_ruby.i"

gem=$out/temporalfilters-$version.gem
rm -f "$gem"
log=$(cd "$stage" && gem build temporalfilters.gemspec --output "$gem" 2>&1) || { echo "$log" >&2; exit 1; }
echo "$log"
warnings=$(echo "$log" | grep '^WARNING:' | grep -v -e 'no homepage specified' -e 'See https://guides.rubygems.org/' || true)
if [ -n "$warnings" ]; then
    echo "build_gem.sh: gem build warned:" >&2
    echo "$warnings" >&2
    exit 1
fi
echo "$gem"
