# frozen_string_literal: true

# A program of a user's own project: `require "temporalfilters"` and
# nothing else (run.sh runs it with plain `ruby` from a fresh directory,
# after `gem install --local` of the built gem). It uses every structure and
# one blob round trip, checks that everything came from the installed gem
# and the system's C library (nothing below TREE, the checkout given as the
# argument), and exits non-zero on any failure.
#
#   ruby consumer.rb TREE

require "temporalfilters"

tree = File.expand_path(ARGV.fetch(0))
failures = []
check = ->(what, ok) { failures << what unless ok }

# Where everything came from: the gem's lib and extension, the system's C
# library, nothing of the checkout or its build directories.
spec = Gem.loaded_specs["temporalfilters"]
check.call("the temporalfilters gem is activated", !spec.nil?)
ours = $LOADED_FEATURES.grep(/temporalfilters/)
check.call("loaded from the gem: #{ours}", spec && ours.all? { |f| f.start_with?("#{spec.full_gem_path}/") || f.start_with?("#{spec.extension_dir}/") })
check.call("the gem's version is the library's", spec && spec.version.to_s == TemporalFilters::VERSION)
maps = File.readlines("/proc/self/maps").map { |l| l.split[5] }.compact.uniq
clib = maps.grep(%r{/libtemporalfilters\.so})
check.call("libtemporalfilters mapped once, outside the tree: #{clib}", clib.size == 1 && !clib[0].start_with?("#{tree}/"))
check.call("nothing mapped from the tree", maps.none? { |m| m.start_with?("#{tree}/") })

now = 1_700_000_000_000

sketch = TemporalFilters::RecencySketch.for_target(10_000, 0.01, seed: 7)
sketch.update("user-1", now)
sketch.update_batch(%w[user-2 user-3], [now + 1, now + 2])
check.call("sketch query", sketch.query("user-1") >= now)
check.call("sketch pace", !sketch.pace("user-1", now + 10, 1_000).granted?)

seen = TemporalFilters::AgeBloom.for_target(1_000, 0.01)
check.call("age bloom add_if_absent", seen.add_if_absent("click-1") == false)
check.call("age bloom contains?", seen.contains?("click-1"))

recent = TemporalFilters::TimeBloom.for_target(1_000, 0.01, 60_000)
recent.add("ip-1", now)
check.call("time bloom within the span", recent.contains?("ip-1", now + 59_000))
check.call("time bloom after the span", !recent.contains?("ip-1", now + 200_000))

limiter = TemporalFilters::RateLimiter.new(2, 60_000, 1_000)
decisions = limiter.acquire_batch(%w[client client client], [now, now + 1, now + 2])
check.call("limiter batch", decisions.map(&:allowed?) == [true, true, false])
check.call("limiter retry_at", decisions.last.retry_at > now + 2)

dedup = TemporalFilters::RotatingCuckoo.new(table_slots: 64, ttl: 60_000)
check.call("cuckoo add_if_absent", dedup.add_if_absent("event-1", now) == false)
check.call("cuckoo batch", dedup.add_if_absent_batch(%w[event-1 event-2 event-2], now + 1) == [true, false, true])
dedup_copy = TemporalFilters::RotatingCuckoo.deserialize(dedup.serialize)
check.call("cuckoo round trip", dedup_copy.serialize == dedup.serialize && dedup_copy.contains?("event-2", now + 1))
recent = TemporalFilters::RecencyWindow.new(window: 100, mode: :exact)
check.call("window new key", recent.insert_report("object-1").nil?)
recent.insert("object-2")
check.call("window recency", recent.insert_report("object-1") == 1)
check.call("window batch", recent.insert_report_batch(%w[object-2 object-3]) == [1, nil])
recent_copy = TemporalFilters::RecencyWindow.deserialize(recent.serialize)
check.call("window round trip", recent_copy.serialize == recent.serialize && recent_copy.query("object-1") == 2)

# The blob round trip: the same state, the same bytes.
blob = sketch.serialize
copy = TemporalFilters::RecencySketch.deserialize(blob)
check.call("round trip answers", copy.query("user-3") == sketch.query("user-3"))
check.call("round trip bytes", copy.serialize == blob)
begin
  TemporalFilters::RecencySketch.deserialize(blob.byteslice(0, 10))
  check.call("a truncated blob is refused", false)
rescue TemporalFilters::BadBlobError
  nil
end

if failures.empty?
  puts "ruby consumer ok: temporalfilters #{spec.version} from #{spec.full_gem_path}, " \
       "libtemporalfilters #{TemporalFilters::VERSION} from #{clib[0]}"
else
  failures.each { |f| warn "ruby consumer FAILED: #{f}" }
  exit 1
end
