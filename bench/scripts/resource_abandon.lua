-- A crashed holder leaves KEYS[1] without releasing: one fewer inside, and
-- the server's time noted so the next entry measures how long it was blocked.
local t = redis.call('TIME')
redis.call('HINCRBY', KEYS[1], 'inside', -1)
redis.call('HSET', KEYS[1], 'abandoned', tonumber(t[1]) * 1000000 + tonumber(t[2]))
return 1
