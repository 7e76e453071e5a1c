-- A holder enters the critical section of KEYS[1] (a hash).
-- ARGV[1]: how long to keep the state (ms). Returns {inside, epoch, blocked_us}:
-- holders inside now (more than 1 is an overlap), this entry's epoch, and how
-- long the key sat abandoned by a crashed holder before it (0 if not).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local inside = redis.call('HINCRBY', KEYS[1], 'inside', 1)
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
local blocked = 0
local left = redis.call('HGET', KEYS[1], 'abandoned')
if left then
  blocked = now - tonumber(left)
  redis.call('HDEL', KEYS[1], 'abandoned')
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {inside, epoch, blocked}
