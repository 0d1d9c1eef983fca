"""Hierarchies in Redis, versioned like the mixture model (redis_state.RedisModelRegistry), under
``anonstream:{tenant|hierarchy}:`` (one Redis Cluster slot: a publish is one transaction): per category a
hash ``{category}:{v}`` (field ``json``: the serialized hierarchy), ``{category}:current``
pointing to the live one, ``{category}:seq`` the counter, and the set ``categories``.
The new hash, the pointer move and the pruning run in one MULTI/EXEC transaction."""
from __future__ import annotations

import redis

from .. import serde
from ..hierarchy.model import Hierarchy
from ..hierarchy.registry import HierarchyRegistry, HierarchyVersion
from .redis_state import _RedisStore, _unavailable_on_connection_error


class RedisHierarchyRegistry(_RedisStore, HierarchyRegistry):
    def __init__(self, client: redis.Redis, tenant: str, keep: int = 5):
        super().__init__(client, tenant, "hierarchy", one_slot=True)
        self.keep = keep

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
    def publish(self, category: str, hierarchy: Hierarchy) -> int:
        version = int(self.r.incr(self.key(category, "seq")))
        data = hierarchy.to_dict()
        data["info"] = {**data["info"], "version": version}
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
