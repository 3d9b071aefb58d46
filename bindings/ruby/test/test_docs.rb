# frozen_string_literal: true

# The API reference (rdoc): every class, module, method, constant and
# attribute of the Ruby files is documented, and rdoc reads them and the
# README without a warning. The same files make the HTML reference Meson
# installs and the one `gem install --document rdoc,ri` builds.

require_relative "helper"
require "open3"

class TestDocs < Minitest::Test
  BINDING = File.expand_path("..", __dir__)
  LIB_FILES = Dir.chdir(BINDING) { Dir.glob("lib/**/*.rb") }.sort.freeze

  # [stdout, stderr, exit status] of rdoc's coverage report (-C) over lib/
  # and README.md, writing nothing.
  def coverage
    out, err, status = Open3.capture3("rdoc", "-C", "--dry-run", "--root", BINDING,
                                      File.join(BINDING, "lib"), File.join(BINDING, "README.md"))
    [out, err, status.exitstatus]
  end

  def test_everything_is_documented
    out, err, status = coverage
    assert_equal [0, ""], [status, err], out
    assert_match(/^\s*Files:\s+#{LIB_FILES.size + 1}$/, out, "the lib files and the README")
    classes = out[/^\s*Classes:\s+(\d+)/, 1].to_i
    assert_operator classes, :>=, 10, "the six structures, the error classes, their structs"
    assert_match(/^\s*100\.00% documented$/, out, "undocumented:\n#{out}")
  end

  # The reference Meson builds and installs (target ruby_rdoc) lists its
  # inputs: every lib file, so that a new one is not left out.
  def test_the_meson_reference_lists_every_lib_file
    listed = File.read(File.join(BINDING, "meson.build")).scan(%r{'(lib/[^']+\.rb)'}).flatten.sort
    assert_operator LIB_FILES.size, :>=, 9
    assert_equal LIB_FILES, listed
  end
end
