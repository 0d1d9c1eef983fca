"""Redis implementations of the swap core's stores (``anonstream.swap.stores``): restart-safe pools
shared by all swap workers, and the running tuple counts.

Keys: the pool store's under ``anonstream:{tenant|swap}:`` (one hash tag: a claim's script touches a pool, the
outbox, the pool set and done markers, so on a Redis Cluster they share one slot); the tuple counts' and the
memory's under ``anonstream:tenant:swap:`` (the counts of one scope share the tag ``{tenant|swap|scope}``).

| key | type | holds |
| --- | --- | --- |
| ``{tenant|swap}:pools`` | set | names of pools that may hold entries |
| ``{tenant|swap}:pool:{pool}:idx`` | hash | chunk id → entry (digests and flags, no text) |
| ``{tenant|swap}:pool:{pool}:age`` | zset | chunk id → enqueue time (oldest first) |
| ``{tenant|swap}:pool:{pool}:data`` | hash | chunk id → chunk (wire JSON) |
| ``{tenant|swap}:done:{chunk id}`` | string + TTL | the chunk left through a claim: redeliveries are ignored |
| ``{tenant|swap}:outbox`` | hash | token → output stashed by a claim, until acknowledged (at-least-once) |
| ``{tenant|swap}:outbox:{topic}|{partition}`` | hash | the same, per input partition (exactly-once; the token names the transaction) |
| ``tenant:swap:counts:{tenant|swap|scope}:{bucket}`` | hash + TTL | tuple digest → count, for one time bucket of the counting window |
| ``tenant:swap:seen:{tenant|swap|scope}:{chunk id}`` | string + TTL | the chunk was counted |
| ``tenant:swap:memory:{doc id}`` | hash + TTL | entity id → the value it was changed into (first writer wins, HSETNX) |

Adding, claiming and counting are Lua scripts, so each is atomic: a claim takes all the given
entries or none (two workers never take the same partner), and stores the output in the outbox in
the same step. The three keys of a pool get ``ttl_s`` on every add, so the pools of a retired mixture
version disappear on their own; with the default TTL (a day) far above the longest wait, a live
pool never expires under a running service.

Tuple counts cover a sliding window (``window_s``, default a week) in ``buckets`` time buckets: a chunk is
counted in the current bucket, a count sums the buckets of the window, and each bucket expires once the window
has passed it. So the counts stay bounded on an endless stream (a digest per counted chunk of the window), and
"rare" means rare among the chunks of the last ``window_s`` seconds.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import redis

from .. import serde
from ..swap.stores import DONE, PENDING, PoolEntry, PoolStore, ReplacementMemory, TupleCounts
from .redis_state import _RedisStore, _unavailable_on_connection_error, slot_tag

_ADD = """
if redis.call('EXISTS', KEYS[5]) == 1 then return 0 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('SADD', KEYS[4], ARGV[6])
for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[5]) end
return 1
"""

# KEYS: idx, age, data, outbox, pools, done keys (of the n ids, then of the done ids)...;
# ARGV: ttl, token, payload, pool, n, ids...
_CLAIM = """
local n = tonumber(ARGV[5])
for i = 1, n do
  if redis.call('HEXISTS', KEYS[1], ARGV[5 + i]) == 0 then return 0 end
end
for i = 6 + n, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, n do
  local id = ARGV[5 + i]
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
for i = 6, #KEYS do redis.call('SET', KEYS[i], '1', 'EX', ARGV[1]) end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[5], ARGV[4]) end
return 1
"""

_OBSERVE = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
local total = 0
for i = 2, #KEYS do
  total = total + tonumber(redis.call('HGET', KEYS[i], ARGV[1]) or '0')
end
return total
"""


class RedisSwapPoolStore(_RedisStore, PoolStore):
    def __init__(self, client: redis.Redis, tenant: str):
        super().__init__(client, tenant, "swap", one_slot=True)
        self._add = client.register_script(_ADD)
        self._claim = client.register_script(_CLAIM)

    def _pool_keys(self, pool: str) -> tuple[str, str, str]:
        return self.key("pool", pool, "idx"), self.key("pool", pool, "age"), self.key("pool", pool, "data")

    @_unavailable_on_connection_error
    def status(self, pool: str, chunk_id: str) -> str | None:
        idx, _, _ = self._pool_keys(pool)
        pipe = self.r.pipeline(transaction=True)
        pipe.hexists(idx, chunk_id)
        pipe.exists(self.key("done", chunk_id))
        pending, done = pipe.execute()
        if pending:
            return PENDING
        return DONE if done else None

    @_unavailable_on_connection_error
    def add(self, pool: str, entry: PoolEntry, chunk: dict[str, Any], ttl_s: int) -> bool:
        idx, age, data = self._pool_keys(pool)
        keys = [idx, age, data, self.key("pools"), self.key("done", entry.chunk_id)]
        args = [entry.chunk_id, entry.to_json(), repr(float(entry.enqueued_at)), serde.dumps(chunk), int(ttl_s), pool]
        return bool(self._add(keys=keys, args=args))

    @_unavailable_on_connection_error
    def entries(self, pool: str) -> list[PoolEntry]:
        idx, age, _ = self._pool_keys(pool)
        pipe = self.r.pipeline(transaction=True)
        pipe.zrange(age, 0, -1)
        pipe.hgetall(idx)
        order, stored = pipe.execute()
        return [PoolEntry.from_json(stored[cid]) for cid in order if cid in stored]

    @_unavailable_on_connection_error
    def load(self, pool: str, chunk_id: str) -> dict[str, Any] | None:
        _, _, data = self._pool_keys(pool)
        raw = self.r.hget(data, chunk_id)
        return None if raw is None else serde.loads(raw)

    @_unavailable_on_connection_error
    def claim(self, pool: str, chunk_ids: list[str], done_ids: list[str], token: str,
              payload: dict[str, Any], ttl_s: int, box: str = "") -> bool:
        idx, age, data = self._pool_keys(pool)
        keys = [idx, age, data, self._outbox_key(box), self.key("pools"),
                *(self.key("done", c) for c in [*chunk_ids, *done_ids])]
        args = [int(ttl_s), token, serde.dumps(payload), pool, len(chunk_ids), *chunk_ids]
        return bool(self._claim(keys=keys, args=args))

    @_unavailable_on_connection_error
    def pools(self) -> list[str]:
        return sorted(p.decode() for p in self.r.smembers(self.key("pools")))

    def _outbox_key(self, box: str) -> str:
        return self.key("outbox", box) if box else self.key("outbox")

    @_unavailable_on_connection_error
    def outbox(self, box: str = "") -> list[tuple[str, dict[str, Any]]]:
        stored = self.r.hgetall(self._outbox_key(box))
        return [(token.decode(), serde.loads(raw)) for token, raw in sorted(stored.items())]

    @_unavailable_on_connection_error
    def ack(self, tokens: list[str], box: str = "") -> None:
        if tokens:
            self.r.hdel(self._outbox_key(box), *tokens)


class RedisTupleCounts(_RedisStore, TupleCounts):
    """Running counts of tuples on the swapped categories over a sliding window (module docstring)."""

    def __init__(self, client: redis.Redis, tenant: str, window_s: int = 7 * 86400, buckets: int = 7,
                 clock: Callable[[], float] = time.time):
        super().__init__(client, tenant, "swap")
        if window_s <= 0 or buckets <= 0:
            raise ValueError("the counting window and its bucket count must be positive")
        self._observe = client.register_script(_OBSERVE)
        self.bucket_s = max(1, window_s // buckets)
        self.buckets = buckets
        self.clock = clock

    def _bucket_keys(self, scope: str) -> list[str]:
        """The window's buckets, current first."""
        now = int(self.clock()) // self.bucket_s
        return [self.key("counts", self._scope_tag(scope), now - i) for i in range(self.buckets)]

    def _scope_tag(self, scope: str) -> str:
        """One scope's marker and buckets share a slot (one script touches them)."""
        return slot_tag(self.tenant, "swap", scope)

    @_unavailable_on_connection_error
    def observe(self, scope: str, chunk_id: str, digest: str, ttl_s: int) -> int:
        keys = [self.key("seen", self._scope_tag(scope), chunk_id), *self._bucket_keys(scope)]
        return int(self._observe(keys=keys, args=[digest, int(ttl_s), self.bucket_s * (self.buckets + 1)]))

    @_unavailable_on_connection_error
    def count(self, scope: str, digest: str) -> int:
        pipe = self.r.pipeline(transaction=False)
        for key in self._bucket_keys(scope):
            pipe.hget(key, digest)
        return sum(int(v or 0) for v in pipe.execute())


class RedisReplacementMemory(_RedisStore, ReplacementMemory):
    """Per-document entity replacements shared by all swap workers (HSETNX: the first release decides)."""

    def __init__(self, client: redis.Redis, tenant: str):
        super().__init__(client, tenant, "swap")

    @_unavailable_on_connection_error
    def recall(self, doc_id: str) -> dict[str, str]:
        return {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                for k, v in self.r.hgetall(self.key("memory", doc_id)).items()}

    @_unavailable_on_connection_error
    def remember(self, doc_id: str, assigned: dict[str, str], ttl_s: int) -> dict[str, str]:
        key = self.key("memory", doc_id)
        pipe = self.r.pipeline(transaction=True)
        for ref, value in assigned.items():
            pipe.hsetnx(key, ref, value)
        pipe.expire(key, int(ttl_s))
        pipe.hgetall(key)
        memory = pipe.execute()[-1]
        return {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                for k, v in memory.items()}
