// The Lua script of the sketch share (temporalfilters/redis.h,
// tf_redis_sketch_share): every call on the server is one EVALSHA of it,
// so each is atomic.
//
// Keys, of one prefix P and one hash tag (one cluster slot) per shared
// name N:
//   KEYS[1] P{s:N}b  a hash: publisher id -> its sketch's blob.
//   KEYS[2] P{s:N}t  a sorted set: publisher id -> the server time (ms) at
//                    which its entry expires; +inf: never. An entry with no
//                    score never expires either.
// ARGV[1] is the operation:
//   "publish" id blob ttl_ms   stores the entry, sets its expiry (now + ttl,
//                              ttl 0: never) and keeps both keys alive at
//                              least as long (PERSIST when ttl is 0, else
//                              PEXPIRE when the keys are new or would
//                              expire sooner). Reply: 1.
//   "pull" max_bytes           removes the entries whose time has come, then
//                              returns {expired, id1, v1, id2, v2, ...}
//                              where v is the blob, or its length (an
//                              integer) when longer than max_bytes (it is
//                              not sent).
//   "remove" id                removes the entry. Reply: 1.
// The time is the server's (TIME), so that every client agrees on expiry.
#ifndef TF_LIB_REDIS_SHARE_LUA_HPP
#define TF_LIB_REDIS_SHARE_LUA_HPP

namespace tf {
namespace redis {

constexpr const char *kShareScript = R"lua(
local b, t = KEYS[1], KEYS[2]
local op = ARGV[1]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
if op == 'publish' then
  local ttl = tonumber(ARGV[4])
  local had_b, had_t = redis.call('EXISTS', b), redis.call('EXISTS', t)
  redis.call('HSET', b, ARGV[2], ARGV[3])
  if ttl == 0 then
    redis.call('ZADD', t, '+inf', ARGV[2])
  else
    redis.call('ZADD', t, string.format('%d', now + ttl), ARGV[2])
  end
  for i, k in ipairs({b, t}) do
    local had = (i == 1) and had_b or had_t
    if ttl == 0 then
      redis.call('PERSIST', k)
    else
      local left = redis.call('PTTL', k)
      if had == 0 or (left >= 0 and left < ttl) then redis.call('PEXPIRE', k, ttl) end
    end
  end
  return 1
elseif op == 'pull' then
  local max = tonumber(ARGV[2])
  local gone = redis.call('ZRANGEBYSCORE', t, '-inf', '(' .. string.format('%d', now))
  for _, id in ipairs(gone) do
    redis.call('HDEL', b, id)
    redis.call('ZREM', t, id)
  end
  local out = {#gone}
  for _, id in ipairs(redis.call('HKEYS', b)) do
    out[#out + 1] = id
    local len = redis.call('HSTRLEN', b, id)
    if len > max then
      out[#out + 1] = len
    else
      out[#out + 1] = redis.call('HGET', b, id)
    end
  end
  return out
elseif op == 'remove' then
  redis.call('HDEL', b, ARGV[2])
  redis.call('ZREM', t, ARGV[2])
  return 1
end
return redis.error_reply('ERR tf share script: unknown operation')
)lua";

}  // namespace redis
}  // namespace tf

#endif
