--[[
  Spend `cost` units on every budget of the call, or on none (all-or-nothing, one script call).
  Variable number of keys: two per budget.

  Input:
    KEYS[2i-1] log of budget i      KEYS[2i] meta of budget i
    ARGV[1] entry id (log member "<nonce>:<cost>:<tag>")
    ARGV[2] cost (integer >= 1)
    ARGV[1+2i] limit of budget i    ARGV[2+2i] windowMs of budget i

  Output:
    {1, remaining, nowMs}                                               allowed
    {0, retryAfterMs, remaining, limitedByIndex, blockedUntilMs, nowMs} denied (blockedUntilMs 0: not blocked)
    {code, index, storedWindowMs}                                       failure (code < 0)
]]
--- @include "common"

local nowUs = now_us()
local nowMs = math.floor(nowUs / 1000)
local id = ARGV[1]
local cost = tonumber(ARGV[2])
local n = #KEYS / 2

local state = {}
local retryAt, limitedBy, blockedUntil = 0, 0, 0
local remaining = nil

for i = 1, n do
  local log, metaKey = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, win = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local total, stored, oldest, blocked, reason = read_meta(metaKey)
  if not total then
    return { CODE_CORRUPT, i, 0 }
  end
  if stored and stored ~= win then
    return { CODE_WINDOW_MISMATCH, i, stored }
  end
  local windowUs = win * 1000
  local before = total
  total, oldest = prune(log, total, oldest, nowUs - windowUs)
  if not total then
    return { CODE_CORRUPT, i, 0 }
  end
  if total ~= before then
    redis.call('SET', metaKey, meta_value(total, stored, oldest, blocked, reason), 'KEEPTTL')
  end
  state[i] = { total, oldest, blocked, reason }

  local at, left = 0, limit - total
  if blocked > nowMs then
    at, left = blocked * 1000, 0
  elseif total + cost > limit then
    at = time_until_at_most(log, total, limit - cost, windowUs, nowUs)
    if at <= nowUs then
      at = nowUs + 1
    end
  end
  if at > retryAt then
    retryAt, limitedBy = at, i
    if blocked > nowMs then
      blockedUntil = blocked
    else
      blockedUntil = 0
    end
  end
  if left < 0 then
    left = 0
  end
  if remaining == nil or left < remaining then
    remaining = left
  end
end

if limitedBy > 0 then
  return { 0, ms_until(retryAt, nowUs), remaining, limitedBy, blockedUntil, nowMs }
end

local score = fmt(nowUs)
remaining = nil
for i = 1, n do
  local log, metaKey = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, win = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local s = state[i]
  local total, oldest, blocked = s[1] + cost, s[2], s[3]
  if s[1] == 0 or nowUs < oldest then
    oldest = nowUs
  end
  local ttl = win + EXPIRY_SLACK_MS
  local metaTtl = ttl
  if blocked - nowMs + EXPIRY_SLACK_MS > metaTtl then
    metaTtl = blocked - nowMs + EXPIRY_SLACK_MS
  end
  redis.call('ZADD', log, score, id)
  redis.call('PEXPIRE', log, ttl)
  redis.call('SET', metaKey, meta_value(total, win, oldest, blocked, s[4]), 'PX', metaTtl)
  if remaining == nil or limit - total < remaining then
    remaining = limit - total
  end
end
return { 1, remaining, nowMs }
