--[[
  Walk the log from its oldest entry, taking costs away from `used`, until at most `target` units
  remain; return the time (us) at which that entry leaves the window. With weighted entries this is
  not always the oldest entry's expiry. Reads in growing pages; stops as soon as it is there.
  Only entries inside the window may be in the log when this is called (prune first).
]]
--- @include "cost"
local function time_until_at_most(log, used, target, windowUs, nowUs)
  if used <= target then
    return nowUs
  end
  local start, page, last = 0, 32, nowUs + windowUs
  while true do
    local entries = redis.call('ZRANGE', log, start, start + page - 1, 'WITHSCORES')
    if #entries == 0 then
      return last
    end
    for i = 1, #entries, 2 do
      used = used - (entry_cost(entries[i]) or 0)
      last = tonumber(entries[i + 1]) + windowUs
      if used <= target then
        return last
      end
    end
    start = start + page
    page = page * 2
  end
end
