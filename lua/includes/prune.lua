--[[
  Remove the entries at or before cutoffUs and subtract their costs from total. Called only when
  the oldest entry has left the window (the caller compares first), so a spend whose window holds
  nothing expired pays nothing for it; each entry is removed once.
  Returns total, oldestUs after the prune, or nil on an unreadable member.
]]
--- @include "cost"
local function prune(log, total, cutoffUs)
  local expired = redis.call('ZRANGEBYSCORE', log, '-inf', cutoffUs)
  for i = 1, #expired do
    local c = entry_cost(expired[i])
    if not c then
      return nil
    end
    total = total - c
  end
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoffUs)
  end
  local first = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
  if first[2] then
    return total, tonumber(first[2])
  end
  return 0, 0
end
