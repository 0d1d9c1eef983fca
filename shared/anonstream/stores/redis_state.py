"""Redis implementations of the stage stores (services use these; see stores/base.py).

Every key starts with ``anonstream:`` and the tenant, so tenants never see each other's state. Redis
connection failures surface as ``StoreUnavailable``.

Redis Cluster (``ANONSTREAM_REDIS_CLUSTER=1``): a script or a MULTI/EXEC may only touch keys of one hash slot.
A store whose keys are touched together (a script, a transaction) is built ``one_slot``: its keys are
``anonstream:{tenant|area}:...``, the braces a hash tag, so the whole area lives in one slot (pools, sink
reassembly, model and hierarchy registries, risk tables). Stores whose every command touches one key keep
``anonstream:tenant:area:...`` and spread over the cluster (document state, reservoir, counters, swap memory,
value counts); tuple counts tag per scope (``slot_tag``).
"""
from __future__ import annotations

import functools
import os
import random
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import redis

from .. import serde
from ..config import Settings
from .base import (Counters, DocumentStateStore, Fence, ModelRegistry, ModelVersion, PendingChunks, Reservoir,
                   StaleLeader, StoreUnavailable)


def connect(url: str, username: str | None = None, password: str | None = None,
            ca_file: str | None = None, cluster: bool = False) -> redis.Redis | redis.RedisCluster:
    """A client of ``url``; ``rediss://`` is TLS, the server verified against ``ca_file`` (or the
    system CAs) and its host name; ``username``/``password`` authenticate as a Redis ACL user.
    ``cluster``: a ``RedisCluster`` that starts from the node ``url`` names and discovers the others."""
    options: dict[str, Any] = dict(socket_timeout=5, socket_connect_timeout=5, health_check_interval=30)
    if ca_file:
        if urlsplit(url).scheme != "rediss":
            raise ValueError("ANONSTREAM_REDIS_CA_FILE is set but ANONSTREAM_REDIS_URL is not rediss:// (TLS)")
        options.update(ssl_ca_certs=ca_file, ssl_cert_reqs="required", ssl_check_hostname=True)
    if username and not password:
        raise ValueError("ANONSTREAM_REDIS_USERNAME is set but ANONSTREAM_REDIS_PASSWORD is not")
    if password:
        options.update(username=username, password=password)
    if cluster:
        return redis.RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)


def connect_settings(settings: Settings) -> redis.Redis | redis.RedisCluster:
    """The services' Redis client (the one place they make it): URL, ACL user and CA file from the
    settings, the password from ANONSTREAM_REDIS_PASSWORD only."""
    return connect(settings.redis_url, settings.redis_username, os.environ.get("ANONSTREAM_REDIS_PASSWORD"),
                   settings.redis_ca_file, settings.redis_cluster)


# A node down: the client's connection fails, or, once the cluster noticed, its slots are not served.
_UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterDownError,
                redis.exceptions.SlotNotCoveredError, redis.exceptions.TryAgainError)


def slot_tag(*parts: object) -> str:
    """A Redis Cluster hash tag ``{a|b|...}``: keys holding the same tag share one slot (braces in the parts
    become parentheses, so a part cannot end the tag early)."""
    return "{" + "|".join(str(p) for p in parts).replace("{", "(").replace("}", ")") + "}"


def _unavailable_on_connection_error(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except _UNAVAILABLE as exc:
            raise StoreUnavailable(f"redis: {type(exc).__name__}") from exc

    return wrapper


class _RedisStore:
    def __init__(self, client: redis.Redis, tenant: str, area: str, one_slot: bool = False):
        self.r = client
        self.tenant = tenant
        self.prefix = f"anonstream:{slot_tag(tenant, area)}" if one_slot else f"anonstream:{tenant}:{area}"

    def key(self, *parts: object) -> str:
        return ":".join([self.prefix, *map(str, parts)])


class RedisDocumentState(_RedisStore, DocumentStateStore):
    def __init__(self, client: redis.Redis, tenant: str, area: str, ttl_s: int):
        super().__init__(client, tenant, area)
        self.ttl_s = ttl_s

    @_unavailable_on_connection_error
    def get(self, doc_id: str) -> dict[str, Any] | None:
        raw = self.r.get(self.key(doc_id))
        return None if raw is None else serde.loads(raw)

    @_unavailable_on_connection_error
    def put(self, doc_id: str, state: dict[str, Any]) -> None:
        self.r.set(self.key(doc_id), serde.dumps(state), ex=self.ttl_s)

    @_unavailable_on_connection_error
    def delete(self, doc_id: str) -> None:
        self.r.delete(self.key(doc_id))


class RedisPendingChunks(_RedisStore, PendingChunks):
    """A hash per document (field = chunk index); emitted documents are remembered for ``ttl_s``. One slot:
    a document's hash and the first-seen index change in one transaction."""

    def __init__(self, client: redis.Redis, tenant: str, ttl_s: int):
        super().__init__(client, tenant, "sink", one_slot=True)
        self.ttl_s = ttl_s

    @_unavailable_on_connection_error
    def add(self, doc_id: str, chunk_index: int, chunk_count: int, chunk: dict[str, Any], now: float) -> int:
        key = self.key("pending", doc_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, str(chunk_index), serde.dumps(chunk))
        pipe.expire(key, self.ttl_s)
        pipe.zadd(self.key("first-seen"), {doc_id: now}, nx=True)
        pipe.hlen(key)
        return int(pipe.execute()[-1])

    @_unavailable_on_connection_error
    def overdue(self, first_seen_before: float) -> list[str]:
        return [d.decode() for d in self.r.zrangebyscore(self.key("first-seen"), "-inf", f"({first_seen_before}")]

    @_unavailable_on_connection_error
    def take(self, doc_id: str) -> list[dict[str, Any]]:
        stored = self.r.hgetall(self.key("pending", doc_id))
        return [serde.loads(stored[i]) for i in sorted(stored, key=int)]

    @_unavailable_on_connection_error
    def mark_emitted(self, doc_id: str, fingerprint: str) -> bool:
        pipe = self.r.pipeline(transaction=True)
        pipe.set(self.key("emitted", doc_id, fingerprint), 1, nx=True, ex=self.ttl_s)
        pipe.delete(self.key("pending", doc_id))
        pipe.zrem(self.key("first-seen"), doc_id)
        return bool(pipe.execute()[0])

    @_unavailable_on_connection_error
    def was_emitted(self, doc_id: str, fingerprint: str) -> bool:
        return bool(self.r.exists(self.key("emitted", doc_id, fingerprint)))


# A leader's publish (stores/lease.py): KEYS[1] lease, KEYS[2] fencing counter, KEYS[3] the new version's hash,
# KEYS[4] the current pointer, KEYS[5..] versions to prune; ARGV[1] the leader's lease value, ARGV[2] its fencing
# token, ARGV[3] the version, ARGV[4] model bytes, ARGV[5] info. Refused (0, nothing written) unless the token is the
# latest handed out and the lease still holds the leader's value.
_FENCED_PUBLISH = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] or tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[3], 'bytes', ARGV[4], 'info', ARGV[5])
redis.call('SET', KEYS[4], ARGV[3])
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
"""


# A leader's publish to a registry outside its lease's slot (the synthesizer's): KEYS[1] the slot's fence (the highest
# fencing token that wrote here), KEYS[2] the new version's hash, KEYS[3] the current pointer, KEYS[4..] versions to
# prune; ARGV[1] the token, ARGV[2] the version, ARGV[3] model bytes, ARGV[4] info. Refused (0) when a larger token
# wrote here before: a leader that lost its lease cannot overwrite its successor's version.
_HIGH_WATER_PUBLISH = """
if tonumber(redis.call('GET', KEYS[1]) or '0') > tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'bytes', ARGV[3], 'info', ARGV[4])
redis.call('SET', KEYS[3], ARGV[2])
for i = 4, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
"""


def fence_in_slot(store: _RedisStore, fence: Fence) -> bool:
    """Whether ``fence``'s lease keys are in ``store``'s slot (its one-slot prefix), so a script can check them."""
    return fence.lease_key.startswith(store.prefix + ":") and fence.token_key.startswith(store.prefix + ":")


class RedisModelRegistry(_RedisStore, ModelRegistry):
    """Versions in hashes ``model:{v}`` (fields ``bytes``, ``info``); ``model:current`` points to the
    live one. The new hash, the pointer move and the pruning happen in one MULTI/EXEC transaction,
    so a reader following the pointer always finds a complete model (one slot: ``{tenant|area}``).
    A leader's publish (``fence``) is one Lua script instead, which first checks the fence against the lease
    keys (``redis_lease.RedisLease`` of the same area: the same slot); a refused publish leaves a gap in the
    version numbers and nothing else. A registry outside the lease's slot (the synthesizer's) checks the token
    against the highest one that published there (``leader:fence``) instead: a stale leader is refused once its
    successor has published."""

    def __init__(self, client: redis.Redis, tenant: str, keep: int = 5, area: str = "mixture"):
        super().__init__(client, tenant, area, one_slot=True)  # area "synthesis": the metadata synthesizer's
        self.keep = keep
        self._fenced_publish = client.register_script(_FENCED_PUBLISH)
        self._high_water_publish = client.register_script(_HIGH_WATER_PUBLISH)

    @_unavailable_on_connection_error
    def current_version(self) -> int | None:
        raw = self.r.get(self.key("model", "current"))
        return None if raw is None else int(raw)

    @_unavailable_on_connection_error
    def load(self, version: int) -> ModelVersion | None:
        stored = self.r.hgetall(self.key("model", version))
        if not stored:
            return None
        return ModelVersion(version, stored[b"bytes"], serde.loads(stored[b"info"]))

    @_unavailable_on_connection_error
    def publish(self, model_bytes: bytes, info: dict[str, Any], fence: Fence | None = None) -> int:
        version = int(self.r.incr(self.key("model", "seq")))
        pruned = [self.key("model", old) for old in range(max(1, version - self.keep - 5), version - self.keep + 1)]
        if fence is not None:
            stored_info = serde.dumps({**info, "version": version})
            if fence_in_slot(self, fence):
                written = self._fenced_publish(
                    keys=[fence.lease_key, fence.token_key, self.key("model", version),
                          self.key("model", "current"), *pruned],
                    args=[fence.owner, fence.token, version, model_bytes, stored_info])
            else:
                written = self._high_water_publish(
                    keys=[self.key("leader", "fence"), self.key("model", version), self.key("model", "current"),
                          *pruned],
                    args=[fence.token, version, model_bytes, stored_info])
            if not written:
                raise StaleLeader(f"fencing token {fence.token} refused: a newer leader holds the lease")
            return version
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(self.key("model", version), mapping={"bytes": model_bytes,
                                                       "info": serde.dumps({**info, "version": version})})
        pipe.set(self.key("model", "current"), version)
        for old in pruned:
            pipe.delete(old)
        pipe.execute()
        return version


class RedisReservoir(_RedisStore, Reservoir):
    """Reservoir sampling (algorithm R) over a Redis list of float32 rows: restart-safe and shared
    by refit workers; ``seen`` is claimed with INCRBY so concurrent writers get distinct indices."""

    def __init__(self, client: redis.Redis, tenant: str, capacity: int, seed: int | None = None):
        super().__init__(client, tenant, "reservoir")
        self.capacity = capacity
        self._rng = random.Random(seed)

    @_unavailable_on_connection_error
    def add(self, vectors: np.ndarray) -> None:
        rows = np.asarray(vectors, dtype=np.float32)
        if not len(rows):
            return
        last_seen = int(self.r.incrby(self.key("seen"), len(rows)))
        first_seen = last_seen - len(rows) + 1
        pipe = self.r.pipeline(transaction=True)
        for seen, row in zip(range(first_seen, last_seen + 1), rows):
            if seen <= self.capacity:
                pipe.rpush(self.key("rows"), row.tobytes())
            else:
                slot = self._rng.randrange(seen)
                if slot < self.capacity:
                    pipe.lset(self.key("rows"), slot, row.tobytes())
        pipe.execute()

    @_unavailable_on_connection_error
    def sample(self, dim: int | None = None) -> np.ndarray:
        rows = [row for row in self.r.lrange(self.key("rows"), 0, -1) if dim is None or len(row) == 4 * dim]
        if not rows:
            return np.empty((0, dim or 0), dtype=np.float32)
        return np.stack([np.frombuffer(row, dtype=np.float32) for row in rows])

    @_unavailable_on_connection_error
    def seen(self) -> int:
        return int(self.r.get(self.key("seen")) or 0)


class RedisCounters(_RedisStore, Counters):
    def __init__(self, client: redis.Redis, tenant: str, area: str = "audit"):
        super().__init__(client, tenant, area)

    @_unavailable_on_connection_error
    def incr(self, deltas: dict[str, int]) -> None:
        if deltas:
            pipe = self.r.pipeline(transaction=True)
            for name, delta in deltas.items():
                pipe.hincrby(self.key("counters"), name, delta)
            pipe.execute()

    @_unavailable_on_connection_error
    def snapshot(self) -> dict[str, int]:
        return {k.decode(): int(v) for k, v in self.r.hgetall(self.key("counters")).items()}
