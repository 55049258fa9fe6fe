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
--- @include "member"

local removed, bad = take_out(#KEYS / 2, ARGV[1])
if not removed then
  return { CODE_CORRUPT, bad }
end
return removed
