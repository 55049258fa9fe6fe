--[[
  Read a budget without changing it: units and calls in the window, by tag, and its block marker.

  Input:
    KEYS[1] log    KEYS[2] meta
    ARGV[1] windowMs

  Output:
    {nowMs, used, calls, oldestMs, newestMs, blockedUntilMs, reason, tag1, units1, tag2, units2, ...}
    (oldestMs / newestMs are 0 when the window is empty; blockedUntilMs 0 when not blocked)
    {code, storedWindowMs} on failure (code < 0)
]]
--- @include "base"
--- @include "cost"

local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local nowMs = math.floor(nowUs / 1000)
local win = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[2], 'w', 'b', 'r')
local stored, blocked, reason = tonumber(m[1]), tonumber(m[2]) or 0, m[3] or ''
if stored and stored ~= win then
  return { CODE_WINDOW_MISMATCH, stored }
end
-- Scores are whole microseconds: "after the cutoff" is "at least cutoff + 1".
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], nowUs - win * 1000 + 1, '+inf', 'WITHSCORES')
local used, calls, oldest, newest = 0, 0, 0, 0
local byTag, order = {}, {}
for i = 1, #entries, 2 do
  local c, tag = entry_parts(entries[i])
  if not c then
    return { CODE_CORRUPT, 0 }
  end
  used = used + c
  calls = calls + 1
  local at = math.floor(tonumber(entries[i + 1]) / 1000)
  if calls == 1 then
    oldest = at
  end
  newest = at
  if byTag[tag] == nil then
    byTag[tag] = 0
    order[#order + 1] = tag
  end
  byTag[tag] = byTag[tag] + c
end
if blocked <= nowMs then
  blocked, reason = 0, ''
end
local out = { nowMs, used, calls, oldest, newest, blocked, reason }
for _, tag in ipairs(order) do
  out[#out + 1] = tag
  out[#out + 1] = byTag[tag]
end
return out
