-- The cost encoded in a log member "<nonce>:<cost>:<tag>"; nil when the member is not one of ours.
local function entry_cost(member)
  return tonumber(string.match(member, '^[^:]*:(%d+)'))
end

-- The cost and the tag of a log member; a nil cost when the member is not one of ours.
local function entry_parts(member)
  local c, tag = string.match(member, '^[^:]*:(%d+):(.*)$')
  return tonumber(c), tag
end
