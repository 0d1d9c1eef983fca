"""Running risk tables of the audit stage (paper 000 §2.4): per release version, over all time,

* ``before``: tuple digest on the swapped categories J before sanitization (swap log ``tuple_digest``)
  -> chunks (the class sizes n_1..n_K of the marginal table z_J, eq. 2.9);
* ``after``: digest of the released tuple -> chunks (k-anonymity of what is released);
* ``swapped``: before-digest -> chunks of it that were swapped or generalized (the swapped sample
  uniques of eq. 2.16 are the digests with before = 1 and swapped >= 1);
* ``after_docs``: ``{after digest}|{document digest}`` -> chunks (l-diversity w.r.t. the document).

Counting is idempotent per (version, chunk key): a redelivered swap-log record counts once.
No sliding window: the tables grow with the distinct digests (and class/document pairs) seen.
Digests only, never values.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RiskObservation:
    """One swap-log record as the tables see it (digests only)."""

    chunk_key: str
    before: str
    after: str
    doc: str
    swapped: bool


@dataclass(slots=True)
class RiskTable:
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    swapped: dict[str, int] = field(default_factory=dict)
    after_docs: dict[str, int] = field(default_factory=dict)


class RiskTables(ABC):
    @abstractmethod
    def observe(self, version: str, observations: list[RiskObservation]) -> int:
        """Count the observations not counted before; return how many were new."""

    @abstractmethod
    def versions(self) -> list[str]: ...

    @abstractmethod
    def table(self, version: str) -> RiskTable: ...


def _bump(table: dict[str, int], key: str) -> None:
    table[key] = table.get(key, 0) + 1


class InMemoryRiskTables(RiskTables):
    def __init__(self) -> None:
        self._tables: dict[str, RiskTable] = {}
        self._seen: set[tuple[str, str]] = set()

    def observe(self, version: str, observations: list[RiskObservation]) -> int:
        new = 0
        for o in observations:
            if (version, o.chunk_key) in self._seen:
                continue
            self._seen.add((version, o.chunk_key))
            t = self._tables.setdefault(version, RiskTable())
            _bump(t.before, o.before)
            _bump(t.after, o.after)
            _bump(t.after_docs, f"{o.after}|{o.doc}")
            if o.swapped:
                _bump(t.swapped, o.before)
            new += 1
        return new

    def versions(self) -> list[str]:
        return sorted(self._tables)

    def table(self, version: str) -> RiskTable:
        t = self._tables.get(version, RiskTable())
        return RiskTable(dict(t.before), dict(t.after), dict(t.swapped), dict(t.after_docs))
