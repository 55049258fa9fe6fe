--[[
  Record a spend that already happened (a journal replayed late): never denied (no limit or block
  is looked at), written at the time it was spent, counted once per entry id. Variable number of
  keys: two per budget and the entry key.

  The time is the caller's ARGV[3], never later than the server's now. A budget whose window that
  time has left already is not written; when no budget is, nothing is (dropped). The entry is
  written with its real score, in the past: each meta keeps its bookkeeping right for it (`o` the
  oldest score, `f<window>` the fast path's deadline, `x` and the keys' expiry), so the entry leaves
  the window, is pruned and expires exactly when a spend made at that time would have.

  Once per entry id: an entry remembered as allowed (its spend landed, or an earlier record did) is
  not written again (replayed). A remembered denial or void is no reason not to write: the spend
  happened. The entry is then remembered as allowed (src/ledger/remembered.ts), as a spend's is.

  With replace (ARGV[4] = '1'), the entry's cost becomes ARGV[2] whatever it was: the member it has
  in the logs (if any) is taken out and the new one written (cost 0: only taken out). The same
  member at the same time is left as it is (replayed).

  Written late (not a replace): the member is also added to KEYS[2n+2], when given, the set of
  entries budget 1 holds that were recorded late (scored by time, pruned with the window, expiring
  when its newest leaves it), which `late-2.lua` reads. A release that does not know it never
  reads it.

  Input:
    KEYS[2i-1] log of budget i      KEYS[2i] meta of budget i      KEYS[2n+1] entry key
    KEYS[2n+2] (optional) budget 1's late set
    ARGV[1] the entry's log member "<id>:<cost>:<tag>"    ARGV[2] cost (>= 1; >= 0 with replace)
    ARGV[3] when it was spent (epoch ms)    ARGV[4] '1': replace    ARGV[5] the request
    ARGV[5+i] windowMs of budget i

  Output:
    {1, atMs}                        recorded at atMs
    {2, atMs}                        replayed: remembered already (written at atMs); nothing written
    {3, atMs}                        dropped: older than every window; nothing written or remembered
    {code, index, storedWindowMs}    failure (code < 0); nothing written
]]
--- @include "base"
--- @include "remembered"
--- @include "member"
--- @include "fast"

local call = redis.call
local time = call('TIME')
local nowUs = time[1] * 1000000 + time[2]
local nowMs = (nowUs - nowUs % 1000) / 1000
local n = #ARGV - 5
local member, cost, replace, request = ARGV[1], tonumber(ARGV[2]), ARGV[4] == '1', ARGV[5]
local entry = KEYS[2 * n + 1]
local atMs = math.min(tonumber(ARGV[3]), nowMs)
local atUs = atMs * 1000

local longest = 0
for i = 1, n do
  local win = tonumber(ARGV[5 + i])
  local m = call('HMGET', KEYS[2 * i], 'w', 't')
  local stored = tonumber(m[1])
  if stored and stored ~= win then
    return { CODE_WINDOW_MISMATCH, i, stored }
  end
  if m[2] and not tonumber(m[2]) then
    return { CODE_CORRUPT, i, 0 }
  end
  longest = math.max(longest, win)
end

local seen = call('GET', entry)
if seen then
  local fields, stored = remembered(seen)
  if not fields then
    return { CODE_CORRUPT, 0, 0 }
  end
  if not answers(fields, stored, request) then
    return { CODE_ENTRY_CONFLICT, 0, 0 }
  end
  if fields[1] == 1 then
    if not replace then
      return { 2, fields[3] }
    end
    local old = find_member(n, string.match(member, '^[^:]*'), fields[3])
    if old == member and fields[3] == atMs then
      return { 2, atMs }
    end
    if old and not take_out(n, old) then
      return { CODE_CORRUPT, 0, 0 }
    end
  end
end

local written = 0
for i = 1, n do
  local log, meta = KEYS[2 * i - 1], KEYS[2 * i]
  local win = tonumber(ARGV[5 + i])
  if cost > 0 and atUs > nowUs - win * 1000 then
    local m = call('HMGET', meta, 't', 'o', 'b', 'x')
    local total = tonumber(m[1]) or 0
    local oldest, blocked, expires = tonumber(m[2]) or 0, tonumber(m[3]) or 0, tonumber(m[4]) or 0
    -- As a spend does: what has left the window goes first, so no old copy of the member remains.
    if total > 0 and oldest <= nowUs - win * 1000 then
      --- @include "prune"
      total, oldest = prune(log, total, nowUs - win * 1000)
      if not total then
        return { CODE_CORRUPT, i, 0 }
      end
    end
    -- A member already in the log (never, but for damaged data) is moved, not counted twice.
    if call('ZADD', log, atUs, member) == 0 then
      total = total - cost
    end
    if total == 0 or atUs < oldest then
      oldest = atUs
    end
    -- As spend.lua: a new log, or an expiry that would end before this entry's window does.
    local due = atMs + win + EXPIRY_SLACK_MS
    local refresh = total == 0 or expires < due
    if refresh then
      expires = math.max(expires, due + math.min(math.ceil(win / 16), 60000))
    end
    call('HSET', meta, 't', total + cost, 'w', win, 'o', oldest, 'x', expires,
      'f' .. ARGV[5 + i], fast_until(oldest, blocked, expires, win, nowMs))
    if refresh then
      call('PEXPIREAT', log, expires)
      call('PEXPIREAT', meta, math.max(expires, blocked + EXPIRY_SLACK_MS))
    end
    written = written + 1
  end
end

if written == 0 and cost > 0 then
  return { 3, atMs }
end
local late = KEYS[2 * n + 2]
local win1 = tonumber(ARGV[6])
if late and not replace and cost > 0 and atUs > nowUs - win1 * 1000 then
  call('ZREMRANGEBYSCORE', late, '-inf', nowUs - win1 * 1000)
  call('ZADD', late, atUs, member)
  local due = atMs + win1 + EXPIRY_SLACK_MS
  local ttl = call('PTTL', late)
  if ttl < 0 or nowMs + ttl < due then
    call('PEXPIREAT', late, due)
  end
end
call('SET', entry, table.concat({ 1, 0, atMs }, ',') .. '|' .. request, 'PX', longest + EXPIRY_SLACK_MS)
return { 1, atMs }
