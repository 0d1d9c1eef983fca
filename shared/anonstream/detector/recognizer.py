"""The learned span detector as a pii recognizer (``PiiConfig.detector``).

Its detections join the rules' before span refinement, vetting and overlap resolution (engine.py), so the entity
grouping, the kinds and the DIRECT/QUASI/NO_MASK policy treat them like any other recognizer's. With the default
``score`` (0.7, below the engine's ``confident`` 0.75) a rule span wins every overlap and the learned spans fill
what the rules did not find; ``score`` >= ``confident`` lets the longer span win. With ``vet`` (a list of TAB
types), a rule span of those types is kept only when the learned spans cover at least ``vet_cover`` (default
half) of its characters (union with vetting: the model overrules the rules where they are least precise).
``windows`` runs the model only on part of the text: ``true`` on the candidate windows of pii/windows.py
(cheaper; lower-case-only mentions are then not looked for); ``"uncertain"`` only on the sentences holding a rule
span of a ``vet`` type, the spans the model is asked to confirm (far cheaper; the model then adds mentions only
in those sentences). A vetted span inside a rule span of a type not vetted is kept without the model (``vouched``).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any, Iterable

from ..pii.base import Detection, Recognizer
from ..pii.windows import NerWindows
from ..records import TAB_TYPES

SHIPPED = Path(__file__).resolve().parent / "model"
UNCERTAIN = "uncertain"
# a sentence ends at a line break or after ". ", "? ", "! " (a closing quote or bracket may follow the stop)
_SENTENCE_END = re.compile(r"\n|[.!?][\"”’)]?\s")


def resolve_detector(spec: Any) -> tuple[Path, dict[str, Any]]:
    """``PiiConfig.detector``: ``"shipped"``, a model directory, or ``{model: ..., score: ..., vet: [types],
    vet_cover: fraction, windows: bool | "uncertain"}`` → (model directory, recognizer options)."""
    spec = dict(spec) if isinstance(spec, dict) else {"model": spec}
    model = spec.pop("model", "shipped")
    windows = spec.pop("windows", False)
    options = {"score": float(spec.pop("score", 0.7)), "vet": tuple(spec.pop("vet", None) or ()),
               "windows": windows if windows == UNCERTAIN else bool(windows)}
    if "vet_cover" in spec:
        options["vet_cover"] = float(spec.pop("vet_cover"))
    unknown = set(options["vet"]) - set(TAB_TYPES)
    if unknown or spec:
        raise ValueError(f"detector: unknown options {sorted(spec)} or vet types {sorted(unknown)}")
    if options["windows"] == UNCERTAIN and not options["vet"]:
        raise ValueError("detector: windows 'uncertain' runs the model on the sentences of vet-type spans: set vet")
    return (SHIPPED if model == "shipped" else Path(model)), options


@lru_cache(maxsize=4)
def _loaded(path: str, base_model: str | None) -> Any:
    """One loaded model per process and location (engines with different ``score``/``vet`` share it)."""
    from .train import load_detector

    return load_detector(path, base_model)


class LearnedSpanRecognizer(Recognizer):
    """TAB-typed spans from the fine-tuned NER (train.py), run on the whole text."""

    name = "learned"

    def __init__(self, nlp: Any, score: float = 0.7, vet: tuple[str, ...] = (), windows: bool | str = False,
                 vet_cover: float = 0.5):
        self.nlp = nlp
        self.score = score
        self.vet = frozenset(vet)
        self.vet_cover = vet_cover
        self.uncertain_only = windows == UNCERTAIN  # the model runs in vet_detections, on the vetted spans' sentences
        # only on the candidate windows of pii/windows.py (trigger tokens ± 4), as the rules' NER
        self._windows = NerWindows(nlp) if windows is True else None

    @classmethod
    def from_spec(cls, spec: Any, base_model: str | None = None) -> "LearnedSpanRecognizer":
        path, options = resolve_detector(spec)
        return cls(_loaded(str(path), base_model), **options)

    def spans_many(self, texts: Iterable[str], batch_size: int = 16) -> list[list[tuple[int, int, str]]]:
        """``(start, end, type)`` per text, batched (benchmarks and evaluation)."""
        labels = self.nlp.meta.get("tab_labels") or {t: t for t in TAB_TYPES}  # model label -> TAB type
        return [[(e.start_char, e.end_char, labels[e.label_]) for e in doc.ents if e.label_ in labels]
                for doc in (self._windows.docs(texts, batch_size) if self._windows is not None
                            else self.nlp.pipe(texts, batch_size=batch_size))]

    def _detections(self, spans: Iterable[tuple[int, int, str]], shift: int = 0) -> list[Detection]:
        return [Detection(s + shift, e + shift, t, self.score, self.name, f"learned:{t}") for s, e, t in spans]

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        if self.uncertain_only:
            return []
        return self._detections(self.spans_many([text])[0])

    def vouched(self, found: list[Detection]) -> set[int]:
        """``id`` of the detections of a ``vet`` type that lie inside another rule detection of a type not vetted
        (a MISC "Kandıra" inside the LOC "Kandıra prison"): kept without asking the model."""
        others = sorted((d.start, d.end) for d in found if d.type not in self.vet and d.recognizer != self.name)
        starts = [s for s, _ in others]
        reach = list(accumulate((e for _, e in others), max))  # the furthest end of the others starting so far
        out = set()
        for d in found:
            if d.type in self.vet and d.recognizer != self.name:
                i = bisect_right(starts, d.start)
                if i and reach[i - 1] >= d.end:
                    out.add(id(d))
        return out

    def uncertain_sentences(self, text: str, found: list[Detection],
                            skip: frozenset[int] | set[int] = frozenset()) -> list[tuple[int, int]]:
        """``(start, end)`` of the sentences that hold a detection of a ``vet`` type not in ``skip`` (``id``s),
        merged, in text order."""
        out: list[tuple[int, int]] = []
        for d in sorted((d for d in found if d.type in self.vet and id(d) not in skip), key=lambda d: d.start):
            if out and d.start < out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], d.end))
                continue
            before = [m.end() for m in _SENTENCE_END.finditer(text, max(0, d.start - 400), d.start)]
            after = _SENTENCE_END.search(text, d.end)
            start = before[-1] if before else max(0, d.start - 400)
            end = after.end() if after and after.end() - d.end <= 400 else min(len(text), d.end + 400)
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], end)
            else:
                out.append((start, end))
        return out

    def vet_detections(self, text: str, found: list[Detection]) -> list[Detection]:
        """Drop the other recognizers' detections of the ``vet`` types that the learned spans (this recognizer's
        detections in ``found``; with ``windows: uncertain`` the model's spans in the sentences of those
        detections, added here) cover less than ``vet_cover`` of, unless ``vouched`` for."""
        if not self.vet:
            return found
        keep = self.vouched(found)
        if self.uncertain_only:
            sentences = self.uncertain_sentences(text, found, keep)
            spans = self.spans_many([text[s:e] for s, e in sentences])
            found = found + [d for (s, _), got in zip(sentences, spans) for d in self._detections(got, s)]
        learned = {i for d in found if d.recognizer == self.name for i in range(d.start, d.end)}
        return [d for d in found if d.recognizer == self.name or d.type not in self.vet or id(d) in keep
                or sum(1 for i in range(d.start, d.end) if i in learned) >= self.vet_cover * (d.end - d.start)]
