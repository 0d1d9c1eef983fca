"""The audit stage's attacker (issue 10 part 5; paper 000 Table 2 and §3.3: any attacker that predicts the
label from a chunk can play the LLM's role): accuracy on the chunks before vs after the swap stage, with the
exact McNemar test on the paired outcomes, from ``attack/harness.py``'s ``Attacker`` and ``mcnemar``.

What it is, honestly: the attacker (``ANONSTREAM_AUDIT_ATTACK_KIND``, TF-IDF + LinearSVC) is trained once, at
start, on a reference corpus (``ANONSTREAM_AUDIT_ATTACK_TRAIN``, JSONL ``{doc_id, text, metadata}``, cut in
chunks of ``lines_per_chunk`` lines as the harness does), and scored on an in-memory sample of the last
``max_chunks`` released chunks that carry the label (``metadata[label_key]``). The *before* text of a chunk is
its released text with the swap log's changes undone (each change's ``old`` value put back at its offsets into
the new text), i.e. what the swap stage received: the pii stage's pseudonyms are in both, so this measures what
the swap stage buys, as the paper's pre/post-swap comparison does. A chunk is scored once both its sanitized
record and (when it changed) its swap-log record have arrived. The sample lives in this process only: after a
restart it starts empty, and with several audit workers each reports its own partitions' sample.
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..attack import harness


def undo_changes(text: str, changes: list[dict[str, Any]]) -> str:
    """The text before the swap stage: every logged change's ``old`` value back at [start, end) of ``text``."""
    for change in sorted(changes, key=lambda c: c["start"], reverse=True):
        text = text[:change["start"]] + change["old"] + text[change["end"]:]
    return text


class AttackMonitor:
    def __init__(self, attacker: harness.Attacker, label_key: str = "ticker", max_chunks: int = 5000):
        self.attacker = attacker
        self.label_key = label_key
        self.max_chunks = max_chunks
        self._released: OrderedDict[tuple, tuple[str, str]] = OrderedDict()  # waiting for their swap log
        self._logged: OrderedDict[tuple, list[dict[str, Any]]] = OrderedDict()  # waiting for their chunk
        self._pending: list[tuple[tuple, str, str, str]] = []               # (key, label, before, after)
        self._outcomes: OrderedDict[tuple, tuple[bool, bool]] = OrderedDict()

    @classmethod
    def from_corpus(cls, path: str | Path, label_key: str = "ticker", kind: str = "capitalized",
                    lines_per_chunk: int = 5, max_chunks: int = 5000) -> "AttackMonitor":
        docs = [d for d in harness.load_documents(path, label_key) if d.label is not None]
        samples = [(text, d.label) for d in docs for _, text in harness.chunks(d, lines_per_chunk)]
        if not samples:
            raise ValueError(f"no labelled training chunks (label {label_key!r}) in the attack corpus")
        attacker = harness.Attacker(kind).fit([t for t, _ in samples], [label for _, label in samples])
        return cls(attacker, label_key, max_chunks)

    @staticmethod
    def _key(record: dict[str, Any]) -> tuple:
        return record["doc_id"], record["chunk_index"], (record.get("release") or {}).get("version")

    def _bounded(self, table: OrderedDict) -> None:
        while len(table) > self.max_chunks:
            table.popitem(last=False)

    def released(self, record: dict[str, Any]) -> None:
        """A sanitized chunk."""
        label = (record.get("metadata") or {}).get(self.label_key)
        key = self._key(record)
        if label is None or key in self._outcomes:
            return
        if not record["changes"]:
            self._pending.append((key, str(label), record["text"], record["text"]))
        elif key in self._logged:
            self._pending.append((key, str(label), undo_changes(record["text"], self._logged.pop(key)), record["text"]))
        else:
            self._released[key] = (str(label), record["text"])
            self._bounded(self._released)

    def logged(self, record: dict[str, Any]) -> None:
        """A swap-log record."""
        if not record["changes"]:
            return
        key = self._key(record)
        if key in self._released:
            label, after = self._released.pop(key)
            self._pending.append((key, label, undo_changes(after, record["changes"]), after))
        elif key not in self._outcomes:
            self._logged[key] = record["changes"]
            self._bounded(self._logged)

    def result(self) -> dict[str, Any] | None:
        """Score the chunks completed since the last call; the accuracies over the sample (None: empty)."""
        if self._pending:
            predicted = self.attacker.predict([p[2] for p in self._pending] + [p[3] for p in self._pending])
            n = len(self._pending)
            for i, (key, label, _, _) in enumerate(self._pending):
                self._outcomes[key] = (predicted[i] == label, predicted[n + i] == label)
            self._pending = []
            self._bounded(self._outcomes)
        if not self._outcomes:
            return None
        before = [b for b, _ in self._outcomes.values()]
        after = [a for _, a in self._outcomes.values()]
        test = harness.mcnemar(before, after)
        acc_before, acc_after = sum(before) / len(before), sum(after) / len(after)
        return {"attacker": self.attacker.kind, "chunks": len(before), "accuracy_before": acc_before,
                "accuracy_after": acc_after, "relative_drop": 1 - acc_after / acc_before if acc_before else None,
                "mcnemar_b": test.b, "mcnemar_c": test.c, "mcnemar_p": test.p_value}
