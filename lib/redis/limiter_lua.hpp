// The Lua script of the Redis limiter: every operation on the server is one
// call of it (EVALSHA), so each is atomic. It is the algorithm of
// lib/rate_limiter/window.hpp over a sparse state, step for step, so that
// the decisions equal the embedded limiter's.
//
// Keys (KEYS), all of one prefix P and, for a key K, of one hash tag:
//   KEYS[1] P{k:K}s   the key's window: a hash, fields
//                     l = latest (the key's clock, >= 1),
//                     s = the live entries, cmsgpack-packed (absent: none):
//                         bucketed: {j1, c1, j2, c2, ...}, absolute bucket
//                         index j = floor(t / width) and its count, j
//                         increasing, counts > 0;
//                         exact: {g1, g2, ...}, the grant times, oldest first.
//   KEYS[2] P{k:K}o   the key's override (a string: its limit), no expiry.
//   KEYS[3] P{g}      the global window: a hash, m = the global limit, l, s
//                     as a key's; no expiry. Optional (a cluster keeps it on
//                     another slot; the script then decides the key alone,
//                     and the global window's own operations below take it
//                     as KEYS[1]).
// ARGV: op, now (0: the server's TIME in ms), n, default limit, window,
// width (0: exact mode), idle expiry in ms.
// op: "acquire", "peek", "refund", "reset", "setkey" (n = the override,
// 0 removes it), and with the global window as KEYS[1] alone: "setglobal"
// (n = the global limit, 0 removes it; a new window of an empty state whose
// clock is 0, or with now = 0 (the server's clock) just past TIME: in
// bucketed mode the start of the next bucket, so that no permit a key took
// before shares a time or a bucket with the new window's grants and a
// refund never gives one back to it). The client keeps n below 2^51.
// Reply of acquire and peek: {key allowed, key remaining, key retry_at,
// global set (0/1), global allowed, global remaining, global retry_at, t,
// key was fresh (0/1)}; retry -1 means never. The client combines the two
// windows' answers with window.hpp's combine(), as the embedded limiter does.
//
// On a cluster the global window sits on another slot than the key's, so a
// decision is two calls, key first (KEYS[3] absent: the key decides alone
// and takes its permits when it allows), then the global window alone
// (KEYS[1] = P{g}):
//   "gacquire", "gpeek": now = the key's t of the first reply, ARGV[8] = 1
//       when the key allowed; the global window decides at max(t, its own
//       clock), advances (gacquire) and takes n only when both allow.
//       Reply {global set, allowed, remaining, retry_at}.
//   "undo" (on the key, KEYS[1..2], now = the key's t): gives back the n
//       permits the key's step took at t when the global window denied
//       them (those, not the newest); ARGV[8] = 1 when the key
//       was fresh before (then an emptied window is deleted, as the
//       embedded limiter never records a fresh key's denied request).
//   "refund" without KEYS[3] replies {t, j1, b1, j2, b2, ...}: what left
//       the key, for "grefund" (the global window alone, ARGV[8..] those
//       pairs) to take out of the global window as the single call would.
#ifndef TF_LIB_REDIS_LIMITER_LUA_HPP
#define TF_LIB_REDIS_LIMITER_LUA_HPP

namespace tf {
namespace redis {

constexpr const char *kLimiterScript = R"lua(
local op = ARGV[1]
local now = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local deflimit = tonumber(ARGV[4])
local window = tonumber(ARGV[5])
local width = tonumber(ARGV[6])
local expiry = tonumber(ARGV[7])
local exact = width == 0
local nb = 1
if not exact then nb = window / width end
if now == 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
end

-- a number as Redis gets it: all digits (tostring keeps only 14)
local function num(x) return string.format('%d', x) end

local function load(k)
  local v = redis.call('HMGET', k, 'l', 's', 'm')
  local st = {latest = tonumber(v[1]) or 0, items = {}, limit = tonumber(v[3]) or 0}
  if v[2] then st.items = cmsgpack.unpack(v[2]) end
  return st
end

local function save(k, st)
  if #st.items > 0 then
    redis.call('HSET', k, 'l', num(st.latest), 's', cmsgpack.pack(st.items))
  else
    redis.call('HSET', k, 'l', num(st.latest))
    redis.call('HDEL', k, 's')
  end
end

local function bucket(t) return math.floor(t / width) end

-- the permits in the window at t (t >= latest), and the index of the
-- first live entry
local function used(st, t)
  local it = st.items
  if exact then
    local gone = 0
    if t >= window then
      local cut = t - window
      while gone < #it and it[gone + 1] <= cut do gone = gone + 1 end
    end
    return #it - gone, gone + 1
  end
  local lo, u, first = bucket(t) - nb, 0, #it + 1
  for i = #it - 1, 1, -2 do
    if it[i] > lo then u = u + it[i + 1]; first = i else break end
  end
  return u, first
end

-- the decision for n permits against limit at t: {allowed, remaining, retry}
local function decide(st, t, limit)
  local u, first = used(st, t)
  if n <= limit and u <= limit - n then return {1, limit - u - n, 0} end
  local rem = 0
  if u < limit then rem = limit - u end
  if n > limit then return {0, rem, -1} end
  local need = u + n - limit
  local it = st.items
  if exact then return {0, rem, it[first + need - 1] + window} end
  local freed = 0
  for i = first, #it - 1, 2 do
    freed = freed + it[i + 1]
    if freed >= need then return {0, rem, (it[i] + nb) * width} end
  end
  return {0, rem, -1}
end

-- drops what left the window at t and moves the clock to t
local function advance(st, t)
  local u, first = used(st, t)
  if first > 1 then
    local kept = {}
    for i = first, #st.items do kept[#kept + 1] = st.items[i] end
    st.items = kept
  end
  if t > st.latest then st.latest = t end
end

-- records n permits at the clock (advanced before)
local function take(st, cnt)
  local it = st.items
  if exact then
    for i = 1, cnt do it[#it + 1] = st.latest end
    return
  end
  local j = bucket(st.latest)
  if #it > 0 and it[#it - 1] == j then it[#it] = it[#it] + cnt
  else it[#it + 1] = j; it[#it + 1] = cnt end
end

-- gives back up to cnt permits, newest first; back(j or time, count)
local function refund(st, cnt, back)
  local it = st.items
  local left = cnt
  if exact then
    while left > 0 and #it > 0 do back(it[#it], 1); it[#it] = nil; left = left - 1 end
    return
  end
  while left > 0 and #it > 0 do
    local c = it[#it]
    local b = math.min(c, left)
    back(it[#it - 1], b)
    left = left - b
    if b == c then it[#it] = nil; it[#it] = nil else it[#it] = c - b end
  end
end

-- the global window's side of a key's refund: b permits of bucket j, or
-- the newest grant at time j, if still there
local function remove(st, j, b)
  local it = st.items
  if exact then
    for i = #it, 1, -1 do
      if it[i] <= j then
        if it[i] == j then table.remove(it, i) end
        return
      end
    end
    return
  end
  for i = #it - 1, 1, -2 do
    if it[i] == j then
      local c = it[i + 1] - math.min(it[i + 1], b)
      if c == 0 then table.remove(it, i + 1); table.remove(it, i) else it[i + 1] = c end
      return
    end
  end
end

-- the global window: KEYS[3] with a key's operation, KEYS[1] with the
-- global window's own ones
local GK = KEYS[3]
if op == 'setglobal' or op == 'gacquire' or op == 'gpeek' or op == 'grefund' then GK = KEYS[1] end

local function key_limit()
  return tonumber(redis.call('GET', KEYS[2])) or deflimit
end

if op == 'acquire' or op == 'peek' then
  local st = load(KEYS[1])
  local fresh = st.latest == 0
  local t = math.max(now, st.latest)
  local kd = decide(st, t, key_limit())
  local out = {kd[1], kd[2], kd[3], 0, 0, 0, 0, t, 0}
  if fresh then out[9] = 1 end
  local granted = kd[1] == 1
  local g = nil
  if GK then
    g = load(GK)
    if g.limit > 0 then
      local gt = math.max(t, g.latest)
      local gd = decide(g, gt, g.limit)
      out[4], out[5], out[6], out[7] = 1, gd[1], gd[2], gd[3]
      granted = granted and gd[1] == 1
      if op == 'acquire' then
        advance(g, gt)
        if granted then take(g, n) end
        save(GK, g)
      end
    end
  end
  if op == 'acquire' and (granted or not fresh) then
    advance(st, t)
    if granted then take(st, n) end
    save(KEYS[1], st)
    redis.call('PEXPIRE', KEYS[1], num(expiry))
  end
  return out
elseif op == 'refund' then
  local st = load(KEYS[1])
  if st.latest == 0 then return 0 end
  local t = math.max(now, st.latest)
  advance(st, t)
  local g = nil
  if GK then
    g = load(GK)
    if g.limit > 0 then advance(g, math.max(t, g.latest)) else g = nil end
  end
  local gone = {t}
  refund(st, n, function(j, b)
    if g then remove(g, j, b) end
    gone[#gone + 1] = j
    gone[#gone + 1] = b
  end)
  save(KEYS[1], st)
  redis.call('PEXPIRE', KEYS[1], num(expiry))
  if g then save(GK, g) end
  if GK then return 1 end
  return gone
elseif op == 'gacquire' or op == 'gpeek' then
  local g = load(GK)
  if g.limit == 0 then return {0, 0, 0, 0} end
  local gt = math.max(now, g.latest)
  local gd = decide(g, gt, g.limit)
  if op == 'gacquire' then
    advance(g, gt)
    if gd[1] == 1 and ARGV[8] == '1' then take(g, n) end
    save(GK, g)
  end
  return {1, gd[1], gd[2], gd[3]}
elseif op == 'grefund' then
  local g = load(GK)
  if g.limit == 0 then return 1 end
  advance(g, math.max(now, g.latest))
  for i = 8, #ARGV - 1, 2 do remove(g, tonumber(ARGV[i]), tonumber(ARGV[i + 1])) end
  save(GK, g)
  return 1
elseif op == 'undo' then
  local st = load(KEYS[1])
  if st.latest == 0 then return 1 end
  -- exactly the permits the key's step took: n at its time t (= now
  -- here), not the newest ones, which may be another client's since
  if exact then
    for i = 1, n do remove(st, now, 1) end
  else
    remove(st, bucket(now), n)
  end
  if #st.items == 0 and ARGV[8] == '1' then
    redis.call('DEL', KEYS[1])
  else
    save(KEYS[1], st)
    redis.call('PEXPIRE', KEYS[1], num(expiry))
  end
  return 1
elseif op == 'reset' then
  redis.call('DEL', KEYS[1])
  return 1
elseif op == 'setkey' then
  if n == 0 then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], num(n)) end
  if exact then
    local st = load(KEYS[1])
    local limit = n
    if limit == 0 then limit = deflimit end
    if #st.items > limit then
      local kept = {}
      for i = #st.items - limit + 1, #st.items do kept[#kept + 1] = st.items[i] end
      st.items = kept
      save(KEYS[1], st)
    end
  end
  return 1
elseif op == 'setglobal' then
  redis.call('DEL', GK)
  if n > 0 then
    if ARGV[2] == '0' then
      -- the server's clock: the new window starts just past now (the next
      -- bucket), past every key's permits, as the embedded limiter's does
      local start = now + 1
      if not exact then start = (bucket(now) + 1) * width end
      redis.call('HSET', GK, 'm', num(n), 'l', num(start))
    else
      redis.call('HSET', GK, 'm', num(n))
    end
  end
  return 1
end
return redis.error_reply('unknown operation ' .. tostring(op))
)lua";

}  // namespace redis
}  // namespace tf

#endif
