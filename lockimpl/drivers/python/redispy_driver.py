#!/usr/bin/env python3
"""A lockbench lock driver for redis-py's redis.lock.Lock.

lockbench runs it as --lock exec:'python3 redispy_driver.py' and speaks the
driver protocol (version 1, JSON lines) over its stdin and stdout: first
lockbench's hello with the servers, answered by this driver's hello with
its capabilities; then acquire, renew and release requests, each with an
id that the answer repeats. Nothing else may be written to stdout;
diagnostics go to stderr, whose last line lockbench shows if the driver
fails.

redis-py's Lock is a token lease on one server: SET NX PX with a random
token to acquire, a Lua compare-and-delete to release, a Lua
compare-and-pexpire to extend (extend(..., replace_ttl=True) is the
renewal). It neither fences nor waits on the server (a blocking acquire
polls from the client), so the hello says renews only.
"""
import json
import sys

try:
    import redis
    from redis.exceptions import LockError, LockNotOwnedError, RedisError
except ImportError as exc:  # lockbench shows this line and exits 1
    sys.stderr.write("redispy_driver: the redis module is missing (Debian: apt-get install python3-redis): %s\n" % exc)
    sys.exit(1)

PROTOCOL = 1


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


class Driver:
    def __init__(self, client):
        self.client = client
        # The Lock object of each lease, by its token: redis-py renews and
        # releases through the object that acquired.
        self.locks = {}

    def acquire(self, req):
        ttl = req["ttl_ms"] / 1000.0
        lock = self.client.lock(req["key"], timeout=ttl, blocking=False, thread_local=False)
        if not lock.acquire(blocking=False):
            return {"result": "held"}
        token = lock.local.token
        if isinstance(token, bytes):
            token = token.decode()
        self.locks[token] = lock
        return {"result": "granted", "token": token, "validity_ms": req["ttl_ms"]}

    def gone_or_held(self, key):
        # redis-py's scripts answer 0 for both a key that expired and one
        # another owner holds; a read after tells them apart (as a report).
        return "lost" if self.client.exists(key) == 0 else "held"

    def lock_of(self, req, keep):
        """The Lock object of a lease; for one no longer kept (released
        already), a Lock with its key and token, whose scripts then answer
        for it."""
        lock = self.locks.get(req["token"]) if keep else self.locks.pop(req["token"], None)
        if lock is None or lock.name != req["key"]:
            # A timeout, or redis-py refuses to extend it (LockError).
            ttl = max(req.get("ttl_ms", 1000), 1) / 1000.0
            lock = self.client.lock(req["key"], timeout=ttl, blocking=False, thread_local=False)
            lock.local.token = req["token"].encode()
        return lock

    def renew(self, req):
        lock = self.lock_of(req, keep=True)
        try:
            lock.extend(req["ttl_ms"] / 1000.0, replace_ttl=True)
        except LockNotOwnedError:
            return {"result": self.gone_or_held(req["key"])}
        return {"result": "granted", "validity_ms": req["ttl_ms"]}

    def release(self, req):
        lock = self.lock_of(req, keep=False)
        try:
            lock.release()
        except LockNotOwnedError:
            return {"result": self.gone_or_held(req["key"])}
        return {"result": "granted"}

    def serve(self, req):
        op = req.get("op")
        try:
            if op == "acquire":
                return self.acquire(req)
            if op == "renew":
                return self.renew(req)
            if op == "release":
                return self.release(req)
            return {"result": "error", "message": "unknown op %r" % op}
        except (RedisError, LockError, OSError) as exc:
            return {"result": "error", "message": "%s: %s" % (type(exc).__name__, exc)}


def main():
    hello = read()
    if not hello or hello.get("op") != "hello" or hello.get("v") != PROTOCOL:
        sys.stderr.write("redispy_driver: expected lockbench's version %d hello, got %r\n" % (PROTOCOL, hello))
        return 1
    servers = hello.get("servers") or []
    if len(servers) != 1:
        sys.stderr.write("redispy_driver: redis-py's Lock works on one server; the topology has %d\n" % len(servers))
        return 1
    client = redis.Redis.from_url(servers[0], socket_timeout=5)
    send({"op": "hello", "v": PROTOCOL, "name": "redis-py Lock", "version": redis.__version__,
          "renews": True, "fences": False, "waits": False})
    driver = Driver(client)
    while True:
        req = read()
        if req is None:
            return 0
        answer = driver.serve(req)
        answer["id"] = req["id"]
        send(answer)


if __name__ == "__main__":
    sys.exit(main())
