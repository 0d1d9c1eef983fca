"""Redis implementation of the audit stage's risk tables (``stores/risk.py``).

Keys (all under ``anonstream:{tenant}:audit:risk:``): ``versions`` (set of release versions);
``{version}:before`` / ``:after`` / ``:swapped`` / ``:after_docs`` (hashes, digest -> count, HINCRBY; all time);
``{version}:watermark`` (latest event time seen), ``{version}:w:buckets`` (sorted set of the window's bucket
numbers) and ``{version}:w:{bucket}:before`` / ``:after`` / ``:swapped`` / ``:after_docs`` (the window's
buckets, deleted once they fall out of the window); ``{version}:seen:{chunk key}`` (string + TTL: the chunk
was counted; SET NX as in ``redis_swap.RedisTupleCounts``); ``{version}:du`` (hash: ``{mixture version}:chunks``
/ ``:before`` / ``:after``, HINCRBY / HINCRBYFLOAT) and ``{version}:du:seen:{chunk key}``. A marker lives
``seen_ttl_s``.

One Lua script per observation decides "new?", bumps all time, moves the watermark and bumps the record's
bucket if it is live, atomically: two audit workers never count a chunk twice nor write into a bucket the
other has pruned (the watermark only grows, so a bucket once out of the window stays out).
"""
from __future__ import annotations

import redis

from .redis_state import _RedisStore, _unavailable_on_connection_error
from .risk import RiskObservation, RiskTable, RiskTables, UtilityObservation, UtilitySums, WindowTable

_NAMES = ("before", "after", "swapped", "after_docs")

# KEYS: seen, before, after, swapped, after_docs, versions, watermark, buckets index,
#       window before, after, swapped, after_docs
# ARGV: ttl, before, after, pair, swapped, version, at, bucket, bucket_s, span
_OBSERVE = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
redis.call('HINCRBY', KEYS[5], ARGV[4], 1)
if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[4], ARGV[2], 1) end
redis.call('SADD', KEYS[6], ARGV[6])
local at = tonumber(ARGV[7])
local stored = redis.call('GET', KEYS[7])
local watermark = at
if stored and tonumber(stored) > at then watermark = tonumber(stored) else redis.call('SET', KEYS[7], ARGV[7]) end
local bucket = tonumber(ARGV[8])
if bucket >= math.floor(watermark / tonumber(ARGV[9])) - tonumber(ARGV[10]) + 1 then
  redis.call('HINCRBY', KEYS[9], ARGV[2], 1)
  redis.call('HINCRBY', KEYS[10], ARGV[3], 1)
  redis.call('HINCRBY', KEYS[12], ARGV[4], 1)
  if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[11], ARGV[2], 1) end
  redis.call('ZADD', KEYS[8], bucket, ARGV[8])
end
return 1
"""

# KEYS: seen, du, versions; ARGV: ttl, mixture version, before, after, version
_OBSERVE_UTILITY = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[2], ARGV[2] .. ':chunks', 1)
redis.call('HINCRBYFLOAT', KEYS[2], ARGV[2] .. ':before', ARGV[3])
redis.call('HINCRBYFLOAT', KEYS[2], ARGV[2] .. ':after', ARGV[4])
redis.call('SADD', KEYS[3], ARGV[5])
return 1
"""


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _decode(stored: dict) -> dict[str, int]:
    return {_text(k): int(v) for k, v in stored.items()}


class RedisRiskTables(_RedisStore, RiskTables):
    def __init__(self, client: redis.Redis, tenant: str, seen_ttl_s: int = 7 * 86400, window_s: float = 3600.0,
                 bucket_s: float = 60.0):
        _RedisStore.__init__(self, client, tenant, "audit")
        RiskTables.__init__(self, window_s, bucket_s)
        if seen_ttl_s <= 0:
            raise ValueError("seen_ttl_s must be positive")
        self.seen_ttl_s = int(seen_ttl_s)
        self._observe = client.register_script(_OBSERVE)
        self._observe_utility = client.register_script(_OBSERVE_UTILITY)

    def _hashes(self, version: str, *bucket: int) -> list[str]:
        where = ("w", *bucket) if bucket else ()
        return [self.key("risk", version, *where, name) for name in _NAMES]

    @_unavailable_on_connection_error
    def observe(self, version: str, observations: list[RiskObservation]) -> int:
        if not observations:
            return 0
        hashes, versions = self._hashes(version), self.key("risk", "versions")
        watermark, index = self.key("risk", version, "watermark"), self.key("risk", version, "w", "buckets")
        pipe = self.r.pipeline(transaction=False)
        for o in observations:
            bucket = self.bucket(o.at)
            keys = [self.key("risk", version, "seen", o.chunk_key), *hashes, versions, watermark, index,
                    *self._hashes(version, bucket)]
            args = [self.seen_ttl_s, o.before, o.after, f"{o.after}|{o.doc}", "1" if o.swapped else "0", version,
                    repr(float(o.at)), bucket, repr(self.bucket_s), self.span]
            self._observe(keys=keys, args=args, client=pipe)
        new = sum(int(x) for x in pipe.execute())
        self._prune(version)
        return new

    def _prune(self, version: str) -> None:
        """Delete the buckets that fell out of the window (idempotent; any worker may do it)."""
        stored = self.r.get(self.key("risk", version, "watermark"))
        if stored is None:
            return
        index = self.key("risk", version, "w", "buckets")
        old = [int(_text(b)) for b in self.r.zrangebyscore(index, "-inf", f"({self.first_live(float(stored))}")]
        if old:
            pipe = self.r.pipeline(transaction=True)
            for b in old:
                pipe.delete(*self._hashes(version, b))
            pipe.zrem(index, *old)
            pipe.execute()

    @_unavailable_on_connection_error
    def versions(self) -> list[str]:
        return sorted(_text(v) for v in self.r.smembers(self.key("risk", "versions")))

    @_unavailable_on_connection_error
    def table(self, version: str) -> RiskTable:
        pipe = self.r.pipeline(transaction=True)
        for key in self._hashes(version):
            pipe.hgetall(key)
        return RiskTable(*(_decode(x) for x in pipe.execute()))

    @_unavailable_on_connection_error
    def window(self, version: str) -> WindowTable:
        stored = self.r.get(self.key("risk", version, "watermark"))
        if stored is None:
            return self._window(None, {})
        watermark = float(stored)
        live = [int(_text(b)) for b in self.r.zrangebyscore(self.key("risk", version, "w", "buckets"),
                                                             self.first_live(watermark), "+inf")]
        pipe = self.r.pipeline(transaction=True)
        for b in live:
            for key in self._hashes(version, b):
                pipe.hgetall(key)
        stored_tables = [_decode(x) for x in pipe.execute()]
        buckets = {b: RiskTable(*stored_tables[4 * i:4 * i + 4]) for i, b in enumerate(live)}
        return self._window(watermark, buckets)

    @_unavailable_on_connection_error
    def observe_utility(self, version: str, observations: list[UtilityObservation]) -> int:
        if not observations:
            return 0
        du, versions = self.key("risk", version, "du"), self.key("risk", "versions")
        pipe = self.r.pipeline(transaction=False)
        for o in observations:
            keys = [self.key("risk", version, "du", "seen", o.chunk_key), du, versions]
            args = [self.seen_ttl_s, int(o.model_version), repr(float(o.before)), repr(float(o.after)), version]
            self._observe_utility(keys=keys, args=args, client=pipe)
        return sum(int(x) for x in pipe.execute())

    @_unavailable_on_connection_error
    def utility(self, version: str) -> dict[int, UtilitySums]:
        out: dict[int, UtilitySums] = {}
        for field_, value in self.r.hgetall(self.key("risk", version, "du")).items():
            mv, _, name = _text(field_).partition(":")
            sums = out.setdefault(int(mv), UtilitySums())
            if name == "chunks":
                sums.chunks = int(value)
            else:
                setattr(sums, name, float(_text(value)))
        return out
