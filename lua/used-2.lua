--[[
  The units in a budget's window and its block marker, without its entries: what the backfill's
  pacing line reads before each paced spend. It is the meta's running total (the one the spend
  decides on) less the entries that have left the window — read, not removed: a read never writes —
  so it costs what has expired since the last spend, where peek-2 walks every entry in the window
  for its tags (thousands in a day's log).

  Input:
    KEYS[1] log    KEYS[2] meta
    ARGV[1] windowMs

  Output:
    {nowMs, used, blockedUntilMs, reason}   (blockedUntilMs 0 when not blocked)
    {code, storedWindowMs} on failure (code < 0)
]]
--- @include "base"
--- @include "cost"

local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local nowMs = math.floor(nowUs / 1000)
local win = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[2], 'w', 'b', 'r', 't', 'o')
local stored, blocked, reason = tonumber(m[1]), tonumber(m[2]) or 0, m[3] or ''
if stored and stored ~= win then
  return { CODE_WINDOW_MISMATCH, stored }
end
if m[4] and not tonumber(m[4]) then
  return { CODE_CORRUPT, 0 }
end
local total, oldest = tonumber(m[4]) or 0, tonumber(m[5]) or 0
-- As prune does: an entry at or before the cutoff has left the window.
local cutoffUs = nowUs - win * 1000
if total > 0 and oldest <= cutoffUs then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoffUs)
  for i = 1, #expired do
    local c = entry_cost(expired[i])
    if not c then
      return { CODE_CORRUPT, 0 }
    end
    total = total - c
  end
end
if blocked <= nowMs then
  blocked, reason = 0, ''
end
return { nowMs, math.max(0, total), blocked, reason }
