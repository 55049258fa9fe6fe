--[[
  A budget's units per minute over [fromMs, toMs), counting only entries still in the window:
  `own` for every entry whose tag does not start with OUTSIDE_TAG_PREFIX ("outside:", spend the
  ledger did not see, recorded by reconcile), `outside` for those that do. Minutes with no units
  are left out. Read-only.

  Input:
    KEYS[1] log    KEYS[2] meta
    ARGV[1] windowMs    ARGV[2] fromMs    ARGV[3] toMs
    ARGV[4] minuteMs (default 60000)    ARGV[5] originMs: minutes start at origin + k × minuteMs
      (default 0; a compressed day's minutes are counted from its fromMs)

  Output:
    {nowMs, minute1, own1, outside1, minute2, ...} minutes (epoch ms) in ascending order
    {code, storedWindowMs} on failure (code < 0)
]]
--- @include "base"
--- @include "cost"

local OUTSIDE_TAG_PREFIX = 'outside:'
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local win = tonumber(ARGV[1])
local stored = tonumber(redis.call('HGET', KEYS[2], 'w'))
if stored and stored ~= win then
  return { CODE_WINDOW_MISMATCH, stored }
end
-- Scores are whole microseconds: "after the cutoff" is "at least cutoff + 1"; toMs is exclusive.
local from = math.max(tonumber(ARGV[2]) * 1000, nowUs - win * 1000 + 1)
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], from, tonumber(ARGV[3]) * 1000 - 1, 'WITHSCORES')
local minuteUs = tonumber(ARGV[4] or '60000') * 1000
local originUs = tonumber(ARGV[5] or '0') * 1000
local out = { math.floor(nowUs / 1000) }
local last = -1
for i = 1, #entries, 2 do
  local c, tag = entry_parts(entries[i])
  if not c then
    return { CODE_CORRUPT, 0 }
  end
  local score = tonumber(entries[i + 1])
  local minute = (score - (score - originUs) % minuteUs) / 1000
  if minute ~= last then
    out[#out + 1] = minute
    out[#out + 1] = 0
    out[#out + 1] = 0
    last = minute
  end
  if string.sub(tag, 1, #OUTSIDE_TAG_PREFIX) == OUTSIDE_TAG_PREFIX then
    out[#out] = out[#out] + c
  else
    out[#out - 1] = out[#out - 1] + c
  end
end
return out
