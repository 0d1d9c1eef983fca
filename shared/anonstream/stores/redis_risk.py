"""Redis implementation of the audit stage's risk tables (``stores/risk.py``).

Keys (all under ``anonstream:{tenant}:audit:risk:``): ``versions`` (set of release versions),
``{version}:before`` / ``:after`` / ``:swapped`` / ``:after_docs`` (hashes, digest -> count, HINCRBY),
``{version}:seen:{chunk key}`` (string + TTL: the chunk was counted; SET NX as in
``redis_swap.RedisTupleCounts``). The hashes cover all time (no window); a marker lives ``seen_ttl_s``.
"""
from __future__ import annotations

import redis

from .redis_state import _RedisStore, _unavailable_on_connection_error
from .risk import RiskObservation, RiskTable, RiskTables

# KEYS: seen, before, after, swapped, after_docs, versions; ARGV: ttl, before, after, pair, swapped, version
_OBSERVE = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
  redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
  redis.call('HINCRBY', KEYS[5], ARGV[4], 1)
  if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[4], ARGV[2], 1) end
  redis.call('SADD', KEYS[6], ARGV[6])
  return 1
end
return 0
"""


def _decode(stored: dict) -> dict[str, int]:
    return {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in stored.items()}


class RedisRiskTables(_RedisStore, RiskTables):
    def __init__(self, client: redis.Redis, tenant: str, seen_ttl_s: int = 7 * 86400):
        super().__init__(client, tenant, "audit")
        if seen_ttl_s <= 0:
            raise ValueError("seen_ttl_s must be positive")
        self.seen_ttl_s = int(seen_ttl_s)
        self._observe = client.register_script(_OBSERVE)

    def _hashes(self, version: str) -> list[str]:
        return [self.key("risk", version, name) for name in ("before", "after", "swapped", "after_docs")]

    @_unavailable_on_connection_error
    def observe(self, version: str, observations: list[RiskObservation]) -> int:
        if not observations:
            return 0
        hashes, versions = self._hashes(version), self.key("risk", "versions")
        pipe = self.r.pipeline(transaction=False)
        for o in observations:
            keys = [self.key("risk", version, "seen", o.chunk_key), *hashes, versions]
            args = [self.seen_ttl_s, o.before, o.after, f"{o.after}|{o.doc}", "1" if o.swapped else "0", version]
            self._observe(keys=keys, args=args, client=pipe)
        return sum(int(x) for x in pipe.execute())

    @_unavailable_on_connection_error
    def versions(self) -> list[str]:
        return sorted(v.decode() if isinstance(v, bytes) else v for v in self.r.smembers(self.key("risk", "versions")))

    @_unavailable_on_connection_error
    def table(self, version: str) -> RiskTable:
        pipe = self.r.pipeline(transaction=True)
        for key in self._hashes(version):
            pipe.hgetall(key)
        before, after, swapped, after_docs = (_decode(x) for x in pipe.execute())
        return RiskTable(before, after, swapped, after_docs)
