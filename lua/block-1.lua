--[[
  Block a budget key: every spend on it denies until blockedUntilMs (e.g. the upstream said
  quotaExceeded). The meta key lives at least until the block ends.

  Input:
    KEYS[1] meta
    ARGV[1] blockedUntilMs    ARGV[2] reason

  Output: 1
]]
--- @include "base"

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local untilMs = tonumber(ARGV[1])
local expireAt = untilMs + EXPIRY_SLACK_MS
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 and nowMs + ttl > expireAt then
  expireAt = nowMs + ttl
end
if expireAt <= nowMs then
  return 1
end
redis.call('HSET', KEYS[1], 'b', untilMs, 'r', ARGV[2])
-- Spends must see the block: close the fast path.
local win = redis.call('HGET', KEYS[1], 'w')
if win then
  redis.call('HSET', KEYS[1], 'f' .. win, 0)
end
redis.call('PEXPIREAT', KEYS[1], expireAt)
return 1
