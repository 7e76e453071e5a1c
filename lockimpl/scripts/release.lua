-- Compare-and-delete: delete KEYS[1] only while it still holds our token.
-- Returns 1 released, 0 held by another owner, -1 key missing (expired).
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
if v == false then
  return -1
end
return 0
