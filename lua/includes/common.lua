--[[
  Shared by every ledger script (inlined by the loader at each `@include` line).

  Data model of one budget key K (both keys share K's hash slot):
    log  : sorted set, one member per admitted call, "<nonce>:<cost>:<tag>",
           score = the server's time of the call in microseconds.
    meta : string "<total>|<windowMs>|<oldestUs>|<blockedUntilMs>|<reason>":
           total    = sum of the costs of the members still in log (the running total),
           windowMs = the key's fixed window (empty until the first spend),
           oldestUs = a lower bound of the oldest score in log (0 when log is empty),
           blockedUntilMs / reason = the block marker (0 / "" when not blocked).

  Return codes (negative) mirror LedgerCode in src/ledger/codes.ts.
]]
local CODE_WINDOW_MISMATCH = -1
local CODE_CORRUPT = -2

-- Keys outlive the window of their newest entry by this much (ms); see EXPIRY_SLACK_MS.
local EXPIRY_SLACK_MS = 1000

-- Integers above 1e14 lose digits through tostring ("%.14g"); always format them this way.
local function fmt(x)
  return string.format('%.0f', x)
end

-- The server's clock, in microseconds since the epoch.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- total, windowMs (nil when unset), oldestUs, blockedUntilMs, reason; nil when unreadable.
local function read_meta(key)
  local s = redis.call('GET', key)
  if not s then
    return 0, nil, 0, 0, ''
  end
  local total, win, oldest, blocked, reason = string.match(s, '^(%d+)|(%d*)|(%d+)|(%d+)|(.*)$')
  if not total then
    return nil
  end
  return tonumber(total), tonumber(win), tonumber(oldest), tonumber(blocked), reason
end

local function meta_value(total, win, oldest, blocked, reason)
  return fmt(total) .. '|' .. (win and fmt(win) or '') .. '|' .. fmt(oldest) .. '|' .. fmt(blocked) .. '|' .. reason
end

-- The cost encoded in a log member; nil when the member is not one of ours.
local function entry_cost(member)
  return tonumber(string.match(member, '^[^:]*:(%d+)'))
end

--[[
  Remove the entries at or before cutoffUs and subtract their costs from total. Skipped (one
  comparison, no call) while the oldest entry is still inside the window: then nothing expired.
  Returns total, oldestUs after the prune, or nil on an unreadable member.
]]
local function prune(log, total, oldest, cutoffUs)
  if oldest > cutoffUs or total == 0 then
    return total, oldest
  end
  local cutoff = fmt(cutoffUs)
  local expired = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
  for i = 1, #expired do
    local c = entry_cost(expired[i])
    if not c then
      return nil
    end
    total = total - c
  end
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
  end
  local first = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
  if first[2] then
    oldest = tonumber(first[2])
  else
    oldest = 0
    total = 0
  end
  return total, oldest
end

--[[
  Walk the log from its oldest entry, taking costs away from `used`, until at most `target` units
  remain; return the time (us) at which that entry leaves the window. With weighted entries this is
  not always the oldest entry's expiry. Reads in growing batches; stops as soon as it is there.
  Only entries inside the window may be in the log when this is called (prune first).
]]
local function time_until_at_most(log, used, target, windowUs, nowUs)
  if used <= target then
    return nowUs
  end
  local start, batch, last = 0, 32, nowUs + windowUs
  while true do
    local page = redis.call('ZRANGE', log, start, start + batch - 1, 'WITHSCORES')
    if #page == 0 then
      return last
    end
    for i = 1, #page, 2 do
      local c = entry_cost(page[i]) or 0
      used = used - c
      last = tonumber(page[i + 1]) + windowUs
      if used <= target then
        return last
      end
    end
    start = start + batch
    batch = batch * 2
  end
end

-- ms, rounded up, from nowUs until atUs (never negative).
local function ms_until(atUs, nowUs)
  if atUs <= nowUs then
    return 0
  end
  return math.ceil((atUs - nowUs) / 1000)
end
