"""Running risk tables of the audit stage (paper 000 §2.4): per release version,

* ``before``: tuple digest on the swapped categories J before sanitization (swap log ``tuple_digest``)
  -> chunks (the class sizes n_1..n_K of the marginal table z_J, eq. 2.9);
* ``after``: digest of the released tuple -> chunks (k-anonymity of what is released);
* ``swapped``: before-digest -> chunks of it that were swapped or generalized (the swapped sample
  uniques of eq. 2.16 are the digests with before = 1 and swapped >= 1);
* ``after_docs``: ``{after digest}|{document digest}`` -> chunks (l-diversity w.r.t. the document).

Each table is kept over all time and over a **sliding window** of event time. The window is cut in
buckets of ``bucket_s`` seconds (bucket b holds the observations with ``floor(at / bucket_s) = b``, ``at``
the record's event time: the swap log's ``released_at``); the window table is the sum of the live
buckets, the ``span = ceil(window_s / bucket_s)`` buckets ending with the bucket of the version's
*watermark* (the latest event time observed). Older buckets are deleted as the watermark moves; an
observation whose bucket is no longer live counts over all time only. Because buckets follow event time,
not arrival time, a replay of the same records gives the same windows (up to records that arrive
more than ``window_s`` behind the watermark, which count in all time only).

Utility sums (DU, paper 000 eq. 2.19), per release version and per mixture version that assigned the
chunks: the sum over changed chunks of log f(x | l, phi) before and of log f(x~ | l, phi) after, and
how many chunks; DU = after / before is then restart-safe.

Counting is idempotent per (version, chunk key), for the tables (all time and window together) and
apart for the utility sums: a redelivered record counts once. Digests only, never values.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RiskObservation:
    """One swap-log record as the tables see it (digests only) and its event time ``at`` (seconds)."""

    chunk_key: str
    before: str
    after: str
    doc: str
    swapped: bool
    at: float


@dataclass(frozen=True, slots=True)
class UtilityObservation:
    """One changed chunk: log f(x | l, phi) of its embedding before and of its re-embedded released text
    after, under the mixture version ``model_version`` that assigned its component l."""

    chunk_key: str
    model_version: int
    before: float
    after: float


@dataclass(slots=True)
class RiskTable:
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    swapped: dict[str, int] = field(default_factory=dict)
    after_docs: dict[str, int] = field(default_factory=dict)

    def add(self, o: RiskObservation) -> None:
        _bump(self.before, o.before)
        _bump(self.after, o.after)
        _bump(self.after_docs, f"{o.after}|{o.doc}")
        if o.swapped:
            _bump(self.swapped, o.before)

    def merge(self, other: "RiskTable") -> None:
        for mine, theirs in ((self.before, other.before), (self.after, other.after),
                             (self.swapped, other.swapped), (self.after_docs, other.after_docs)):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count


@dataclass(slots=True)
class WindowTable:
    """The window's table and the event-time interval [start, end) it covers (None: nothing observed)."""

    table: RiskTable
    start: float | None
    end: float | None


@dataclass(slots=True)
class UtilitySums:
    chunks: int = 0
    before: float = 0.0
    after: float = 0.0


def _bump(table: dict[str, int], key: str) -> None:
    table[key] = table.get(key, 0) + 1


class RiskTables(ABC):
    def __init__(self, window_s: float, bucket_s: float):
        if window_s <= 0 or bucket_s <= 0:
            raise ValueError("window_s and bucket_s must be positive")
        self.window_s = float(window_s)
        self.bucket_s = float(bucket_s)
        self.span = math.ceil(self.window_s / self.bucket_s)

    def bucket(self, at: float) -> int:
        return math.floor(at / self.bucket_s)

    def first_live(self, watermark: float) -> int:
        """The oldest live bucket when the latest event time seen is ``watermark``."""
        return self.bucket(watermark) - self.span + 1

    def _window(self, watermark: float | None, buckets: dict[int, RiskTable]) -> WindowTable:
        total = RiskTable()
        if watermark is None:
            return WindowTable(total, None, None)
        first = self.first_live(watermark)
        for b, table in buckets.items():
            if b >= first:
                total.merge(table)
        return WindowTable(total, first * self.bucket_s, (self.bucket(watermark) + 1) * self.bucket_s)

    @abstractmethod
    def observe(self, version: str, observations: list[RiskObservation]) -> int:
        """Count the observations not counted before; return how many were new."""

    @abstractmethod
    def versions(self) -> list[str]: ...

    @abstractmethod
    def table(self, version: str) -> RiskTable:
        """All time."""

    @abstractmethod
    def window(self, version: str) -> WindowTable: ...

    @abstractmethod
    def observe_utility(self, version: str, observations: list[UtilityObservation]) -> int:
        """Add the observations not added before to the sums; return how many were new."""

    @abstractmethod
    def utility(self, version: str) -> dict[int, UtilitySums]:
        """Sums per mixture version."""


class InMemoryRiskTables(RiskTables):
    def __init__(self, window_s: float = 3600.0, bucket_s: float = 60.0) -> None:
        super().__init__(window_s, bucket_s)
        self._tables: dict[str, RiskTable] = {}
        self._buckets: dict[str, dict[int, RiskTable]] = {}
        self._watermark: dict[str, float] = {}
        self._seen: set[tuple[str, str]] = set()
        self._utility: dict[str, dict[int, UtilitySums]] = {}
        self._utility_seen: set[tuple[str, str]] = set()

    def observe(self, version: str, observations: list[RiskObservation]) -> int:
        new = 0
        for o in observations:
            if (version, o.chunk_key) in self._seen:
                continue
            self._seen.add((version, o.chunk_key))
            self._tables.setdefault(version, RiskTable()).add(o)
            watermark = max(self._watermark.get(version, o.at), o.at)
            self._watermark[version] = watermark
            buckets = self._buckets.setdefault(version, {})
            if self.bucket(o.at) >= self.first_live(watermark):
                buckets.setdefault(self.bucket(o.at), RiskTable()).add(o)
            for b in [b for b in buckets if b < self.first_live(watermark)]:
                del buckets[b]
            new += 1
        return new

    def versions(self) -> list[str]:
        return sorted(set(self._tables) | set(self._utility))

    def table(self, version: str) -> RiskTable:
        t = RiskTable()
        t.merge(self._tables.get(version, RiskTable()))
        return t

    def window(self, version: str) -> WindowTable:
        return self._window(self._watermark.get(version), self._buckets.get(version, {}))

    def observe_utility(self, version: str, observations: list[UtilityObservation]) -> int:
        new = 0
        for o in observations:
            if (version, o.chunk_key) in self._utility_seen:
                continue
            self._utility_seen.add((version, o.chunk_key))
            sums = self._utility.setdefault(version, {}).setdefault(o.model_version, UtilitySums())
            sums.chunks += 1
            sums.before += o.before
            sums.after += o.after
            new += 1
        return new

    def utility(self, version: str) -> dict[int, UtilitySums]:
        return {mv: UtilitySums(s.chunks, s.before, s.after) for mv, s in self._utility.get(version, {}).items()}
