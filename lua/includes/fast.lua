--[[
  Until when (us) spend.lua's fast path may skip every check but the limit (the meta field
  f<window>): the oldest entry is still in the window and the expiry still a window away. 0 while a
  block is set.
]]
local function fast_until(oldest, blocked, expires, win, nowMs)
  if blocked > nowMs then
    return 0
  end
  return math.min(oldest + win * 1000, (expires - win - EXPIRY_SLACK_MS) * 1000)
end
