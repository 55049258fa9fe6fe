--[[
  Block a budget key: every spend on it denies until blockedUntilMs (e.g. the upstream said
  quotaExceeded). The meta key lives at least until the block ends.

  Input:
    KEYS[1] meta
    ARGV[1] blockedUntilMs    ARGV[2] reason

  Output: 1, or {code} on failure (code < 0).
]]
--- @include "common"

local nowMs = math.floor(now_us() / 1000)
local untilMs = tonumber(ARGV[1])
local total, win, oldest, _, _ = read_meta(KEYS[1])
if not total then
  return { CODE_CORRUPT }
end
local ttl = untilMs - nowMs + EXPIRY_SLACK_MS
local current = redis.call('PTTL', KEYS[1])
if current > ttl then
  ttl = current
end
if ttl <= 0 then
  return 1
end
redis.call('SET', KEYS[1], meta_value(total, win, oldest, untilMs, ARGV[2]), 'PX', ttl)
return 1
