"""Redis implementation of the audit stage's risk tables (``stores/risk.py``).

Keys (all under ``anonstream:{tenant|audit}:risk:``, one hash tag: the script below touches a version's tables
and the set of versions, so on a Redis Cluster they share one slot): ``versions`` (set of release versions);
``{version}:before`` / ``:after`` / ``:swapped`` / ``:after_docs`` (hashes, digest -> count, HINCRBY; all time);
``{version}:watermark`` (latest event time seen), ``{version}:w:buckets`` (sorted set of the window's bucket
numbers) and ``{version}:w:{bucket}:before`` / ``:after`` / ``:swapped`` / ``:after_docs`` (the window's
buckets, deleted once they fall out of the window); ``{version}:seen:{chunk key}`` (string + TTL: the chunk
was counted; SET NX as in ``redis_swap.RedisTupleCounts``); ``{version}:du`` (hash: ``{mixture version}:chunks``
/ ``:before`` / ``:after``, HINCRBY / HINCRBYFLOAT) and ``{version}:du:seen:{chunk key}``. A marker lives
``seen_ttl_s``.

One Lua script decides per observation "new?", bumps all time, moves the watermark and bumps the record's
bucket if it is live, atomically: two audit workers never count a chunk twice nor write into a bucket the
other has pruned (the watermark only grows, so a bucket once out of the window stays out).
"""
from __future__ import annotations

import redis

from .redis_state import _RedisStore, _unavailable_on_connection_error
from .risk import RiskObservation, RiskTable, RiskTables, UtilityObservation, UtilitySums, WindowTable

_NAMES = ("before", "after", "swapped", "after_docs")

# One call observes a batch (one script per batch: redis-py's cluster pipeline refuses EVALSHA, and the keys share a
# slot anyway). KEYS: before, after, swapped, after_docs, versions, watermark, buckets index, then per observation
# seen, window before, after, swapped, after_docs. ARGV: ttl, version, bucket_s, span, then per observation
# before, after, pair, swapped, at, bucket. Returns how many observations were new.
_OBSERVE = """
local new = 0
for i = 0, (#KEYS - 7) / 5 - 1 do
  local k, a = 7 + 5 * i, 4 + 6 * i
  if redis.call('SET', KEYS[k + 1], '1', 'NX', 'EX', ARGV[1]) then
    new = new + 1
    redis.call('HINCRBY', KEYS[1], ARGV[a + 1], 1)
    redis.call('HINCRBY', KEYS[2], ARGV[a + 2], 1)
    redis.call('HINCRBY', KEYS[4], ARGV[a + 3], 1)
    if ARGV[a + 4] == '1' then redis.call('HINCRBY', KEYS[3], ARGV[a + 1], 1) end
    redis.call('SADD', KEYS[5], ARGV[2])
    local at = tonumber(ARGV[a + 5])
    local stored = redis.call('GET', KEYS[6])
    local watermark = at
    if stored and tonumber(stored) > at then watermark = tonumber(stored) else redis.call('SET', KEYS[6], ARGV[a + 5]) end
    local bucket = tonumber(ARGV[a + 6])
    if bucket >= math.floor(watermark / tonumber(ARGV[3])) - tonumber(ARGV[4]) + 1 then
      redis.call('HINCRBY', KEYS[k + 2], ARGV[a + 1], 1)
      redis.call('HINCRBY', KEYS[k + 3], ARGV[a + 2], 1)
      redis.call('HINCRBY', KEYS[k + 5], ARGV[a + 3], 1)
      if ARGV[a + 4] == '1' then redis.call('HINCRBY', KEYS[k + 4], ARGV[a + 1], 1) end
      redis.call('ZADD', KEYS[7], bucket, ARGV[a + 6])
    end
  end
end
return new
"""

# KEYS: du, versions, then per observation seen; ARGV: ttl, version, then per observation mixture version, before,
# after. Returns how many observations were new.
_OBSERVE_UTILITY = """
local new = 0
for i = 0, #KEYS - 3 do
  local a = 2 + 3 * i
  if redis.call('SET', KEYS[3 + i], '1', 'NX', 'EX', ARGV[1]) then
    new = new + 1
    redis.call('HINCRBY', KEYS[1], ARGV[a + 1] .. ':chunks', 1)
    redis.call('HINCRBYFLOAT', KEYS[1], ARGV[a + 1] .. ':before', ARGV[a + 2])
    redis.call('HINCRBYFLOAT', KEYS[1], ARGV[a + 1] .. ':after', ARGV[a + 3])
    redis.call('SADD', KEYS[2], ARGV[2])
  end
end
return new
"""

# Observations per script call: a call runs atomically and blocks its Redis meanwhile, so long batches go in parts.
_SCRIPT_BATCH = 256


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _decode(stored: dict) -> dict[str, int]:
    return {_text(k): int(v) for k, v in stored.items()}


class RedisRiskTables(_RedisStore, RiskTables):
    def __init__(self, client: redis.Redis, tenant: str, seen_ttl_s: int = 7 * 86400, window_s: float = 3600.0,
                 bucket_s: float = 60.0):
        _RedisStore.__init__(self, client, tenant, "audit", one_slot=True)
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
        shared_keys = [*self._hashes(version), self.key("risk", "versions"), self.key("risk", version, "watermark"),
                       self.key("risk", version, "w", "buckets")]
        new = 0
        for start in range(0, len(observations), _SCRIPT_BATCH):
            keys, args = list(shared_keys), [self.seen_ttl_s, version, repr(self.bucket_s), self.span]
            for o in observations[start:start + _SCRIPT_BATCH]:
                bucket = self.bucket(o.at)
                keys += [self.key("risk", version, "seen", o.chunk_key), *self._hashes(version, bucket)]
                args += [o.before, o.after, f"{o.after}|{o.doc}", "1" if o.swapped else "0", repr(float(o.at)), bucket]
            new += int(self._observe(keys=keys, args=args))
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
        new = 0
        for start in range(0, len(observations), _SCRIPT_BATCH):
            keys, args = [self.key("risk", version, "du"), self.key("risk", "versions")], [self.seen_ttl_s, version]
            for o in observations[start:start + _SCRIPT_BATCH]:
                keys.append(self.key("risk", version, "du", "seen", o.chunk_key))
                args += [int(o.model_version), repr(float(o.before)), repr(float(o.after))]
            new += int(self._observe_utility(keys=keys, args=args))
        return new

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
