"""Hierarchies in Redis, versioned like the mixture model (redis_state.RedisModelRegistry), under
``anonstream:{tenant|hierarchy}:`` (one Redis Cluster slot: a publish is one transaction): per category a
hash ``{category}:{v}`` (field ``json``: the serialized hierarchy), ``{category}:current``
pointing to the live one, ``{category}:seq`` the counter, and the set ``categories``.
The new hash, the pointer move and the pruning run in one MULTI/EXEC transaction. A refit leader's publish
(``fence``, stores/lease.py) is one Lua script that also checks its fencing token against the highest one that
published here (``leader:fence``), and refuses a stale leader's (``StaleLeader``)."""
from __future__ import annotations

import redis

from .. import serde
from ..hierarchy.model import Hierarchy
from ..hierarchy.registry import HierarchyRegistry, HierarchyVersion
from .base import Fence, StaleLeader
from .redis_state import _RedisStore, _unavailable_on_connection_error

# KEYS[1] the fence (highest token that published here), KEYS[2] the new version's hash, KEYS[3] the category's current
# pointer, KEYS[4] the set of categories, KEYS[5..] versions to prune; ARGV[1] token, ARGV[2] version, ARGV[3] json,
# ARGV[4] category. Refused (0) when a larger token published before.
_FENCED_PUBLISH = """
if tonumber(redis.call('GET', KEYS[1]) or '0') > tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'json', ARGV[3])
redis.call('SET', KEYS[3], ARGV[2])
redis.call('SADD', KEYS[4], ARGV[4])
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
"""


class RedisHierarchyRegistry(_RedisStore, HierarchyRegistry):
    def __init__(self, client: redis.Redis, tenant: str, keep: int = 5):
        super().__init__(client, tenant, "hierarchy", one_slot=True)
        self.keep = keep
        self._fenced_publish = client.register_script(_FENCED_PUBLISH)

    @_unavailable_on_connection_error
    def current_version(self, category: str) -> int | None:
        raw = self.r.get(self.key(category, "current"))
        return None if raw is None else int(raw)

    @_unavailable_on_connection_error
    def load(self, category: str, version: int | None = None) -> HierarchyVersion | None:
        version = self.current_version(category) if version is None else version
        if version is None:
            return None
        raw = self.r.hget(self.key(category, version), "json")
        return None if raw is None else HierarchyVersion(category, version, Hierarchy.from_dict(serde.loads(raw)))

    @_unavailable_on_connection_error
    def publish(self, category: str, hierarchy: Hierarchy, fence: Fence | None = None) -> int:
        version = int(self.r.incr(self.key(category, "seq")))
        data = hierarchy.to_dict()
        data["info"] = {**data["info"], "version": version}
        if fence is not None:
            pruned = [self.key(category, old) for old in range(max(1, version - self.keep - 5), version - self.keep + 1)]
            if not self._fenced_publish(keys=[self.key("leader", "fence"), self.key(category, version),
                                              self.key(category, "current"), self.key("categories"), *pruned],
                                        args=[fence.token, version, serde.dumps(data), category]):
                raise StaleLeader(f"fencing token {fence.token} refused: a newer leader published")
            return version
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(self.key(category, version), mapping={"json": serde.dumps(data)})
        pipe.set(self.key(category, "current"), version)
        pipe.sadd(self.key("categories"), category)
        for old in range(max(1, version - self.keep - 5), version - self.keep + 1):
            pipe.delete(self.key(category, old))
        pipe.execute()
        return version

    @_unavailable_on_connection_error
    def categories(self) -> list[str]:
        return sorted(c.decode() for c in self.r.smembers(self.key("categories")))
