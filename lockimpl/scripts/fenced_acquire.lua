-- SET NX PX and a fencing token in one step, so no holder can ever get a lease
-- without a token higher than every earlier holder's.
-- KEYS[1] lock key, KEYS[2] fencing counter; ARGV[1] token, ARGV[2] ttl ms.
-- Returns the new fencing token (>= 1), or 0 when the key is held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
