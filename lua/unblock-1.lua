--[[
  Lift a block set by block-1. The key keeps its expiry.

  Input:  KEYS[1] meta
  Output: 1
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'b', 0, 'r', '')
end
-- The fast path stays closed (f = 0) until the next spend takes the general path and reopens it.
return 1
