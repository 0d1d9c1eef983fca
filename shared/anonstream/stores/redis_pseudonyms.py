"""Pseudonyms in Redis: the same entity gets the same ``[TYPE_n]`` across documents, chunks, replicas and
restarts, per tenant and namespace.

Keys (never the raw entity: the address is an HMAC-SHA256 of it with ``ANONSTREAM_PSEUDONYM_KEY``)::

    anonstream:{<tenant>|<namespace>}:pseud:m:<hmac>    -> index n (string), TTL ttl_s, refreshed on use
    anonstream:{<tenant>|<namespace>}:pseud:n:<TYPE>    -> last index allocated for TYPE (no TTL)

The hash tag ``{tenant|namespace}`` keeps one namespace's keys in one cluster slot, so the Lua script that
looks up and allocates is atomic: a lookup miss does ``INCR`` on the counter and ``SET`` of the mapping in
one step — concurrent workers asking for the same new entity get the same index, and indexes are never
reused (the counter never expires, only mappings do).

Key rotation (``ANONSTREAM_PSEUDONYM_KEY_PREVIOUS``, see ``anonstream.pii.keys``): a miss under the current
HMAC looks under the previous key's HMAC and, if found, copies that index to the current address — the
surrogate stays the same across the rotation and entries migrate as they are used.
"""
from __future__ import annotations

from typing import Any

from ..pii.engine import PseudonymStore
from ..pii.keys import KeyRing
from .redis_state import _unavailable_on_connection_error

_LUA = """
local ttl = tonumber(ARGV[1])
local v = redis.call('GET', KEYS[1])
if v then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return v
end
if KEYS[2] ~= KEYS[1] then
  v = redis.call('GET', KEYS[2])
  if v then
    redis.call('SET', KEYS[1], v, 'PX', ttl)
    return v
  end
end
local n = redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[1], n, 'PX', ttl)
return tostring(n)
"""


class RedisPseudonymStore(PseudonymStore):
    def __init__(self, redis_client: Any, ttl_s: int, tenant: str, keys: KeyRing | None = None,
                 template: str = "[{type}_{index}]"):
        """``keys`` defaults to ``KeyRing.from_env(required=True)``: without ``ANONSTREAM_PSEUDONYM_KEY``
        construction fails (a clear startup error for the pii service)."""
        if ttl_s <= 0:
            raise ValueError("ttl_s must be positive")
        self.r = redis_client
        self.ttl_ms = int(ttl_s * 1000)
        self.tenant = tenant
        self.keys = keys if keys is not None else KeyRing.from_env(required=True)
        self.template = template
        self._script = redis_client.register_script(_LUA)

    def _prefix(self, namespace: str) -> str:
        tag = f"{self.tenant}|{namespace}".replace("{", "(").replace("}", ")")
        return f"anonstream:{{{tag}}}:pseud"

    def _message(self, namespace: str, entity_key: str, entity_type: str) -> str:
        return "\x1f".join((self.tenant, namespace, entity_type, entity_key))

    @_unavailable_on_connection_error
    def surrogate_for(self, namespace: str, entity_key: str, entity_type: str) -> str:
        prefix = self._prefix(namespace)
        digests = self.keys.digests(self._message(namespace, entity_key, entity_type))
        current = f"{prefix}:m:{digests[0]}"
        previous = f"{prefix}:m:{digests[1]}" if len(digests) > 1 else current
        counter = f"{prefix}:n:{entity_type}"
        raw = self._script(keys=[current, previous, counter], args=[self.ttl_ms])
        index = raw.decode() if isinstance(raw, bytes) else str(raw)
        return self.template.format(type=entity_type, index=index)
