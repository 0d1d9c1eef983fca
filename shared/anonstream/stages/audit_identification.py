"""The audit stage's two-stage identification probability (paper 003 §4.3, eq. 7-9; issue 14 item 3).

What it is: an intruder's reference corpus (``ANONSTREAM_AUDIT_ID_TARGETS``, JSONL ``{doc_id, text,
metadata}``) holds, per target, a writing sample of the person behind the released document ``doc_id`` and the
fields the intruder knows (``metadata[f]`` for f in ``ANONSTREAM_AUDIT_ID_FIELDS``). The monitor keeps, per
released document, the known fields as released (the chunk's ``metadata``, synthetic when the synthesis
replaced them) and the style counts of its released chunks (summed, ``risk.identification.style_counts``),
and on each snapshot scores every target whose document has been released: stage 1 on the fields, stage 2 on
the style. One release is seen, so M = 1 here (the offline ``anonstream synth`` report and the harness
average over M copies). In-process like the attack monitor: after a restart it starts empty, at most
``max_docs`` documents (the oldest are forgotten first). Digests and probabilities only, never text.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..risk.identification import style_counts, style_features, two_stage_risk


class IdentificationMonitor:
    def __init__(self, targets: Sequence[tuple[str, tuple[str, ...], np.ndarray]], fields: Sequence[str],
                 threshold: float = 0.09, max_docs: int = 5000):
        if not fields:
            raise ValueError("the intruder's known fields must not be empty")
        self.targets = list(targets)
        self.fields = tuple(fields)
        self.threshold = threshold
        self.max_docs = max_docs
        self._counts: OrderedDict[str, np.ndarray] = OrderedDict()
        self._known: dict[str, tuple[str, ...]] = {}
        self._seen: set[tuple[str, int]] = set()

    @classmethod
    def from_corpus(cls, path: str | Path, fields: Sequence[str], threshold: float = 0.09) -> "IdentificationMonitor":
        targets = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    doc = json.loads(line)
                    known = tuple(str((doc.get("metadata") or {}).get(f)) for f in fields)
                    targets.append((doc["doc_id"], known, style_features(style_counts(doc["text"]))[0]))
        if not targets:
            raise ValueError("no targets in the identification corpus")
        return cls(targets, fields, threshold)

    def released(self, record: dict[str, Any]) -> None:
        """A sanitized chunk: its style counts go to its document, its metadata gives the known fields."""
        key = (record["doc_id"], record["chunk_index"])
        if key in self._seen:
            return
        self._seen.add(key)
        doc = record["doc_id"]
        counts = style_counts(record["text"])
        self._counts[doc] = self._counts.get(doc, 0) + counts
        self._counts.move_to_end(doc)
        self._known[doc] = tuple(str((record.get("metadata") or {}).get(f)) for f in self.fields)
        while len(self._counts) > self.max_docs:
            old, _ = self._counts.popitem(last=False)
            self._known.pop(old, None)
            self._seen = {k for k in self._seen if k[0] != old}

    def result(self) -> dict[str, Any]:
        docs = list(self._counts)
        index = {d: i for i, d in enumerate(docs)}
        scored = [(index[d], known, features) for d, known, features in self.targets if d in index]
        out: dict[str, Any] = {"released_documents": len(docs), "known_fields": list(self.fields)}
        if not scored:
            return {**out, "targets": 0, "copies": 1, "mean": None, "max": None, "threshold": self.threshold,
                    "share_above_threshold": None}
        X = style_features(np.vstack([self._counts[d] for d in docs]))
        result = two_stage_risk([[self._known[d] for d in docs]], X, scored, self.threshold)
        return {**out, **result.as_dict()}
