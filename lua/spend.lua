--[[
  Spend `cost` units on every budget of the call, or on none (all-or-nothing, one script call).
  Variable number of keys: two per budget, and one more (the entry key) for a spend with an entry
  id chosen by the caller, which is remembered with its decision (exactly-once spends).

  Input:
    KEYS[2i-1] log of budget i      KEYS[2i] meta of budget i
    KEYS[2n+1] (optional) entry key: "<decision>|<request>", expires one longest window after the spend
    ARGV[1] entry id (log member "<nonce>:<cost>:<tag>")
    ARGV[2] cost (integer >= 1)
    ARGV[1+2i] limit of budget i    ARGV[2+2i] windowMs of budget i
    ARGV[3+2n] (with an entry key) the request, as the caller words it: the same id with another
               request is a conflict
    ARGV[4+2n] (with an entry key) '1': only answer a remembered decision, never spend

  Output:
    {1, remaining, nowMs}                                               allowed
    {0, retryAfterMs, remaining, limitedByIndex, blockedUntilMs, nowMs} denied (blockedUntilMs 0: not blocked)
    {2, ...} / {3, ...}                                                 the remembered allowed / denied
                                                                        decision of this entry, as first answered
                                                                        (a void: denied with a 7th field VOID_MARK)
    {code, index, storedWindowMs}                                       failure (code < 0)

  Cost: the common case (one budget, allowed, nothing expired, expiry still far enough, not
  blocked) is a fast path of four commands (TIME, HMGET of two fields, ZADD, HINCRBY) and a few
  comparisons; functions are only defined past it, and the prune and the Retry-After walk only
  inside the branches that need them. Expiries are pushed out in steps of 1/16 of the window (at
  most a minute), so PEXPIREAT runs once per step, not per spend.
]]
--- @include "base"

local call = redis.call
local time = call('TIME')
local nowUs = time[1] * 1000000 + time[2]
local nowMs = (nowUs - nowUs % 1000) / 1000
local cost = tonumber(ARGV[2])
local n = math.floor(#KEYS / 2)

-- An entry seen before: its first answer, or a conflict when the request differs.
local entry, request = nil, nil
if #KEYS > 2 * n then
  entry, request = KEYS[2 * n + 1], ARGV[3 + 2 * n]
  local seen = call('GET', entry)
  if seen then
    --- @include "remembered"
    local out, stored = remembered(seen)
    if not out then
      return { CODE_CORRUPT, 0, 0 }
    end
    if not answers(out, stored, request) then
      return { CODE_ENTRY_CONFLICT, 0, 0 }
    end
    out[1] = out[1] + 2
    return out
  end
  if ARGV[4 + 2 * n] == '1' then
    return { CODE_ENTRY_UNKNOWN, 0, 0 }
  end
end

-- Remember an entry's decision (a comma-separated reply) for its longest window.
local function remember(reply)
  if entry then
    local longest = 0
    for i = 1, n do
      longest = math.max(longest, tonumber(ARGV[2 + 2 * i]))
    end
    call('SET', entry, table.concat(reply, ',') .. '|' .. request, 'PX', longest + EXPIRY_SLACK_MS)
  end
  return reply
end

-- Fast path, one budget: the key's `f<window>` field says until when (us) nothing can have
-- expired, the expiry is far enough and no block is set; it is missing for another window. Then
-- the decision is total + cost <= limit and the writes are the entry and the new total.
if n == 1 then
  local A, meta = ARGV, KEYS[2]
  local m = call('HMGET', meta, 't', 'f' .. A[4])
  local total, limit = tonumber(m[1]), tonumber(A[3])
  if total and total > 0 and total + cost <= limit and nowUs < (tonumber(m[2]) or 0) then
    call('ZADD', KEYS[1], time[1] .. string.sub('00000' .. time[2], -6), A[1])
    call('HINCRBY', meta, 't', A[2])
    if entry then
      return remember({ 1, limit - total - cost, nowMs })
    end
    return { 1, limit - total - cost, nowMs }
  end
end

--- @include "fast"

-- Per budget i, at 5i-4 .. 5i: total, oldestUs, blockedUntilMs, expiresAtMs, flags (1 new key, 2 pruned).
local st = {}
local retryAt, limitedBy, blockedUntil, remaining = 0, 0, 0, nil

for i = 1, n do
  local meta = KEYS[2 * i]
  local limit, win = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local m = redis.call('HMGET', meta, 't', 'w', 'o', 'b', 'x')
  local total, stored = tonumber(m[1]) or 0, tonumber(m[2])
  local oldest, blocked = tonumber(m[3]) or 0, tonumber(m[4]) or 0
  local flags = 0
  if m[1] and not tonumber(m[1]) then
    return { CODE_CORRUPT, i, 0 }
  end
  if not stored then
    flags = 1
  elseif stored ~= win then
    return { CODE_WINDOW_MISMATCH, i, stored }
  end
  local windowUs = win * 1000
  if total > 0 and oldest <= nowUs - windowUs then
    --- @include "prune"
    total, oldest = prune(KEYS[2 * i - 1], total, nowUs - windowUs)
    if not total then
      return { CODE_CORRUPT, i, 0 }
    end
    flags = flags + 2
  end
  local b = 5 * i - 5
  st[b + 1], st[b + 2], st[b + 3], st[b + 4], st[b + 5] = total, oldest, blocked, tonumber(m[5]) or 0, flags

  local at, left = 0, limit - total
  if blocked > nowMs then
    at, left = blocked * 1000, 0
  elseif total + cost > limit then
    --- @include "walk"
    at = time_until_at_most(KEYS[2 * i - 1], total, limit - cost, windowUs, nowUs)
    if at <= nowUs then
      at = nowUs + 1
    end
  end
  if at > retryAt then
    retryAt, limitedBy = at, i
    blockedUntil = blocked > nowMs and blocked or 0
  end
  if left < 0 then
    left = 0
  end
  if remaining == nil or left < remaining then
    remaining = left
  end
end

if limitedBy > 0 then
  -- Keep what the prune found (the entries it removed are gone).
  for i = 1, n do
    local b = 5 * i - 5
    if st[b + 5] >= 2 then
      local win = tonumber(ARGV[2 + 2 * i])
      redis.call('HSET', KEYS[2 * i], 't', st[b + 1], 'o', st[b + 2], 'f' .. ARGV[2 + 2 * i],
        fast_until(st[b + 2], st[b + 3], st[b + 4], win, nowMs))
    end
  end
  return remember({ 0, math.ceil((retryAt - nowUs) / 1000), remaining, limitedBy, blockedUntil, nowMs })
end

-- The score as a string made of TIME's own digits: cheaper than having Redis format a number.
local score = time[1] .. string.sub('00000' .. time[2], -6)
remaining = nil
for i = 1, n do
  local log, meta = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, win = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local b = 5 * i - 5
  local total, oldest, blocked, expires, flags = st[b + 1], st[b + 2], st[b + 3], st[b + 4], st[b + 5]
  redis.call('ZADD', log, score, ARGV[1])
  if total == 0 or nowUs < oldest then
    oldest = nowUs
  end
  local due = nowMs + win + EXPIRY_SLACK_MS
  local refresh = total == 0 or flags % 2 == 1 or expires < due
  if refresh then
    -- A new log (no expiry yet), a new key, or an expiry about to fall inside the window.
    expires = math.max(expires, due + math.min(math.ceil(win / 16), 60000))
  end
  redis.call('HSET', meta, 't', total + cost, 'w', win, 'o', oldest, 'x', expires,
    'f' .. ARGV[2 + 2 * i], fast_until(oldest, blocked, expires, win, nowMs))
  if refresh then
    redis.call('PEXPIREAT', log, expires)
    redis.call('PEXPIREAT', meta, math.max(expires, blocked + EXPIRY_SLACK_MS))
  end
  if remaining == nil or limit - total - cost < remaining then
    remaining = limit - total - cost
  end
end
return remember({ 1, remaining, nowMs })
