--[[
  When units of a budget free up: for each amount a, ms from now until the units in the window drop
  to min(used, limit) - a (at least 0), i.e. until `a` more units are free under `limit` than now.
  When a exceeds what is in the window, the answer is when the window empties. Read-only.

  Input:
    KEYS[1] log    KEYS[2] meta
    ARGV[1] windowMs    ARGV[2] limit    ARGV[3..] amounts

  Output: {ms1, ms2, ...}, or {code, storedWindowMs} on failure (code < 0).
]]
--- @include "base"
--- @include "cost"

local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local win = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local stored = tonumber(redis.call('HGET', KEYS[2], 'w'))
if stored and stored ~= win then
  return { CODE_WINDOW_MISMATCH, stored }
end
local windowUs = win * 1000
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], nowUs - windowUs + 1, '+inf', 'WITHSCORES')
local used = 0
for i = 1, #entries, 2 do
  used = used + (entry_cost(entries[i]) or 0)
end
local base = math.min(used, limit)
local out = {}
for j = 3, #ARGV do
  local target = math.max(0, base - tonumber(ARGV[j]))
  local left, at = used, nowUs
  if left > target then
    for i = 1, #entries, 2 do
      left = left - (entry_cost(entries[i]) or 0)
      at = tonumber(entries[i + 1]) + windowUs
      if left <= target then
        break
      end
    end
  end
  out[#out + 1] = math.max(0, math.ceil((at - nowUs) / 1000))
end
return out
