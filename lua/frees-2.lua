--[[
  When units of a budget free up: for each amount a, ms from now until the units in the window drop
  to min(used, limit) - a (at least 0), i.e. until `a` more units are free under `limit` than now.
  When a exceeds what is in the window, the answer is when the window empties. Read-only.

  Input:
    KEYS[1] log    KEYS[2] meta
    ARGV[1] windowMs    ARGV[2] limit    ARGV[3..] amounts

  Output: {ms1, ms2, ...}, or {code, storedWindowMs} on failure (code < 0).
]]
--- @include "common"

local nowUs = now_us()
local win = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local total, stored = read_meta(KEYS[2])
if not total then
  return { CODE_CORRUPT, 0 }
end
if stored and stored ~= win then
  return { CODE_WINDOW_MISMATCH, stored }
end
local windowUs = win * 1000
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. fmt(nowUs - windowUs), '+inf', 'WITHSCORES')
local used = 0
for i = 1, #entries, 2 do
  used = used + (entry_cost(entries[i]) or 0)
end
local base = used
if limit < base then
  base = limit
end
local out = {}
for j = 3, #ARGV do
  local target = base - tonumber(ARGV[j])
  if target < 0 then
    target = 0
  end
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
  out[#out + 1] = ms_until(at, nowUs)
end
return out
