# frozen_string_literal: true

# click_dedup.rb - de-duplicating a click stream with the two Bloom filters
# of TemporalFilters, in Ruby.
#
# An ad server bills one click per (user, ad) per minute: a repeat of the
# same pair within 60 seconds of the click that was counted is dropped. It
# keeps no table of pairs: one TimeBloom with a span of 60,000 ms answers
# TimeBloom#add_if_absent for every click. "Absent" is always right (the
# pair was not counted within the minute, so the click counts); "present" is
# wrong with a small probability (a click that should count is dropped). So
# the server may under-bill slightly but never bills a duplicate.
#
# Beside it, an AgeBloom remembers the last 5,000 counted clicks, whatever
# their time: "was this pair among the last 5,000 billed?" for a fraud
# check that does not care about the clock.
#
# Three simulated minutes of clicks (steady traffic, a viral ad at 10x, a
# bot hammering one ad) are judged against an exact Hash of the last
# counted time of every pair; halfway the server saves both filters with
# #serialize and loads them back. Exits non-zero if a duplicate was counted
# or a billed click was forgotten within the window.
#
# Run from a build directory (see bindings/ruby/meson.build):
#   ruby -I<src>/bindings/ruby/lib -I<build>/bindings/ruby <src>/examples/ruby/click_dedup.rb

require "temporalfilters"

SPAN_MS = 60_000
ERROR_RATE = 0.01
RECENT = 5_000
T0 = 1_700_000_000_000 # ms since the Unix epoch
DURATION = 3 * SPAN_MS

minute = TemporalFilters::TimeBloom.for_target(6_000, ERROR_RATE, SPAN_MS)
recent = TemporalFilters::AgeBloom.for_target(RECENT, ERROR_RATE)
puts "TimeBloom: k=#{minute.k} l=#{minute.l} span=#{minute.span} ms, #{minute.memory} bytes"
puts "AgeBloom:  k=#{recent.k} l=#{recent.l} capacity=#{recent.capacity}, #{recent.memory} bytes"

rng = Random.new(7)
last_counted = {}  # the exact answer: pair => time of its last counted click
billed = []        # pairs in the order they were billed
counted = dropped_dups = dropped_wrongly = 0
now = T0
restored = false

while now < T0 + DURATION
  t = now - T0
  # traffic: 100 clicks/s; a viral ad (10x) in the second minute; a bot
  per_second = t.between?(SPAN_MS, 2 * SPAN_MS) ? 1_000 : 100
  now += [(-Math.log(1.0 - rng.rand) * 1000.0 / per_second).round, 0].max
  pair = if rng.rand < 0.02 then "bot:ad-7"
         elsif t.between?(SPAN_MS, 2 * SPAN_MS) && rng.rand < 0.9 then "user-#{rng.rand(20_000)}:ad-viral"
         else "user-#{rng.rand(50_000)}:ad-#{rng.rand(200)}"
         end

  duplicate = (last = last_counted[pair]) && now - last <= SPAN_MS
  if minute.add_if_absent(pair, now)
    duplicate ? dropped_dups += 1 : dropped_wrongly += 1
  else
    abort "a duplicate of #{pair} was counted at #{now}" if duplicate

    counted += 1
    last_counted[pair] = now
    recent.add(pair)
    billed << pair
  end

  next if restored || t < DURATION / 2

  # a restart: the state survives through the wire format
  minute = TemporalFilters::TimeBloom.deserialize(minute.serialize)
  recent = TemporalFilters::AgeBloom.deserialize(recent.serialize)
  restored = true
end

# every pair among the last RECENT billed is remembered by the AgeBloom
missing = billed.last(RECENT).reject { |pair| recent.contains?(pair) }
abort "#{missing.size} of the last #{RECENT} billed pairs forgotten" unless missing.empty?
# and every pair counted within the last minute by the TimeBloom
within = last_counted.select { |_, t| now - t <= SPAN_MS }.keys
abort "a pair counted within the minute was forgotten" unless within.all? { |pair| minute.contains?(pair, now) }

stats = minute.stats(now)
puts format("%d clicks: %d counted, %d duplicates dropped, %d dropped by a false positive (%.3f%%)",
            counted + dropped_dups + dropped_wrongly, counted, dropped_dups, dropped_wrongly,
            100.0 * dropped_wrongly / [counted + dropped_wrongly, 1].max)
puts format("TimeBloom now: %d slices, %d bits, %.1f bits per click within the span, fpr %.4f",
            stats.slices, stats.bits, stats.bits_per_element, stats.fpr_now)
puts "no duplicate counted; the last #{RECENT} billed pairs and the last minute's all remembered"
