"""Training and evaluation texts for the learned span detector: typed mention spans from the three corpora in
``../shared/data/`` (formats in each folder's FORMAT.md / SOURCE.md).

* TAB train (``echr_train_first100.json``): full decisions; the **first** annotator's complete mention list
  (NO_MASK mentions included: the detector finds mentions, the policy decides masking).
* TAB dev stop-gap (``dev-stopgap/``): 127 texts with one annotator's typed mentions, no decisions. Split by a
  hash of the doc id into a *tuning* and a *validation* half (``dev_half``), the same on every machine.
* Wikipedia biographies (``wiki_test.json``): one annotator per document, no CODE.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ..evaluation.tab import load_tab
from ..records import TAB_TYPES

TUNE, VALIDATION = "tune", "validation"


@dataclass(frozen=True)
class AnnotatedText:
    """A text and one annotator's typed mentions ``(start, end, type)``, end exclusive."""

    doc_id: str
    text: str
    spans: tuple[tuple[int, int, str], ...]
    source: str


def _clean(text: str, spans: Sequence[Sequence]) -> tuple[tuple[int, int, str], ...]:
    """Typed spans inside the text, TAB types only, sorted, duplicates dropped."""
    out = {(int(s), int(e), str(t)) for s, e, t in spans if 0 <= int(s) < int(e) <= len(text) and t in TAB_TYPES}
    return tuple(sorted(out))


def load_tab_mentions(path: str | Path, source: str = "tab-train") -> list[AnnotatedText]:
    """TAB-format documents (TAB train, the Wikipedia bios): the first annotator's mentions, all identifier types."""
    out = []
    for doc in load_tab(path):
        layer = next(iter(doc.annotations.values()), [])
        spans = [(m.start, m.end, m.entity_type) for m in layer]
        out.append(AnnotatedText(doc.doc_id, doc.text, _clean(doc.text, spans), source))
    return out


def load_tab_layers(path: str | Path, source: str = "tab-train") -> list[dict[str, AnnotatedText]]:
    """TAB-format documents with two or more annotators: per document, every annotator's complete mention list
    (``{annotator: AnnotatedText}``), for the inter-annotator agreement (``metrics.agreement``)."""
    out = []
    for doc in load_tab(path):
        if len(doc.annotations) < 2:
            continue
        out.append({annotator: AnnotatedText(doc.doc_id, doc.text,
                                             _clean(doc.text, [(m.start, m.end, m.entity_type) for m in layer]),
                                             source)
                    for annotator, layer in doc.annotations.items()})
    return out


def load_dev_stopgap(folder: str | Path) -> list[AnnotatedText]:
    """The 127 TAB dev texts with TAE's "Manual" spans (one annotator's full mention list), in doc-id order."""
    folder = Path(folder)
    texts = json.loads((folder / "TAB_dev_texts.json").read_text(encoding="utf-8"))
    spans = json.loads((folder / "TAB_dev_Manual_Entity.json").read_text(encoding="utf-8"))
    return [AnnotatedText(doc_id, texts[doc_id], _clean(texts[doc_id], spans.get(doc_id, [])), "tab-dev")
            for doc_id in sorted(texts)]


def dev_half(doc_id: str) -> str:
    """``tune`` or ``validation``: the parity of the first byte of sha256(doc id) (fixed, machine independent)."""
    return TUNE if hashlib.sha256(doc_id.encode("utf-8")).digest()[0] % 2 == 0 else VALIDATION


def kfold(items: Sequence[AnnotatedText], k: int) -> Iterator[tuple[list[AnnotatedText], list[AnnotatedText]]]:
    """``k`` (fit, held-out) pairs; fold of a document = its position modulo ``k`` (documents keep their order)."""
    for fold in range(k):
        yield ([d for i, d in enumerate(items) if i % k != fold], [d for i, d in enumerate(items) if i % k == fold])


def paragraphs(item: AnnotatedText, min_chars: int = 1000) -> Iterator[tuple[int, str, list[tuple[int, int, str]]]]:
    """Pieces of a text cut at the first line break after ``min_chars`` characters (training examples of a few
    paragraphs), each with its start and the spans inside it (offsets into the piece); no cut crosses a span."""
    text = item.text
    cuts = [0]
    last = 0
    for i, ch in enumerate(text):
        if ch == "\n" and i + 1 - last >= min_chars and not any(s < i + 1 < e for s, e, _ in item.spans):
            cuts.append(i + 1)
            last = i + 1
    cuts.append(len(text))
    for a, b in zip(cuts, cuts[1:]):
        if text[a:b].strip():
            yield a, text[a:b], [(s - a, e - a, t) for s, e, t in item.spans if a <= s and e <= b]


def non_overlapping(spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Drop spans that overlap a longer (then earlier) one: the NER's BILUO tags need disjoint spans."""
    keep: list[tuple[int, int, str]] = []
    for s, e, t in sorted(spans, key=lambda x: (-(x[1] - x[0]), x[0])):
        if all(e <= a or s >= b for a, b, _ in keep):
            keep.append((s, e, t))
    return sorted(keep)
