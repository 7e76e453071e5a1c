-- A holder enters the critical section of KEYS[1] (a hash).
-- ARGV[1]: how long to keep the state (ms); ARGV[2]: when the lease was
-- granted, ARGV[3]: its validity end (both unix µs, the client's clock);
-- ARGV[4]: the clock-drift allowance (µs).
-- Returns {inside, epoch, blocked_us, overlap, seq}: holders inside now (more
-- than 1 is an overlap), this entry's epoch, how long the key sat abandoned
-- by a crashed holder before it (0 if not), the overlap's cause (0 none,
-- 1 double grant: a holder inside still had a valid lease at the grant,
-- 2 overrun: every holder inside had outlived its lease) and the key's
-- event number. Each holder inside keeps its validity in field v:EPOCH.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local granted = tonumber(ARGV[2])
local drift = tonumber(ARGV[4])
local overlap = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'v:' then
    if overlap == 0 then overlap = 2 end
    if granted < tonumber(fields[i + 1]) - drift then overlap = 1 end
  end
end
local inside = redis.call('HINCRBY', KEYS[1], 'inside', 1)
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'v:' .. epoch, ARGV[3])
local blocked = 0
local left = redis.call('HGET', KEYS[1], 'abandoned')
if left then
  blocked = now - tonumber(left)
  redis.call('HDEL', KEYS[1], 'abandoned')
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {inside, epoch, blocked, overlap, seq}
