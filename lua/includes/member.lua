--[[
  An entry's log member, found and taken out, on the budgets of one call (KEYS[2i-1] log and
  KEYS[2i] meta of budget i, i = 1..n).

  find_member: the member of entry `id` ("<id>:<cost>:<tag>") whose time is `atMs` (a spend's score
  is its microsecond, a record's `atMs * 1000`: both within the millisecond), in the first log that
  holds it; nil when none does.

  take_out: remove `member` from every log, subtracting its cost from each total it was counted in
  (as refund.lua does); the number of logs that held it, or nil, index on unreadable data.
]]
--- @include "cost"
local function find_member(n, id, atMs)
  local prefix = id .. ':'
  for i = 1, n do
    local near = redis.call('ZRANGEBYSCORE', KEYS[2 * i - 1], atMs * 1000, atMs * 1000 + 999)
    for j = 1, #near do
      if string.sub(near[j], 1, #prefix) == prefix then
        return near[j]
      end
    end
  end
  return nil
end

local function take_out(n, member)
  local cost = entry_cost(member)
  if not cost then
    return nil, 0
  end
  local removed = 0
  for i = 1, n do
    if redis.call('ZREM', KEYS[2 * i - 1], member) == 1 then
      removed = removed + 1
      local t = redis.call('HGET', KEYS[2 * i], 't')
      if t then
        local total = tonumber(t)
        if not total then
          return nil, i
        end
        redis.call('HSET', KEYS[2 * i], 't', math.max(0, total - cost))
      end
    end
  end
  return removed
end
