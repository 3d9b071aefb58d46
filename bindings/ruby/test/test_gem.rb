# frozen_string_literal: true

# The gem: scripts/build_gem.sh builds it (gem build, no RubyGems warning but
# the missing homepage), it holds what `gem install` needs offline (the SWIG
# wrapper, the same one this build compiled, extconf.rb, every lib file, the
# README, the LICENSE, the VERSION), its version is meson.build's, and
# `gem install --local` compiles it against the C library pkg-config names
# (here: this build's, through a .pc file written for the test) into an
# extension that `require "temporalfilters"` loads from the gem alone. With
# no temporalfilters.pc, extconf.rb stops with a message saying what to
# install. The Redis limiter's extension (temporalfilters_redis_native) is
# compiled where pkg-config also names temporalfilters-redis (then
# `require "temporalfilters/redis"` works from the gem), and skipped where it
# does not, the gem still installing (then that require fails with a
# LoadError naming the Debian package). tests/install/ruby/run.sh does the
# same against the copy installed in the system.

require_relative "helper"
require "fileutils"
require "open3"
require "rbconfig"
require "rubygems/package"
require "tmpdir"

class TestGem < Minitest::Test
  SOURCE_ROOT = File.expand_path("../../..", __dir__)
  BINDING = File.join(SOURCE_ROOT, "bindings", "ruby")
  BUILD_ROOT = ENV.fetch("TF_BUILD_ROOT")
  VERSION = ENV.fetch("TF_PROJECT_VERSION")
  EXT = "ext/temporalfilters_native"
  WRAPPER = "#{EXT}/temporalfilters_ruby_wrap.c"
  REDIS_EXT = "ext/temporalfilters_redis_native"
  REDIS_WRAPPER = "#{REDIS_EXT}/temporalfilters_redis_ruby_wrap.c"
  # Whether this build has the companion library (the redis option).
  REDIS_BUILT = ENV.fetch("TF_REDIS_ENABLED") == "true"

  # The environment of a child process: the binding's own paths and the
  # sanitizer's preload (gcc and extconf.rb run uninstrumented) removed.
  CLEAN_ENV = { "RUBYLIB" => nil, "RUBYOPT" => nil, "LD_PRELOAD" => nil }.freeze

  # One build of the gem for every test of this file: [the .gem's path, the
  # output of build_gem.sh, its exit status, the output directory].
  def self.built
    @built ||= begin
      out = Dir.mktmpdir("tf-gem-")
      Minitest.after_run { FileUtils.rm_rf(out) }
      log, status = Open3.capture2e(CLEAN_ENV, "bash", File.join(SOURCE_ROOT, "scripts", "build_gem.sh"), out)
      [log.lines.last.to_s.chomp, log, status.exitstatus, out]
    end
  end

  def gem_path
    path, log, status, = self.class.built
    assert_equal 0, status, log
    assert_equal File.join(self.class.built[3], "temporalfilters-#{VERSION}.gem"), path, log
    path
  end

  # name => contents of the files in the gem.
  def gem_files
    files = {}
    Gem::Package.new(gem_path).contents.each { |name| files[name] = nil }
    File.open(gem_path, "rb") do |io|
      Gem::Package::TarReader.new(io).each do |entry|
        next unless entry.full_name == "data.tar.gz"

        Zlib::GzipReader.wrap(entry) do |gz|
          Gem::Package::TarReader.new(gz).each { |file| files[file.full_name] = file.read }
        end
      end
    end
    files
  end

  def lib_files
    Dir.chdir(BINDING) { Dir.glob("lib/**/*.rb") }.sort
  end

  def test_build_warns_of_nothing_but_the_missing_homepage
    _path, log, status, = self.class.built
    assert_equal 0, status, log
    warnings = log.lines.grep(/^WARNING:/).reject { |l| l.include?("no homepage") || l.include?("See https://") }
    assert_empty warnings, log
    assert_match(/Successfully built RubyGem/, log)
  end

  def test_spec
    spec = Gem::Package.new(gem_path).spec
    assert_equal "temporalfilters", spec.name
    assert_equal Gem::Version.new(VERSION), spec.version, "meson.build's project version"
    assert_equal ["lib"], spec.raw_require_paths
    assert_equal ["#{EXT}/extconf.rb", "#{REDIS_EXT}/extconf.rb"], spec.extensions
    assert_equal "MIT", spec.license
    assert_equal [], spec.dependencies, "nothing from rubygems.org"
    assert_includes spec.extra_rdoc_files, "README.md"
  end

  def test_holds_what_an_offline_install_needs
    files = gem_files
    assert_operator lib_files.size, :>=, 9
    expected = lib_files + ["#{EXT}/extconf.rb", WRAPPER, "#{REDIS_EXT}/extconf.rb", REDIS_WRAPPER, "README.md",
                            "LICENSE", "VERSION"]
    assert_equal expected.sort, files.keys.sort
    lib_files.each { |f| assert_equal File.binread(File.join(BINDING, f)), files[f], f }
    assert_equal File.binread(File.join(BINDING, EXT, "extconf.rb")), files["#{EXT}/extconf.rb"]
    assert_equal File.binread(File.join(BINDING, REDIS_EXT, "extconf.rb")), files["#{REDIS_EXT}/extconf.rb"]
    assert_equal File.binread(File.join(BINDING, "README.md")), files["README.md"]
    assert_equal File.binread(File.join(SOURCE_ROOT, "LICENSE")), files["LICENSE"]
    assert_equal "#{VERSION}\n", files["VERSION"]
  end

  def test_the_wrapper_is_the_one_this_build_compiled
    wrapper = gem_files.fetch(WRAPPER)
    assert_includes wrapper, "Init_temporalfilters_native"
    assert_equal File.binread(File.join(BUILD_ROOT, "bindings", "ruby", "temporalfilters_ruby_wrap.c")), wrapper,
                 "scripts/build_gem.sh and bindings/ruby/meson.build run the same swig command"
  end

  def test_the_redis_wrapper_is_the_one_this_build_compiled
    wrapper = gem_files.fetch(REDIS_WRAPPER)
    assert_includes wrapper, "Init_temporalfilters_redis_native"
    assert_includes wrapper, "tf_redis_limiter_new"
    # (a build without the redis option compiles no Redis wrapper to compare)
    return unless REDIS_BUILT

    assert_equal File.binread(File.join(BUILD_ROOT, "bindings", "ruby", "temporalfilters_redis_ruby_wrap.c")), wrapper,
                 "scripts/build_gem.sh and bindings/ruby/meson.build run the same swig command"
  end

  def test_the_staged_gemspec_loads_without_a_warning
    staged = File.join(self.class.built[3], "temporalfilters-#{VERSION}", "temporalfilters.gemspec")
    out, err, status = Open3.capture3(CLEAN_ENV, RbConfig.ruby, "-w", "-e",
                                      "s = Gem::Specification.load(ARGV[0]) or exit 1; print s.full_name", staged)
    assert_equal ["temporalfilters-#{VERSION}", "", 0], [out, err, status.exitstatus]
  end

  def test_the_checkout_gemspec_says_how_to_build_the_gem
    Dir.mktmpdir do |dir|
      log, status = Open3.capture2e(CLEAN_ENV, "gem", "build", "-C", BINDING, "temporalfilters.gemspec",
                                    "--output", File.join(dir, "x.gem"))
      refute status.success?, log
      assert_match(%r{temporalfilters_ruby_wrap\.c is missing; build the gem with scripts/build_gem\.sh}, log)
      assert_empty Dir.children(dir)
    end
  end

  # gem install --local into a fresh directory, pkg-config reading only
  # `pc_dir`: [output, success].
  def gem_install(gem_home, pc_dir)
    env = CLEAN_ENV.merge("PKG_CONFIG_PATH" => pc_dir, "PKG_CONFIG_LIBDIR" => pc_dir)
    args = ["gem", "install", "--local", "--no-document", "--install-dir", gem_home, gem_path]
    sanitize = ENV.fetch("TF_SANITIZE", "none")
    # A sanitized library needs its runtime in every link against it.
    args += ["--", "--with-ldflags=-fsanitize=#{sanitize}"] unless sanitize == "none"
    log, status = Open3.capture2e(env, *args)
    [log, status.success?]
  end

  # A pkg-config directory in dir naming this build's library, and its
  # companion's when `redis` (and the build has it): the directory.
  def pc_dir(dir, redis:)
    pc = File.join(dir, "pc")
    FileUtils.mkdir_p(pc)
    File.write(File.join(pc, "temporalfilters.pc"), <<~PC)
      Name: temporalfilters
      Description: this build's library, for test_gem.rb
      Version: #{VERSION}
      Libs: -L#{BUILD_ROOT}/lib -ltemporalfilters
      Cflags: -I#{SOURCE_ROOT}/include -I#{BUILD_ROOT}/include
    PC
    if redis && REDIS_BUILT
      File.write(File.join(pc, "temporalfilters-redis.pc"), <<~PC)
        Name: temporalfilters-redis
        Description: this build's companion library, for test_gem.rb
        Version: #{VERSION}
        Requires: temporalfilters
        Libs: -L#{BUILD_ROOT}/lib/redis -ltemporalfilters-redis
      PC
    end
    pc
  end

  # The environment that runs Ruby against the gems in `gems` and this
  # build's libraries.
  def gem_env(gems)
    libs = [File.join(BUILD_ROOT, "lib"), File.join(BUILD_ROOT, "lib", "redis")].join(":")
    env = CLEAN_ENV.merge("GEM_HOME" => gems, "GEM_PATH" => gems, "LD_LIBRARY_PATH" => libs)
    env.delete("LD_PRELOAD") # keep the suite's own (the sanitizer runtime) for the run
    env
  end

  def test_installs_against_the_library_pkg_config_names
    Dir.mktmpdir do |dir|
      pc = pc_dir(dir, redis: true)
      gems = File.join(dir, "gems")
      log, ok = gem_install(gems, pc)
      assert ok, log
      script = <<~RUBY
        require "temporalfilters"
        spec = Gem.loaded_specs.fetch("temporalfilters")
        native = $LOADED_FEATURES.grep(/temporalfilters_native\\.so\\z/)
        raise "native from \#{native}" unless native.size == 1 && native[0].start_with?(spec.full_gem_path)
        raise "lib from \#{$LOADED_FEATURES}" unless $LOADED_FEATURES.include?(File.join(spec.full_gem_path, "lib", "temporalfilters.rb"))
        sketch = TemporalFilters::RecencySketch.for_target(100, 0.01)
        sketch.update("k", 42)
        copy = TemporalFilters::RecencySketch.deserialize(sketch.serialize)
        print [TemporalFilters::VERSION, copy.query("k")].join(" ")
      RUBY
      out, err, status = Open3.capture3(gem_env(gems), RbConfig.ruby, "-w", "-e", script, chdir: dir)
      assert_equal ["#{VERSION} 42", "", 0], [out, err, status.exitstatus]
      return unless REDIS_BUILT

      # the Redis limiter's extension, from the gem: a limiter on a port
      # where no server listens fails to connect, as the C call does
      script = <<~RUBY
        require "socket"
        require "temporalfilters/redis"
        spec = Gem.loaded_specs.fetch("temporalfilters")
        native = $LOADED_FEATURES.grep(/temporalfilters_redis_native\\.so\\z/)
        raise "redis native from \#{native}" unless native.size == 1 && native[0].start_with?(spec.full_gem_path)
        port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
        begin
          TemporalFilters::RedisLimiter.new(5, 1000, 100, port: port, connect_timeout_ms: 200)
        rescue TemporalFilters::UnavailableError => e
          print e.status
        end
      RUBY
      out, err, status = Open3.capture3(gem_env(gems), RbConfig.ruby, "-w", "-e", script, chdir: dir)
      assert_equal ["-15", "", 0], [out, err, status.exitstatus]
    end
  end

  # Where pkg-config does not know temporalfilters-redis, the gem installs
  # without the Redis limiter's extension (saying so), the core works, and
  # require "temporalfilters/redis" fails with a LoadError naming the
  # Debian package.
  def test_without_the_companion_the_gem_installs_and_the_redis_require_says_what_to_install
    Dir.mktmpdir do |dir|
      gems = File.join(dir, "gems")
      log, ok = gem_install(gems, pc_dir(dir, redis: false))
      assert ok, log
      script = <<~RUBY
        require "temporalfilters"
        print TemporalFilters::VERSION
        begin
          require "temporalfilters/redis"
        rescue LoadError => e
          print " LoadError: ", e.message
        end
      RUBY
      out, err, status = Open3.capture3(gem_env(gems), RbConfig.ruby, "-w", "-e", script, chdir: dir)
      assert_equal ["", 0], [err, status.exitstatus]
      assert_match(/\A#{Regexp.escape(VERSION)} LoadError: TemporalFilters::RedisLimiter needs the extension /, out)
      assert_match(/libtemporalfilters-redis-dev/, out)
      assert_match(/temporalfilters-redis\.pc/, out)
      mkmf_out = Dir.glob(File.join(gems, "extensions", "**", "gem_make.out")).map { |f| File.read(f) }.join
      assert_match(/the Redis limiter .* is not built: pkg-config does not know the package temporalfilters-redis/,
                   mkmf_out)
    end
  end

  def test_without_the_library_extconf_says_what_to_install
    Dir.mktmpdir do |dir|
      empty = File.join(dir, "pc")
      FileUtils.mkdir_p(empty)
      log, ok = gem_install(File.join(dir, "gems"), empty)
      refute ok, log
      assert_match(/pkg-config does not know the package temporalfilters/, log)
      assert_match(/libtemporalfilters-dev/, log)
      assert_match(/PKG_CONFIG_PATH/, log)
    end
  end
end
