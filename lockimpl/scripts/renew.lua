-- Compare-and-pexpire: extend KEYS[1] to ARGV[2] ms only while it holds our token.
-- Returns 1 renewed, 0 held by another owner, -1 key missing (expired).
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if v == false then
  return -1
end
return 0
