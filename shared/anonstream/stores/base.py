"""Store interfaces the stateful stage cores use, with in-process implementations.

The embedded runner uses the in-process classes here; the services use the Redis ones
(``stores/redis_state.py``) so state survives restarts and is shared by a stage's workers.
A store that cannot be reached raises ``StoreUnavailable``; cores decide what degraded mode means.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


class StoreUnavailable(RuntimeError):
    """The backing store (Redis) cannot be reached right now."""


class StaleLeader(Exception):
    """A leader's write carried a fencing token that is no longer the latest, or its lease is no longer held
    (stores/lease.py): the write was refused."""


@dataclass(frozen=True)
class Fence:
    """What a leader's write carries (stores/lease.py): its lease's value (``owner``) and its fencing token. The
    keys name where a Redis store finds the lease (the same hash slot as the store's own keys); ``verify`` is an
    in-memory store's check (``InMemoryLease.holds``)."""
    owner: str
    token: int
    lease_key: str = ""
    token_key: str = ""
    verify: Callable[["Fence"], bool] | None = field(default=None, compare=False, repr=False)


class DocumentStateStore(ABC):
    """Small per-document state (e.g. the pii stage's entity registry) between a document's chunks."""

    @abstractmethod
    def get(self, doc_id: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def put(self, doc_id: str, state: dict[str, Any]) -> None: ...

    @abstractmethod
    def delete(self, doc_id: str) -> None: ...


class InMemoryDocumentState(DocumentStateStore):
    def __init__(self) -> None:
        self._states: dict[str, dict[str, Any]] = {}

    def get(self, doc_id: str) -> dict[str, Any] | None:
        return self._states.get(doc_id)

    def put(self, doc_id: str, state: dict[str, Any]) -> None:
        self._states[doc_id] = state

    def delete(self, doc_id: str) -> None:
        self._states.pop(doc_id, None)


class PendingChunks(ABC):
    """Chunks of documents being reassembled, keyed by (doc_id, chunk_index): adding one twice is
    harmless (at-least-once input)."""

    @abstractmethod
    def add(self, doc_id: str, chunk_index: int, chunk_count: int, chunk: dict[str, Any], now: float) -> int:
        """Store the chunk; return how many distinct chunks of the document are stored. ``now``
        is remembered for the document's first chunk (see ``overdue``)."""

    @abstractmethod
    def overdue(self, first_seen_before: float) -> list[str]:
        """Documents still incomplete whose first chunk arrived before the given time."""

    @abstractmethod
    def take(self, doc_id: str) -> list[dict[str, Any]]:
        """The stored chunks of the document in chunk order (the document stays stored)."""

    @abstractmethod
    def mark_emitted(self, doc_id: str, fingerprint: str) -> bool:
        """Forget the document's chunks and remember it was emitted; False if it already was."""

    @abstractmethod
    def was_emitted(self, doc_id: str, fingerprint: str) -> bool: ...


class InMemoryPendingChunks(PendingChunks):
    def __init__(self) -> None:
        self._chunks: dict[str, dict[int, dict[str, Any]]] = {}
        self._first_seen: dict[str, float] = {}
        self._emitted: set[tuple[str, str]] = set()

    def add(self, doc_id: str, chunk_index: int, chunk_count: int, chunk: dict[str, Any], now: float) -> int:
        chunks = self._chunks.setdefault(doc_id, {})
        chunks[chunk_index] = chunk
        self._first_seen.setdefault(doc_id, now)
        return len(chunks)

    def overdue(self, first_seen_before: float) -> list[str]:
        return [d for d, t in self._first_seen.items() if t < first_seen_before]

    def take(self, doc_id: str) -> list[dict[str, Any]]:
        chunks = self._chunks.get(doc_id, {})
        return [chunks[i] for i in sorted(chunks)]

    def mark_emitted(self, doc_id: str, fingerprint: str) -> bool:
        self._chunks.pop(doc_id, None)
        self._first_seen.pop(doc_id, None)
        if (doc_id, fingerprint) in self._emitted:
            return False
        self._emitted.add((doc_id, fingerprint))
        return True

    def was_emitted(self, doc_id: str, fingerprint: str) -> bool:
        return (doc_id, fingerprint) in self._emitted


@dataclass(frozen=True, slots=True)
class ModelVersion:
    version: int
    model_bytes: bytes
    info: dict[str, Any]


class ModelRegistry(ABC):
    """Versioned mixture models. ``publish`` is atomic: readers see the old or the new version,
    never a half-written one; the last ``keep`` versions are kept."""

    @abstractmethod
    def current_version(self) -> int | None: ...

    @abstractmethod
    def load(self, version: int) -> ModelVersion | None: ...

    @abstractmethod
    def publish(self, model_bytes: bytes, info: dict[str, Any], fence: Fence | None = None) -> int:
        """Store a new version, make it current, return its number. With a leader's ``fence``
        (stores/lease.py) the store first checks, atomically with the write, that the fence's token is the
        latest one handed out and its lease is held, and raises ``StaleLeader`` otherwise."""


class InMemoryModelRegistry(ModelRegistry):
    def __init__(self, keep: int = 5) -> None:
        self._versions: dict[int, ModelVersion] = {}
        self._current: int | None = None
        self._keep = keep

    def current_version(self) -> int | None:
        return self._current

    def load(self, version: int) -> ModelVersion | None:
        return self._versions.get(version)

    def publish(self, model_bytes: bytes, info: dict[str, Any], fence: Fence | None = None) -> int:
        if fence is not None and (fence.verify is None or not fence.verify(fence)):
            raise StaleLeader(f"fencing token {fence.token} refused")
        version = (self._current or 0) + 1
        self._versions[version] = ModelVersion(version, model_bytes, {**info, "version": version})
        self._current = version
        for old in [v for v in self._versions if v <= version - self._keep]:
            del self._versions[old]
        return version


class Reservoir(ABC):
    """A bounded uniform sample of recent embeddings (reservoir sampling, Vitter's algorithm R)."""

    @abstractmethod
    def add(self, vectors: np.ndarray) -> None: ...

    @abstractmethod
    def sample(self, dim: int | None = None) -> np.ndarray:
        """The rows held; with ``dim`` only those of that width: after the embedding backend changes, the rows of
        the old space (another width: 384 for MiniLM, 256 for the static table) wait to be replaced, unused."""

    @abstractmethod
    def seen(self) -> int: ...


class InMemoryReservoir(Reservoir):
    def __init__(self, capacity: int, seed: int = 0) -> None:
        self.capacity = capacity
        self._rows: list[np.ndarray] = []
        self._seen = 0
        self._rng = random.Random(seed)

    def add(self, vectors: np.ndarray) -> None:
        for row in np.asarray(vectors, dtype=np.float32):
            self._seen += 1
            if len(self._rows) < self.capacity:
                self._rows.append(row)
            else:
                slot = self._rng.randrange(self._seen)
                if slot < self.capacity:
                    self._rows[slot] = row

    def sample(self, dim: int | None = None) -> np.ndarray:
        rows = [r for r in self._rows if dim is None or len(r) == dim]
        return np.stack(rows) if rows else np.empty((0, dim or 0), dtype=np.float32)

    def seen(self) -> int:
        return self._seen


class Counters(ABC):
    """Monotone counters for metrics (names like ``entities.PERSON``)."""

    @abstractmethod
    def incr(self, deltas: dict[str, int]) -> None: ...

    @abstractmethod
    def snapshot(self) -> dict[str, int]: ...


class InMemoryCounters(Counters):
    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def incr(self, deltas: dict[str, int]) -> None:
        for name, delta in deltas.items():
            self._counts[name] = self._counts.get(name, 0) + delta

    def snapshot(self) -> dict[str, int]:
        return dict(self._counts)
