--[[
  Read the entries of a budget that were recorded late (`record.lua` adds them to its late set)
  and are still in its log and its window, without changing anything.

  Input:
    KEYS[1] log    KEYS[2] late set
    ARGV[1] windowMs

  Output:
    {units, entries, oldestMs}   (oldestMs 0 when there is none)
]]
--- @include "base"
--- @include "cost"

local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local win = tonumber(ARGV[1])
local members = redis.call('ZRANGEBYSCORE', KEYS[2], nowUs - win * 1000 + 1, '+inf', 'WITHSCORES')
local units, entries, oldest = 0, 0, 0
for i = 1, #members, 2 do
  -- Refunded or replaced since: no longer in the log, no longer counted.
  if redis.call('ZSCORE', KEYS[1], members[i]) then
    local c = entry_cost(members[i])
    if c then
      units = units + c
      entries = entries + 1
      if entries == 1 then
        oldest = math.floor(tonumber(members[i + 1]) / 1000)
      end
    end
  end
end
return { units, entries, oldest }
