-- The cost encoded in a log member "<nonce>:<cost>:<tag>"; nil when the member is not one of ours.
local function entry_cost(member)
  return tonumber(string.match(member, '^[^:]*:(%d+)'))
end
