--[[
  An entry key's value "<decision>|<request>" (see base.lua): the decision's fields as numbers and
  the request, or nil when the value is not one this ledger wrote. `answers(fields, stored, asked)`:
  whether a remembered entry is the one asked about, i.e. the same request, or a void that
  remembered none (a void of an entry never seen knows no request).
]]
local function remembered(seen)
  local bar = string.find(seen, '|', 1, true)
  if not bar then
    return nil
  end
  local fields = {}
  for v in string.gmatch(string.sub(seen, 1, bar - 1), '[^,]+') do
    fields[#fields + 1] = tonumber(v)
  end
  return fields, string.sub(seen, bar + 1)
end

local function answers(fields, stored, asked)
  return stored == asked or (fields[7] == VOID_MARK and stored == '')
end
