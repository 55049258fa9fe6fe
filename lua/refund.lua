--[[
  Take back an admitted call: remove its entry from each budget's log and subtract its cost from
  the running total. Idempotent: an entry already gone (refunded, or expired and pruned) changes
  nothing. Keys keep their expiry.

  Input:
    KEYS[2i-1] log of budget i      KEYS[2i] meta of budget i
    ARGV[1] entry id (log member "<nonce>:<cost>:<tag>"; the cost is read from it)

  Output: number of logs the entry was removed from, or {code, index} on failure (code < 0).
]]
--- @include "base"
--- @include "cost"

local id = ARGV[1]
local cost = entry_cost(id)
if not cost then
  return { CODE_CORRUPT, 0 }
end
local removed = 0
for i = 1, #KEYS / 2 do
  local log, meta = KEYS[2 * i - 1], KEYS[2 * i]
  if redis.call('ZREM', log, id) == 1 then
    removed = removed + 1
    local t = redis.call('HGET', meta, 't')
    if t then
      local total = tonumber(t)
      if not total then
        return { CODE_CORRUPT, i }
      end
      redis.call('HSET', meta, 't', math.max(0, total - cost))
    end
  end
end
return removed
