-- A holder with epoch ARGV[1] leaves KEYS[1]; ARGV[2] is 1 when it crashed
-- (left without releasing): the server's time is then noted so the next
-- entry measures how long the key was blocked. Returns the key's event number.
redis.call('HINCRBY', KEYS[1], 'inside', -1)
redis.call('HDEL', KEYS[1], 'v:' .. ARGV[1])
if ARGV[2] == '1' then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[1], 'abandoned', tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
return redis.call('HINCRBY', KEYS[1], 'seq', 1)
