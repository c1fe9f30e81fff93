"""The Lua scripts of `server.store.Store`: a room's commit, the settling of a write in
doubt, and a room's creation. Each touches one room's keys only (one hash slot: they
run unchanged on a Redis Cluster). `Store` registers them; nothing else runs them.
The commit's guards and what a plain move writes are described in `server.store`.
"""

from __future__ import annotations

COMMIT = """
local h, l = KEYS[1], KEYS[2]
local cur = redis.call('HMGET', h, 'version', 'fence', 'void')
if not cur[1] then return -3 end
if cur[2] ~= ARGV[3] then return -1 end
-- The room is at the writer's version if the hash's version is still that of the
-- writer's last write that was not a plain move (ARGV[1]) and the log is still as long
-- as the writer's action count (ARGV[2]): a plain move appends its entry only.
if cur[1] ~= ARGV[1] then
  -- The same write sent again (a retried pipeline): it is already in.
  if #ARGV > 5 and cur[1] == ARGV[6] and redis.call('HGET', h, 'wid') == ARGV[4] then return 1 end
  return 0
end
-- Its writer already concluded it was never applied (see RESOLVE): keep that true.
if cur[3] == ARGV[4] then return -4 end
-- The log's length before this write: RPUSH answers it (one call fewer than LLEN);
-- should it differ from the writer's count, the entry is taken out again.
local n
if ARGV[5] ~= '' then n = redis.call('RPUSH', l, ARGV[5]) - 1 else n = redis.call('LLEN', l) end
if n ~= tonumber(ARGV[2]) then
  if ARGV[5] ~= '' then redis.call('RPOP', l) end
  -- The same move sent again: it is in if its entry (it carries the version: the
  -- same entry is the same change) is the one entry past the writer's count.
  if #ARGV == 5 and n == tonumber(ARGV[2]) + 1 and redis.call('LINDEX', l, -1) == ARGV[5] then return 1 end
  return 0
end
-- A plain move (5 arguments): its entry is all it writes.
if #ARGV == 5 then return 1 end
local pairs = 7
if KEYS[3] then
  redis.call('HSET', KEYS[3], 'n', ARGV[7], 'state', ARGV[8])
  pairs = 9
end
-- The new version, the write id, the action count and the fields that changed.
redis.call('HSET', h, 'version', ARGV[6], 'wid', ARGV[4], unpack(ARGV, pairs))
return 1
"""

# Settles a write whose reply never came (Store.settle), given the commit's first five
# arguments: 1 = it was applied (a move: the hash unchanged and its entry the log's
# last, one past the writer's count; another write: its id is the hash's `wid`), 0 =
# it was not and now never will be (its id is voided, so a copy still on its way is
# refused), -1 = the fence moved (another node owns the room), -2 = someone else wrote
# meanwhile, -3 = no such room.
RESOLVE = """
local h = KEYS[1]
local cur = redis.call('HMGET', h, 'version', 'wid', 'fence')
if not cur[1] then return -3 end
local n = redis.call('LLEN', KEYS[2])
if ARGV[5] ~= '' then
  if cur[1] == ARGV[1] and n == tonumber(ARGV[2]) + 1 and redis.call('LINDEX', KEYS[2], -1) == ARGV[5] then
    return 1
  end
elseif cur[2] == ARGV[4] then return 1 end
if cur[3] ~= ARGV[3] then return -1 end
if cur[1] == ARGV[1] and n == tonumber(ARGV[2]) then
  redis.call('HSET', h, 'void', ARGV[4])
  return 0
end
return -2
"""

# Creating twice with the same creation key is the same create (a retried request).
CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'ckey') == ARGV[5] then return 2 end
  return 0
end
redis.call('HSET', KEYS[1], 'meta', ARGV[1], 'version', '0', 'fence', '1', 'status', 'waiting',
           'seats', ARGV[2], 'deadline', '', 'outcome', '', 'actions', '0', 'ckey', ARGV[5])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4]) end
return 1
"""
