"""audit: counts on what is released, for dashboards (records, entities per type, dead letters
per stage). Counts only, never text. Risk measures (DR, uniques) build on these running tables."""
from __future__ import annotations

import time
from typing import Any, Sequence

from .. import topics
from ..stores.base import Counters
from .base import Emit, Stage


class AuditStage(Stage):
    name = "audit"
    version = "1"
    inputs = (topics.CHUNKS_SANITIZED, topics.DEAD_LETTER)

    def __init__(self, counters: Counters, snapshot_every_s: float = 10.0, clock=time.time):
        self.counters = counters
        self.snapshot_every_s = snapshot_every_s
        self.clock = clock
        self._last_snapshot = 0.0

    def process(self, items: Sequence[tuple[Any, dict[str, Any]]]) -> list[list[Emit] | Exception]:
        deltas: dict[str, int] = {}

        def bump(name: str, by: int = 1) -> None:
            deltas[name] = deltas.get(name, 0) + by

        for topic, record in items:
            if topic is topics.DEAD_LETTER:
                bump(f"dead_letters.{record['stage']}")
                continue
            bump("chunks")
            if record["chunk_index"] == record["chunk_count"] - 1:
                bump("documents")
            for entity in record["entities"]:
                bump(f"entities.{entity['type']}")
                if entity.get("surrogate") is not None:
                    bump(f"replaced.{entity['type']}")
            for change in record["changes"]:
                bump(f"operators.{change['operator']}")
        self.counters.incr(deltas)
        return [[] for _ in items]

    def report(self) -> dict[str, Any]:
        """The current snapshot (schemas/audit-metrics.v1.json)."""
        counts = self.counters.snapshot()

        def group(prefix: str) -> dict[str, int]:
            return {k[len(prefix):]: v for k, v in sorted(counts.items()) if k.startswith(prefix)}

        return {
            "emitted_at": self.clock(),
            "chunks": counts.get("chunks", 0),
            "documents": counts.get("documents", 0),
            "entities_by_type": group("entities."),
            "replaced_by_type": group("replaced."),
            "dead_letters_by_stage": group("dead_letters."),
            "operators": group("operators."),
        }

    def tick(self, now: float) -> list[Emit]:
        if now - self._last_snapshot < self.snapshot_every_s:
            return []
        self._last_snapshot = now
        key = f"audit|{int(now)}"
        return [Emit(topics.AUDIT_METRICS, key, "audit", self.report())]
