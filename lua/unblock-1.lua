--[[
  Lift a block set by block-1. The key keeps its expiry.

  Input:  KEYS[1] meta
  Output: 1, or {code} on failure (code < 0).
]]
--- @include "common"

local total, win, oldest, _, _ = read_meta(KEYS[1])
if not total then
  return { CODE_CORRUPT }
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SET', KEYS[1], meta_value(total, win, oldest, 0, ''), 'KEEPTTL')
end
return 1
