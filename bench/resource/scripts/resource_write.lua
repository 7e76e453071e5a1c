-- The protected write of the entry with epoch ARGV[1] on KEYS[1].
-- ARGV[2]: the lease's fencing token (0: none); ARGV[3]: 1 if the lease had
-- expired. Returns {verdict, seq}: 0 accepted, 1 rejected by fencing, 2 a
-- stale write accepted; and the key's event number.
local epoch = tonumber(ARGV[1])
local fence = tonumber(ARGV[2])
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
local verdict = 0
if fence > 0 then
  local highest = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
  if fence < highest then
    verdict = 1
  else
    redis.call('HSET', KEYS[1], 'fence', fence)
    if epoch > last then redis.call('HSET', KEYS[1], 'last', epoch) end
  end
else
  if epoch > last then redis.call('HSET', KEYS[1], 'last', epoch) end
  if ARGV[3] == '1' and last > epoch then verdict = 2 end
end
return {verdict, redis.call('HINCRBY', KEYS[1], 'seq', 1)}
