--[[
  Record one finished job run in the run history (src/history/redis.ts): its entry in the
  credential's stream, its region's last success, the totals of its job kind and outcome, every key
  renewed for the history's time to live. With a run id chosen by the client (the decision API's
  POST /v1/runs), at most once: the id is remembered as a spend's entry is (spend.lua), in the same
  script call as the run it names. Every key has the credential's hash tag.

  Input:
    KEYS[1] the runs stream    KEYS[2] the regions' last successes (hash)    KEYS[3] the totals (hash)
    KEYS[4] (optional) the run id's key: "<the run as recorded>|<request>", expires ARGV[8] ms on
    ARGV[1] runs kept (XADD MAXLEN ~)    ARGV[2] the history keys' time to live (ms)
    ARGV[3] the region whose last success this run is ('' for none)    ARGV[4] when it finished (ms)
    ARGV[5] the totals' field, "<job kind>|<outcome>"    ARGV[6] the units it spent
    ARGV[7] (with KEYS[4]) the request, as the caller words it: the same id with another request
            is a conflict
    ARGV[8] (with KEYS[4]) how long the id is remembered (ms)
    ARGV[9] (with KEYS[4]) the run as recorded, answered to the same request again (holds no '|')
    ARGV[10…] the stream entry's fields and values

  Output:
    {1}                     recorded
    {2, run}                the id was recorded before with this request: ARGV[9] as it was then
    {CODE_ENTRY_CONFLICT}   the id was recorded before with another request; nothing written
    {CODE_CORRUPT}          the id's key holds something else; nothing written
]]
--- @include "base"

local call = redis.call

if #KEYS > 3 then
  local seen = call('GET', KEYS[4])
  if seen then
    local bar = string.find(seen, '|', 1, true)
    if not bar then
      return { CODE_CORRUPT }
    end
    if string.sub(seen, bar + 1) ~= ARGV[7] then
      return { CODE_ENTRY_CONFLICT }
    end
    return { 2, string.sub(seen, 1, bar - 1) }
  end
end

local fields = {}
for i = 10, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
if ARGV[3] ~= '' then
  call('HSET', KEYS[2], ARGV[3], ARGV[4])
end
call('HINCRBY', KEYS[3], ARGV[5] .. '|runs', 1)
call('HINCRBY', KEYS[3], ARGV[5] .. '|units', ARGV[6])
-- Like every ledger key, these expire: a credential that runs nothing for that long loses them.
for i = 1, 3 do
  call('PEXPIRE', KEYS[i], ARGV[2])
end
if #KEYS > 3 then
  call('SET', KEYS[4], ARGV[9] .. '|' .. ARGV[7], 'PX', ARGV[8])
end
return { 1 }
