"""The swap core's state behind two small interfaces, with in-process implementations.

``PoolStore`` — chunks waiting for a partner, one pool per cluster (mixture model version,
component; paper 000 §2.2.1: uniform weights inside a cluster, zero outside). Bounded by the caller
(the processor evicts the oldest entry before adding to a full pool); the Redis implementation
(``stores/redis_swap.py``) also puts a TTL on idle pools. Besides the pools it keeps:

* *done* markers: chunks already released through a claim, so an at-least-once redelivery of one
  is ignored instead of being pooled or paired a second time;
* an *outbox*: every output that consumed pooled chunks is stored, in the same atomic step as the
  claim, under a token until the caller acknowledges that it reached the broker (``ack``). After a
  crash, ``outbox()`` hands the unacknowledged outputs back, so a pooled chunk is never lost between
  its claim and the produce of its rewritten version. There is one outbox per ``box``: ``""`` is the
  shared one (at-least-once: ``SwapProcessor.recover`` re-emits all of it); with exactly-once every
  input partition has its own (``box`` = ``"topic|partition"``), and the token says which transaction
  of that partition carries the output (``SwapProcessor.resolve``), so only the partition's owner
  re-emits it, and only if Kafka says that transaction did not commit.

``claim`` is the only way an entry leaves a pool: all of the given entries or none, so two workers
never take the same partner (Redis: one Lua script).

``ReplacementMemory`` — per document, what each entity was changed into the first time one of its
chunks was released (entity id → new value): the later chunks of the document give the entity the same
value, so all mentions of one entity change the same way (coreference kept). First writer wins.

``TupleCounts`` — running counts of chunk tuples on the swapped categories (cells of the marginal
table z_J, §2.4.3), keyed by an order-free digest; ``observe`` is idempotent per chunk so a redelivered
chunk is not counted twice. The risk audit's running tables can stand behind this interface.
"""
from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

PENDING = "pending"
DONE = "done"


@dataclass(slots=True)
class PoolEntry:
    """What the pairing compares about a pending chunk (no text: digests and flags only)."""

    chunk_id: str
    doc_id: str
    rare: bool
    reason: str  # why it waits: "rare" or "selected"
    j_digest: str  # tuple on the swapped categories, before the swap
    u_digest: str  # released values on the other categories
    presence: list[str]  # slots (kinds of the swapped categories) that have a value, sorted
    enqueued_at: float
    seen_count: int
    shape: list[int] = field(default_factory=list)  # number of entities per slot in presence
    slot_digests: dict[str, str] = field(default_factory=dict)  # slot -> digest of its values
    source: str = ""  # exactly-once: "topic|partition" of the chunk's input record (its owner expires it)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> "PoolEntry":
        return cls(**json.loads(raw))


class PoolStore(ABC):
    @abstractmethod
    def status(self, pool: str, chunk_id: str) -> str | None:
        """``PENDING`` (waiting in ``pool``), ``DONE`` (released through a claim) or None."""

    @abstractmethod
    def add(self, pool: str, entry: PoolEntry, chunk: dict[str, Any], ttl_s: int) -> bool:
        """Put a chunk (wire form) in ``pool``; False (and nothing changes) when it is already
        pending there or already done."""

    @abstractmethod
    def entries(self, pool: str) -> list[PoolEntry]:
        """The pool's entries, oldest first."""

    @abstractmethod
    def load(self, pool: str, chunk_id: str) -> dict[str, Any] | None:
        """The pending chunk's wire form (None if it is not pending any more)."""

    @abstractmethod
    def claim(self, pool: str, chunk_ids: list[str], done_ids: list[str], token: str,
              payload: dict[str, Any], ttl_s: int, box: str = "") -> bool:
        """Atomically, if every one of ``chunk_ids`` is pending in ``pool`` and none of ``done_ids`` is done:
        remove them, mark them and ``done_ids`` done, and keep ``payload`` in the outbox ``box`` under
        ``token``. Otherwise change nothing and return False."""

    @abstractmethod
    def pools(self) -> list[str]:
        """Pools that may hold entries."""

    @abstractmethod
    def outbox(self, box: str = "") -> list[tuple[str, dict[str, Any]]]:
        """Unacknowledged outputs (token, payload) of the outbox ``box``, by token."""

    @abstractmethod
    def ack(self, tokens: list[str], box: str = "") -> None:
        """Forget outbox entries once their records are on the broker."""


class ReplacementMemory(ABC):
    @abstractmethod
    def recall(self, doc_id: str) -> dict[str, str]:
        """Entity id → the value it was changed into in an earlier released chunk of ``doc_id``."""

    @abstractmethod
    def remember(self, doc_id: str, assigned: dict[str, str], ttl_s: int) -> dict[str, str]:
        """Record ``assigned`` where the entity has no value yet (first writer wins); return the document's
        memory afterwards."""


class InMemoryReplacementMemory(ReplacementMemory):
    def __init__(self) -> None:
        self._docs: dict[str, dict[str, str]] = {}

    def recall(self, doc_id: str) -> dict[str, str]:
        return dict(self._docs.get(doc_id, {}))

    def remember(self, doc_id: str, assigned: dict[str, str], ttl_s: int) -> dict[str, str]:
        memory = self._docs.setdefault(doc_id, {})
        for ref, value in assigned.items():
            memory.setdefault(ref, value)
        return dict(memory)


class TupleCounts(ABC):
    @abstractmethod
    def observe(self, scope: str, chunk_id: str, digest: str, ttl_s: int) -> int:
        """Count the chunk's tuple once (idempotent per chunk); return the tuple's count."""

    @abstractmethod
    def count(self, scope: str, digest: str) -> int: ...


class InMemoryPoolStore(PoolStore):
    """Process-local pools (embedded runner, tests)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._pools: dict[str, dict[str, tuple[PoolEntry, dict[str, Any]]]] = {}
        self._done: dict[str, float] = {}  # chunk id -> expiry
        self._outbox: dict[str, dict[str, dict[str, Any]]] = {}  # box -> token -> payload
        self._clock = clock

    def status(self, pool: str, chunk_id: str) -> str | None:
        if chunk_id in self._pools.get(pool, {}):
            return PENDING
        expiry = self._done.get(chunk_id)
        if expiry is not None and expiry > self._clock():
            return DONE
        return None

    def add(self, pool: str, entry: PoolEntry, chunk: dict[str, Any], ttl_s: int) -> bool:
        if self.status(pool, entry.chunk_id) is not None:
            return False
        self._pools.setdefault(pool, {})[entry.chunk_id] = (entry, json.loads(json.dumps(chunk)))
        return True

    def entries(self, pool: str) -> list[PoolEntry]:
        items = [e for e, _ in self._pools.get(pool, {}).values()]
        return sorted(items, key=lambda e: (e.enqueued_at, e.chunk_id))

    def load(self, pool: str, chunk_id: str) -> dict[str, Any] | None:
        got = self._pools.get(pool, {}).get(chunk_id)
        return None if got is None else json.loads(json.dumps(got[1]))

    def claim(self, pool: str, chunk_ids: list[str], done_ids: list[str], token: str,
              payload: dict[str, Any], ttl_s: int, box: str = "") -> bool:
        members = self._pools.get(pool, {})
        if not all(c in members for c in chunk_ids):
            return False
        now = self._clock()
        if any(self._done.get(c, 0) > now for c in done_ids):
            return False
        for c in chunk_ids:
            del members[c]
        if not members:
            self._pools.pop(pool, None)
        expiry = self._clock() + ttl_s
        for c in [*chunk_ids, *done_ids]:
            self._done[c] = expiry
        self._outbox.setdefault(box, {})[token] = json.loads(json.dumps(payload))
        if len(self._done) > 4096:
            now = self._clock()
            self._done = {c: t for c, t in self._done.items() if t > now}
        return True

    def pools(self) -> list[str]:
        return sorted(self._pools)

    def outbox(self, box: str = "") -> list[tuple[str, dict[str, Any]]]:
        return sorted(self._outbox.get(box, {}).items())

    def ack(self, tokens: list[str], box: str = "") -> None:
        stored = self._outbox.get(box, {})
        for t in tokens:
            stored.pop(t, None)


class InMemoryTupleCounts(TupleCounts):
    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], int] = {}
        self._seen: set[tuple[str, str]] = set()

    def observe(self, scope: str, chunk_id: str, digest: str, ttl_s: int) -> int:
        if (scope, chunk_id) not in self._seen:
            self._seen.add((scope, chunk_id))
            self._counts[(scope, digest)] = self._counts.get((scope, digest), 0) + 1
        return self._counts.get((scope, digest), 0)

    def count(self, scope: str, digest: str) -> int:
        return self._counts.get((scope, digest), 0)

    def table(self, scope: str) -> dict[str, int]:
        """digest -> count (for reports)."""
        return {d: n for (s, d), n in self._counts.items() if s == scope}
