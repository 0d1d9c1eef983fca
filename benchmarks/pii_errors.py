"""Where the detector's errors are, against TAB-format gold (used by ``bench_pii.py`` for ``pii.md``).

* ``miss_classes`` — every missed DIRECT/QUASI gold entity (TAB's entity recall: some mention left unmasked),
  by gold type and by why: *not detected* (no span of ours touches the unmasked mention), *decided NO_MASK* (our
  spans there were all typed NO_MASK by the policy) or *boundary* (we masked part of it).
* ``false_positive_words`` — words we mask that no annotator masks, by the type/subtype of our span.
* ``gold_decisions`` — for our masked spans of some subtypes (occupations, nationalities), what the annotators
  decided for the same words: masked, NO_MASK, or not annotated at all.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Sequence

from anonstream.evaluation.tab import TabDocument, TabEvaluator

MASKED = ("DIRECT", "QUASI")
_WORD = re.compile(r"\w+")


def _overlapping(spans: Iterable[Any], start: int, end: int) -> list[Any]:
    return [s for s in spans if s.start < end and start < s.end]


def miss_classes(evaluator: TabEvaluator, system: Mapping[str, Sequence[Sequence[int]]],
                 raw: Mapping[str, Sequence[Any]]) -> dict[str, Counter]:
    """{gold type: Counter(why)} over the missed entities (module docstring)."""
    _, misses = evaluator.entity_misses(system)
    out: dict[str, Counter] = defaultdict(Counter)
    for miss in misses:
        ours = [s for s, e in miss.unmasked_mentions for s in _overlapping(raw[miss.doc_id], s, e)]
        if not ours:
            why = "not detected"
        elif all(s.identifier_type not in MASKED for s in ours):
            why = "decided NO_MASK"
        else:
            why = "boundary"
        out[miss.entity_type][why] += 1
    return dict(out)


def _gold_masked(doc: TabDocument) -> set[int]:
    offsets: set[int] = set()
    for mentions in doc.annotations.values():
        for m in mentions:
            if m.identifier_type in MASKED:
                offsets.update(range(m.start, m.end))
    return offsets


def false_positive_words(docs: Sequence[TabDocument], raw: Mapping[str, Sequence[Any]]) -> Counter:
    """Counter((type, subtype)) of words inside our masked spans that no annotator masks at all."""
    out: Counter = Counter()
    for doc in docs:
        gold = _gold_masked(doc)
        for span in raw[doc.doc_id]:
            if span.identifier_type not in MASKED:
                continue
            for w in _WORD.finditer(doc.text, span.start, span.end):
                if not any(i in gold for i in range(w.start(), w.end())):
                    out[(span.type, span.subtype or "-")] += 1
    return out


def gold_decisions(docs: Sequence[TabDocument], raw: Mapping[str, Sequence[Any]],
                   subtypes: Sequence[str] = ("OCCUPATION", "NORP")) -> dict[str, Counter]:
    """{subtype: Counter(annotator decision)} for our masked spans of ``subtypes``, one count per annotator."""
    out: dict[str, Counter] = {s: Counter() for s in subtypes}
    for doc in docs:
        for span in raw[doc.doc_id]:
            if span.subtype not in out or span.identifier_type not in MASKED:
                continue
            for mentions in doc.annotations.values():
                gold = _overlapping(mentions, span.start, span.end)
                decision = "not annotated" if not gold else "masked" if gold[0].identifier_type in MASKED else "NO_MASK"
                out[span.subtype][decision] += 1
    return out
