# frozen_string_literal: true

# The Ruby lint: every Ruby file of the binding and the examples (the
# gemspec and extconf.rb included) parses without a warning under
# `ruby -wc`, and warning_free.rb, which runs every Ruby suite, example and benchmark smoke run under `ruby -w`, fails on a
# warning from the project's own files, and only then.

require_relative "helper"
require "open3"
require "rbconfig"
require "tmpdir"

class TestLint < Minitest::Test
  SOURCE_ROOT = File.expand_path("../../..", __dir__)
  OWN = %w[bindings/ruby examples/ruby].map { |dir| File.join(SOURCE_ROOT, dir) }.freeze
  RUNNER = File.join(__dir__, "warning_free.rb")

  # [stdout, stderr, exit status] of warning_free.rb with the folders `own`
  # and the script's arguments.
  def run_lint(own, *script)
    out, err, status = Open3.capture3(RbConfig.ruby, RUNNER, *own.flat_map { |dir| ["--own", dir] }, "--", *script)
    [out, err, status.exitstatus]
  end

  # Writes files (name => source) into a new folder and yields its path.
  def with_scripts(files)
    Dir.mktmpdir do |dir|
      files.each { |name, source| File.write(File.join(dir, name), source) }
      yield dir
    end
  end

  UNUSED = "def f\n  x = 1\nend\nputs \"ran\"\n"

  def test_every_ruby_file_parses_without_a_warning
    files = OWN.flat_map { |dir| Dir.glob(File.join(dir, "**", "*.{rb,gemspec}")) }.sort
    assert_operator files.size, :>=, 20, "the lib, the tests, the bench and the examples"
    assert_includes files, RUNNER
    assert_includes files, File.join(SOURCE_ROOT, "bindings/ruby/temporalfilters.gemspec")
    assert_includes files, File.join(SOURCE_ROOT, "bindings/ruby/ext/temporalfilters_native/extconf.rb")
    files.each do |file|
      out, err, status = Open3.capture3(RbConfig.ruby, "-wc", file)
      assert_equal [0, "Syntax OK\n", ""], [status.exitstatus, out, err], file
    end
  end

  def test_a_warning_from_an_own_file_fails
    with_scripts("warns.rb" => UNUSED) do |dir|
      out, err, status = run_lint([dir], File.join(dir, "warns.rb"))
      assert_equal 1, status
      assert_equal "ran\n", out, "the script ran, its output passed through"
      assert_match(/warns\.rb:2: warning: assigned but unused variable - x/, err)
      assert_match(/1 warning\(s\) from the project's own Ruby files/, err)
    end
  end

  def test_a_warning_from_a_file_the_script_loads_fails
    with_scripts("lib.rb" => UNUSED, "main.rb" => "require_relative \"lib\"\n") do |dir|
      _out, err, status = run_lint([dir], File.join(dir, "main.rb"))
      assert_equal 1, status
      assert_match(/lib\.rb:2: warning: /, err)
    end
  end

  def test_warnings_from_other_files_pass_through
    with_scripts("warns.rb" => UNUSED) do |dir|
      Dir.mktmpdir do |elsewhere|
        out, err, status = run_lint([elsewhere], File.join(dir, "warns.rb"))
        assert_equal [0, "ran\n"], [status, out]
        assert_match(/warns\.rb:2: warning: /, err, "shown, not counted")
        refute_match(/warning_free\.rb:/, err)
      end
    end
  end

  def test_a_clean_script_keeps_its_exit_status_and_arguments
    with_scripts("ok.rb" => "puts ARGV.join(\",\")\nexit Integer(ARGV.first)\n") do |dir|
      assert_equal ["0,a\n", "", 0], run_lint([dir], File.join(dir, "ok.rb"), "0", "a")
      assert_equal ["3\n", "", 3], run_lint([dir], File.join(dir, "ok.rb"), "3")
    end
  end

  def test_runs_the_script_with_warnings_on
    with_scripts("verbose.rb" => "puts $VERBOSE.inspect\nputs Warning[:deprecated].inspect\n") do |dir|
      assert_equal ["true\ntrue\n", "", 0], run_lint([dir], File.join(dir, "verbose.rb"))
    end
  end

  def test_usage
    _out, err, status = run_lint([], "x.rb")
    assert_equal 2, status
    assert_match(/usage/, err)
  end
end
