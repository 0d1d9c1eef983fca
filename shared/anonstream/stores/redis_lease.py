"""The refit leader's lease in Redis (or a Redis Cluster), with a fencing token (stores/lease.py).

Two keys in the hash slot of the store the leader writes (``anonstream:{tenant|mixture}:leader:lease`` and
``...:leader:token``; the registry's slot, so that its publish script can check both, stores/redis_state.py):

* ``lease`` holds the owner's value with a time to live (``SET NX PX``);
* ``token`` is the fencing counter: every successful acquisition ``INCR``s it, in the same Lua script as the
  ``SET NX PX``, so the counter's value is the token of the latest acquisition and never goes back.

This is redis-py's ``Lock`` (``redis/lock.py``) with one change. ``Lock`` already gives what a lease needs besides
the token: an owner value per holder, ``reacquire`` (reset the TTL if the value is still ours: renew) and
``release`` (delete only if the value is still ours), both compare-and-act Lua scripts, which this class reuses.
It has no fencing token: its ``do_acquire`` is a plain ``SET NX PX``, and a value that is a random UUID cannot be
ordered, so a store cannot tell an old holder's write from a new one's. ``FencedLock`` replaces ``do_acquire`` by a
script that also ``INCR``s the counter and remembers the number; everything else is ``Lock``'s.
"""
from __future__ import annotations

import redis
from redis.exceptions import LockError
from redis.lock import Lock

from .base import Fence
from .lease import LeaseBackend
from .redis_state import _RedisStore, _unavailable_on_connection_error

# KEYS[1] lease, KEYS[2] fencing counter (one slot); ARGV[1] owner value, ARGV[2] TTL in ms.
# Returns the new fencing token, or false when another owner holds the lease. An owner that already holds it (its
# earlier acquisition succeeded but the reply was lost) gets its lease renewed and its token back.
_ACQUIRE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]))
end
return false
"""


class FencedLock(Lock):
    """redis-py's ``Lock`` whose acquisition also draws a fencing token (``fencing_token``) from ``token_key``."""

    lua_fenced_acquire = None

    def __init__(self, client, name: str, token_key: str, timeout: float):
        super().__init__(client, name, timeout=timeout, blocking=False, thread_local=False)
        self.token_key = token_key
        self.fencing_token: int | None = None
        if FencedLock.lua_fenced_acquire is None:
            FencedLock.lua_fenced_acquire = client.register_script(_ACQUIRE)

    def do_acquire(self, token) -> bool:
        result = self.lua_fenced_acquire(keys=[self.name, self.token_key],
                                         args=[token, int(self.timeout * 1000)], client=self.redis)
        if not result:
            return False
        self.fencing_token = int(result)
        return True


class RedisLease(_RedisStore, LeaseBackend):
    """The lease of ``area`` (default the mixture registry's: ``anonstream:{tenant|mixture}:leader:*``)."""

    def __init__(self, client: redis.Redis | redis.RedisCluster, tenant: str, area: str = "mixture"):
        super().__init__(client, tenant, area, one_slot=True)
        self.lease_key = self.key("leader", "lease")
        self.token_key = self.key("leader", "token")
        self._lock = FencedLock(client, self.lease_key, self.token_key, timeout=1.0)

    @_unavailable_on_connection_error
    def try_acquire(self, owner: str, ttl_s: float) -> int | None:
        self._lock.timeout = ttl_s
        if not self._lock.acquire(blocking=False, token=owner):
            return None
        return self._lock.fencing_token

    @_unavailable_on_connection_error
    def renew(self, owner: str, ttl_s: float) -> bool:
        self._lock.timeout = ttl_s
        self._lock.local.token = owner.encode()
        try:
            return self._lock.reacquire()
        except LockError:  # LockNotOwnedError: expired, or another owner's now
            return False

    @_unavailable_on_connection_error
    def release(self, owner: str) -> None:
        self._lock.local.token = None
        try:
            self._lock.do_release(owner.encode())  # deletes the lease only if its value is still ``owner``
        except LockError:
            pass

    @_unavailable_on_connection_error
    def holder(self) -> tuple[str | None, int]:
        """(the lease's current owner value or None, the latest fencing token handed out): for operators and tests."""
        value, token = self.r.get(self.lease_key), self.r.get(self.token_key)
        return (None if value is None else value.decode()), int(token or 0)

    def fence(self, owner: str, token: int) -> Fence:
        return Fence(owner, token, lease_key=self.lease_key, token_key=self.token_key)
