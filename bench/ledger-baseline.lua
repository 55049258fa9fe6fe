--[[
  Baseline for `npm run bench -- ledger`, not used by quota-guard: the classic sliding-window log,
  one sorted-set member per unit of cost. Drop what left the window, count what is left, add `cost`
  members. Work and memory grow with the cost and with the entries in the window, and its
  Retry-After (the oldest member's expiry) is only right for a cost of 1.

  KEYS[1] log
  ARGV[1] limit    ARGV[2] windowMs    ARGV[3] cost    ARGV[4] unique call id
  Returns {1, remaining} or {0, retryAfterMs}
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, win, cost, id = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - win)
local used = redis.call('ZCARD', KEYS[1])
if used + cost > limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return { 0, tonumber(oldest[2]) + win - now }
end
for i = 1, cost do
  redis.call('ZADD', KEYS[1], now, id .. ':' .. i)
end
redis.call('PEXPIRE', KEYS[1], win)
return { 1, limit - used - cost }
