# frozen_string_literal: true

# The temporalfilters gem: the idiomatic layer (lib/) and the SWIG extension
# temporalfilters_native (ext/temporalfilters_native), compiled at install
# time against the C library that pkg-config finds (extconf.rb); and the
# Redis limiter's extension temporalfilters_redis_native
# (ext/temporalfilters_redis_native, for require "temporalfilters/redis"),
# compiled only where pkg-config finds the companion library
# temporalfilters-redis (elsewhere the gem installs without it).
#
# Build it with scripts/build_gem.sh (or `ninja -C <build> gem`), which
# stages this file, lib/, extconf.rb and the SWIG wrapper it generates into
# one directory and runs `gem build` there: a gem built from this directory
# as it is in the checkout would lack the wrapper, so loading this file
# without it fails and says so.
#
# The version is meson.build's project version, which the script writes into
# the staged directory's VERSION file.

here = __dir__
wrapper = "ext/temporalfilters_native/temporalfilters_ruby_wrap.c"
redis_wrapper = "ext/temporalfilters_redis_native/temporalfilters_redis_ruby_wrap.c"
[wrapper, redis_wrapper].each do |w|
  next if File.exist?(File.join(here, w))

  raise "temporalfilters.gemspec: #{w} is missing; build the gem with scripts/build_gem.sh " \
        "(it generates the wrappers with SWIG and runs gem build)"
end

version_file = File.join(here, "VERSION")
unless File.exist?(version_file)
  raise "temporalfilters.gemspec: VERSION is missing; build the gem with scripts/build_gem.sh " \
        "(it writes meson.build's project version there)"
end
version = File.read(version_file).strip

Gem::Specification.new do |spec|
  spec.name = "temporalfilters"
  spec.version = version
  spec.summary = "Time-aware probabilistic data structures: recency sketch, time-limited Bloom filters, rate limiter"
  spec.description = <<~TEXT.tr("\n", " ").strip
    Ruby bindings of libtemporalfilters: TemporalFilters::RecencySketch (when was a key last seen),
    AgeBloom (was it among the last N inserts), TimeBloom (was it seen in the last span of time) and
    RateLimiter (a sliding-window limiter per key), with a portable wire format. The extension is
    compiled against the installed C library, found with pkg-config (temporalfilters.pc).
  TEXT
  spec.authors = ["the temporalfilters authors"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.0"
  spec.requirements << "libtemporalfilters and its pkg-config file temporalfilters.pc (Debian: libtemporalfilters-dev)"
  spec.requirements << "for TemporalFilters::RedisLimiter only: libtemporalfilters-redis and temporalfilters-redis.pc " \
                       "(Debian: libtemporalfilters-redis-dev), found when the gem is installed"

  spec.files = Dir.chdir(here) do
    Dir.glob("lib/**/*.rb") + ["ext/temporalfilters_native/extconf.rb", wrapper,
                               "ext/temporalfilters_redis_native/extconf.rb", redis_wrapper,
                               "README.md", "LICENSE", "VERSION"]
  end.sort
  spec.require_paths = ["lib"]
  spec.extensions = ["ext/temporalfilters_native/extconf.rb", "ext/temporalfilters_redis_native/extconf.rb"]

  # The API reference `gem install --document rdoc,ri` builds (and `ri`
  # reads): the Ruby files and this README, not the generated wrapper.
  spec.extra_rdoc_files = ["README.md"]
  spec.rdoc_options = ["--main", "README.md", "--title", "temporalfilters #{version}"]
end
