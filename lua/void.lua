--[[
  Void an entry whose answer was lost and that was not used, so that it never counts. Variable
  number of keys: two per budget the entry may be in, and the entry key. Atomic:

  - remembered as allowed and still in a log: taken out of every log (as refund.lua does) and
    remembered as void from now on (refunded);
  - not remembered: remembered as void for as long as a spend's entry is, with no request, so the
    spend arriving later (sent before its answer was lost) is answered with a denial that charges
    nothing (voided);
  - remembered as denied or void, or allowed and in no log any more: nothing changes (none).

  Input:
    KEYS[2i-1] log of budget i      KEYS[2i] meta of budget i      KEYS[2n+1] entry key
    ARGV[1] entry id    ARGV[2] how long a void is remembered (ms: the budgets' longest window)

  Output:
    {1, cost}         refunded (cost: the units taken out of each log)
    {2, 0}            voided
    {0, 0}            none
    {code, index}     failure (code < 0)
]]
--- @include "base"
--- @include "remembered"
--- @include "member"

local call = redis.call
local time = call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local n = (#KEYS - 1) / 2
local entry = KEYS[2 * n + 1]
local ttl = tonumber(ARGV[2]) + EXPIRY_SLACK_MS

local seen = call('GET', entry)
if not seen then
  call('SET', entry, table.concat({ 0, 0, 0, 1, 0, nowMs, VOID_MARK }, ',') .. '|', 'PX', ttl)
  return { 2, 0 }
end
local fields, stored = remembered(seen)
if not fields then
  return { CODE_CORRUPT, 0 }
end
if fields[1] ~= 1 then
  return { 0, 0 }
end
local member = find_member(n, ARGV[1], fields[3])
if not member then
  return { 0, 0 }
end
local removed, bad = take_out(n, member)
if not removed then
  return { CODE_CORRUPT, bad }
end
call('SET', entry, table.concat({ 0, 0, 0, 1, 0, fields[3], VOID_MARK }, ',') .. '|' .. stored, 'PX', ttl)
return { 1, entry_cost(member) }
