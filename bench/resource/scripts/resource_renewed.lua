-- The holder with epoch ARGV[1] renewed its lease until ARGV[2] (unix µs).
-- Returns the key's event number.
if redis.call('HEXISTS', KEYS[1], 'v:' .. ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'v:' .. ARGV[1], ARGV[2])
end
return redis.call('HINCRBY', KEYS[1], 'seq', 1)
