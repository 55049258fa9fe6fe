--[[
  Shared by every ledger script (inlined by the loader at each `@include` line).

  Data model of one budget key K (both keys share K's hash slot):
    log  : sorted set, one member per admitted call, "<nonce>:<cost>:<tag>",
           score = the server's time of the call in microseconds (an integer).
    meta : hash
           t = sum of the costs of the members in log (the running total)
           w = the key's fixed window in ms (absent until the first spend)
           o = a lower bound of the oldest score in log, in us
           x = when log and meta expire (epoch ms), at least one window after the newest entry
           b = blocked until (epoch ms; 0 or absent: not blocked)    r = why it is blocked
           f<windowMs> = until when (us) a spend may take the fast path (see spend.lua): the
               oldest entry is inside the window, the expiry a window away, no block is set.
               Named after the window, so a spend with another window never finds it.

  Entry key E (a spend's or a record's entry id chosen by the caller, in the budgets' slot):
    string "<decision>|<request>" with a PX expiry one longest window away: the decision as
    spend.lua first answered it, comma-separated (src/ledger/remembered.ts has every shape); a
    void is a denial with a seventh field VOID_MARK and, when nothing was remembered before it, an
    empty request.

  Numbers above 1e14 never go through Lua's tostring or `..` ("%.14g" would drop digits of a
  microsecond timestamp): they are passed to redis.call as numbers, or built from TIME's strings.

  Return codes (negative) mirror LedgerCode in src/ledger/codes.ts.
]]
local CODE_WINDOW_MISMATCH = -1
local CODE_CORRUPT = -2
local CODE_ENTRY_CONFLICT = -3
local CODE_ENTRY_UNKNOWN = -4

-- Keys outlive the window of their newest entry by this much (ms); see EXPIRY_SLACK_MS.
local EXPIRY_SLACK_MS = 1000
-- The seventh field of a remembered denial that is a void (VOID_MARK in src/ledger/remembered.ts).
local VOID_MARK = 1
