#!/usr/bin/env bash
# The Ruby part of the installed-copy proof: installs the built gem with
# `gem install --local` (its extension compiles against the C library that
# pkg-config finds in the system, through the gem's extconf.rb), runs
# consumer.rb with plain `ruby` (no -I, no RUBYLIB, no RUBYOPT) from a fresh
# temporary directory outside the source and build trees, and uninstalls the
# gem again, also on failure. Exits non-zero on any failure.
#
#   tests/install/ruby/run.sh GEM      (GEM: the .gem from scripts/build_gem.sh)
#
# As root the gem goes to the system gem directory (Debian:
# /var/lib/gems/<version>), otherwise to the user's (--user-install). The
# gem builds its documentation too (--document rdoc,ri), which is checked.
# A temporalfilters gem of the same version installed beforehand is refused
# rather than replaced, so that this script only ever removes its own; runs
# of this script wait for each other (a lock file), since they share the
# gem directory. When pkg-config also finds temporalfilters-redis
# (TF_INSTALL_REDIS=required: it must), the gem compiles its Redis
# extension and redis_consumer.rb runs against a redis-server started here
# on a free port (../redis_server.sh).
set -euo pipefail
gem_file=${1:?usage: run.sh path/to/temporalfilters-VERSION.gem}
[ -f "$gem_file" ] || { echo "run.sh: no such gem: $gem_file" >&2; exit 1; }
gem_file=$(cd "$(dirname "$gem_file")" && pwd)/$(basename "$gem_file")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=$(cd "$here/../../.." && pwd)

unset RUBYLIB RUBYOPT GEM_HOME GEM_PATH
version=$(ruby -rrubygems/package -e 'print Gem::Package.new(ARGV[0]).spec.version' "$gem_file")
scope=()
gem_dir=$(ruby -e 'print Gem.dir')
if [ "$(id -u)" -ne 0 ]; then
    scope=(--user-install)
    gem_dir=$(ruby -e 'print Gem.user_dir')
fi
exec 9>"${TMPDIR:-/tmp}/temporalfilters-ruby-install-check.lock"
flock -w 900 9 || { echo "run.sh: another run.sh holds the lock" >&2; exit 1; }
if gem list -i temporalfilters -v "$version" >/dev/null; then
    echo "run.sh: temporalfilters $version is already installed; uninstall it first" >&2
    exit 1
fi

source "$here/../redis_server.sh"
work=$(mktemp -d)
installed=0
cleanup() {
    tf_install_redis_stop
    if [ "$installed" = 1 ]; then
        if gem list -i temporalfilters -v "$version" >/dev/null; then
            gem uninstall temporalfilters -v "$version" -x -I ${scope[@]+"${scope[@]}"} >/dev/null ||
                echo "run.sh: could not uninstall temporalfilters $version" >&2
        fi
        # What a failed build leaves "for inspection" (registered nowhere).
        rm -rf "$gem_dir/gems/temporalfilters-$version" "$gem_dir"/extensions/*/*/"temporalfilters-$version"
    fi
    rm -rf "$work"
}
trap cleanup EXIT

cp "$here/consumer.rb" "$here/redis_consumer.rb" "$work/"
cd "$work"
installed=1
gem install --local --document rdoc,ri ${scope[@]+"${scope[@]}"} "$gem_file"
doc=$(ruby -e 'print Gem::Specification.find_by_name("temporalfilters", ARGV[0]).doc_dir' "$version")
for d in "$doc/rdoc/index.html" "$doc/rdoc/TemporalFilters/RateLimiter.html" "$doc/ri"; do
    [ -e "$d" ] || { echo "run.sh: the gem's documentation lacks $d" >&2; exit 1; }
done
ruby consumer.rb "$tree"
have_redis=0
pkg-config --exists temporalfilters-redis && have_redis=1
if tf_install_redis_wanted "$have_redis"; then
    tf_install_redis_start "$work"
    ruby redis_consumer.rb "$tree" "$redis_port"
fi
