# frozen_string_literal: true

# The Ruby lint of the suites: runs a Ruby script under `ruby -w` (every
# warning on, deprecations included) and fails when the interpreter warns
# about any of the project's own Ruby files, those below an --own folder,
# whether the script itself or a file it loads. Warnings about other files
# (the interpreter's libraries, minitest) pass through without failing.
# Otherwise the script's exit status is the runner's; its output passes
# through unchanged.
#
#   ruby warning_free.rb --own bindings/ruby --own examples/ruby -- script.rb [args...]
#
# meson runs every Ruby test, example and benchmark smoke run this way
# (bindings/ruby/meson.build); test_lint.rb checks the runner itself.

require "open3"
require "rbconfig"

own = []
args = ARGV.dup
while args.first == "--own"
  args.shift
  own << File.expand_path(args.shift.to_s)
end
args.shift if args.first == "--"
if own.empty? || args.empty?
  warn "usage: ruby warning_free.rb --own DIR [--own DIR...] -- script.rb [args...]"
  exit 2
end

# The file a warning line names, when it is one ("<path>:<line>: warning: ...").
def warned_file(line)
  path = line[/\A(.+?):\d+: warning: /, 1]
  path && File.expand_path(path)
end

ours = []
status = Open3.popen3(RbConfig.ruby, "-w", *args) do |stdin, out, err, wait|
  stdin.close
  copier = Thread.new { IO.copy_stream(out, $stdout) }
  err.each_line do |line|
    $stderr.write(line)
    path = warned_file(line)
    ours << line if path && own.any? { |dir| path.start_with?("#{dir}/") }
  end
  copier.join
  wait.value
end

unless ours.empty?
  warn "warning_free.rb: #{ours.size} warning(s) from the project's own Ruby files (ruby -w):"
  ours.each { |line| warn "  #{line}" }
  exit 1
end
exit(status.exitstatus || 1)
