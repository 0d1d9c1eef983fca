"""Distinct identities per value in Redis HyperLogLogs (``commonness.ValueCounts`` for the services).

One HyperLogLog per value key, ``anonstream:{tenant}:values:hll:<digest>``, and one of all identities,
``…:values:identities``. PFADD is idempotent (a redelivered record adds nothing), every command touches one key
(so one slot: the keys are Redis-Cluster safe without a shared hash tag, which would pile every value on one node),
and the counts are estimates with a standard error of 0.81 % (Redis's 16,384 registers), exact in practice for the
small counts that decide (Redis keeps a HyperLogLog sparse, exact-sized, below ``hll-sparse-max-bytes``).

Values never appear in Redis in clear: a key holds ``HMAC(pseudonym key, value key)`` (``pii/keys.py``), so what is
stored cannot be read back nor tested against a guess without the secret; after a key rotation the counts start
again from zero (the safe side: nothing is common until counted again). Memory: a sparse HyperLogLog of a value
few identities mention is tens of bytes, a dense one 12 KiB at most; every key expires ``ttl_s`` after its last
PFADD (default 30 days), so the store holds at most the values of the last ``ttl_s`` × 12 KiB, in practice the
distinct values of that window × about 100 bytes (most values are mentioned by few identities).
"""
from __future__ import annotations

from typing import Iterable

import redis

from ..commonness import ValueCounts
from ..pii.keys import KeyRing
from .redis_state import _RedisStore, _unavailable_on_connection_error

DEFAULT_TTL_S = 30 * 86400


class RedisValueCounts(_RedisStore, ValueCounts):
    def __init__(self, client: redis.Redis, tenant: str, keys: KeyRing, ttl_s: int = DEFAULT_TTL_S):
        super().__init__(client, tenant, "values")
        self.keys = keys
        self.ttl_s = ttl_s

    def _hll(self, value_key: str) -> str:
        return self.key("hll", self.keys.digest(value_key)[:32])

    @_unavailable_on_connection_error
    def add(self, identity: str, keys: Iterable[str]) -> None:
        pipe = self.r.pipeline(transaction=False)
        for name in [self.key("identities"), *(self._hll(k) for k in keys)]:
            pipe.pfadd(name, identity)
            pipe.expire(name, self.ttl_s)
        pipe.execute()

    @_unavailable_on_connection_error
    def counts(self, keys: Iterable[str]) -> dict[str, int]:
        keys = list(keys)
        pipe = self.r.pipeline(transaction=False)
        for k in keys:   # one key per PFCOUNT: redis-py's cluster pipeline refuses pfcount() (it may name many keys)
            pipe.execute_command("PFCOUNT", self._hll(k))
        return {k: int(n) for k, n in zip(keys, pipe.execute())}

    @_unavailable_on_connection_error
    def identities(self) -> int:
        return int(self.r.pfcount(self.key("identities")))
