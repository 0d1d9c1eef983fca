"""Span-detection scores against one annotator's full mention list (TAB dev stop-gap, issue 15):

* **mention recall** — a gold mention is found when at least ``coverage`` (90 %) of its characters lie inside
  the union of the detected spans (any detected type); overall and per gold type;
* **character precision** — the share of detected characters (union of the detected spans) that lie inside some
  gold mention; overall and per detected type (characters of spans of that type);
* **inter-annotator agreement** (``agreement``) — the same two scores with one human annotator's mentions as the
  detection and another's as the gold, over every ordered pair of annotators of a document: what a second
  careful human reaches against "one annotator's full mention list", the yardstick issue 15 scores us by.

Masking decisions (DIRECT/QUASI/NO_MASK) play no part: these score the detector, not the policy
(``anonstream.evaluation.tab`` scores the decisions with TAB's official metrics).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import permutations
from typing import Mapping, Sequence

from .data import AnnotatedText


@dataclass
class SpanScores:
    """Counts behind the scores, summable over documents."""

    found: Counter = field(default_factory=Counter)  # gold type -> mentions found
    mentions: Counter = field(default_factory=Counter)  # gold type -> mentions
    correct_chars: Counter = field(default_factory=Counter)  # detected type -> detected chars inside gold
    detected_chars: Counter = field(default_factory=Counter)  # detected type -> detected chars

    def add(self, other: "SpanScores") -> None:
        for name in ("found", "mentions", "correct_chars", "detected_chars"):
            getattr(self, name).update(getattr(other, name))

    @property
    def recall(self) -> float | None:
        n = sum(self.mentions.values())
        return sum(self.found.values()) / n if n else None

    @property
    def precision(self) -> float | None:
        n = self.detected_chars["*"]
        return self.correct_chars["*"] / n if n else None

    def recall_by_type(self) -> dict[str, float]:
        return {t: self.found[t] / n for t, n in sorted(self.mentions.items()) if n}

    def precision_by_type(self) -> dict[str, float]:
        return {t: self.correct_chars[t] / n for t, n in sorted(self.detected_chars.items()) if n and t != "*"}


def score_document(item: AnnotatedText, detected: Sequence[Sequence], coverage: float = 0.9) -> SpanScores:
    """Scores of one document; ``detected`` = ``(start, end, type)`` spans (overlaps allowed)."""
    out = SpanScores()
    covered: set[int] = set()
    by_type: dict[str, set[int]] = {}
    for s, e, t in detected:
        chars = range(max(0, s), min(len(item.text), e))
        covered.update(chars)
        by_type.setdefault(t, set()).update(chars)
    gold: set[int] = set()
    for s, e, t in item.spans:
        gold.update(range(s, e))
        out.mentions[t] += 1
        if sum(1 for i in range(s, e) if i in covered) >= coverage * (e - s):
            out.found[t] += 1
    for t, chars in [("*", covered), *by_type.items()]:
        out.detected_chars[t] += len(chars)
        out.correct_chars[t] += len(chars & gold)
    return out


def score_corpus(items: Sequence[AnnotatedText], detected: Mapping[str, Sequence[Sequence]],
                 coverage: float = 0.9) -> SpanScores:
    """Summed scores over ``items``; ``detected`` maps doc id to its spans (a missing id = nothing detected)."""
    total = SpanScores()
    for item in items:
        total.add(score_document(item, detected.get(item.doc_id, ()), coverage))
    return total


def pooled_and_per_document(per_document: Sequence[Sequence[SpanScores]]) -> tuple[SpanScores, list[float],
                                                                                list[float]]:
    """Scores of several comparisons per document: their counts pooled, and per document the mean recall and the
    mean character precision over its comparisons (each document weighted once)."""
    pooled = SpanScores()
    doc_recall: list[float] = []
    doc_precision: list[float] = []
    for scores in per_document:
        for s in scores:
            pooled.add(s)
        recalls = [s.recall for s in scores if s.recall is not None]
        precisions = [s.precision for s in scores if s.precision is not None]
        if recalls:
            doc_recall.append(sum(recalls) / len(recalls))
        if precisions:
            doc_precision.append(sum(precisions) / len(precisions))
    return pooled, doc_recall, doc_precision


def agreement(documents: Sequence[Mapping[str, AnnotatedText]], coverage: float = 0.9) -> tuple[SpanScores, list[float],
                                                                                                list[float]]:
    """Annotators scored against each other: per document (``{annotator: mentions}``, two or more), every ordered
    pair (gold a, detection b) by ``score_document``; ``pooled_and_per_document`` of those."""
    return pooled_and_per_document([[score_document(gold, other.spans, coverage)
                                     for gold, other in permutations(layers.values(), 2)] for layers in documents])
