"""The learned span detector as a pii recognizer (``PiiConfig.detector``).

Its detections join the rules' before span refinement, vetting and overlap resolution (engine.py), so the entity
grouping, the kinds and the DIRECT/QUASI/NO_MASK policy treat them like any other recognizer's. With the default
``score`` (0.7, below the engine's ``confident`` 0.75) a rule span wins every overlap and the learned spans fill
what the rules did not find; ``score`` >= ``confident`` lets the longer span win. With ``vet`` (a list of TAB
types), a rule span of those types is kept only when the learned spans cover at least half of its characters
(union with vetting: the model overrules the rules where they are least precise).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ..pii.base import Detection, Recognizer
from ..records import TAB_TYPES

SHIPPED = Path(__file__).resolve().parent / "model"


def resolve_detector(spec: Any) -> tuple[Path, float, tuple[str, ...]]:
    """``PiiConfig.detector``: ``"shipped"``, a model directory, or ``{model: ..., score: ..., vet: [types]}``."""
    if isinstance(spec, dict):
        model, score, vet = spec.get("model", "shipped"), float(spec.get("score", 0.7)), tuple(spec.get("vet", ()))
    else:
        model, score, vet = spec, 0.7, ()
    unknown = set(vet) - set(TAB_TYPES)
    if unknown:
        raise ValueError(f"detector.vet: not TAB types: {sorted(unknown)}")
    return (SHIPPED if model == "shipped" else Path(model)), score, vet


class LearnedSpanRecognizer(Recognizer):
    """TAB-typed spans from the fine-tuned NER (train.py), run on the whole text."""

    name = "learned"

    def __init__(self, nlp: Any, score: float = 0.7, vet: tuple[str, ...] = ()):
        self.nlp = nlp
        self.score = score
        self.vet = frozenset(vet)

    @classmethod
    def from_spec(cls, spec: Any, base_model: str | None = None) -> "LearnedSpanRecognizer":
        from .train import load_detector

        path, score, vet = resolve_detector(spec)
        return cls(load_detector(path, base_model), score, vet)

    def spans_many(self, texts: Iterable[str], batch_size: int = 16) -> list[list[tuple[int, int, str]]]:
        """``(start, end, type)`` per text, batched (benchmarks and evaluation)."""
        return [[(e.start_char, e.end_char, e.label_) for e in doc.ents if e.label_ in TAB_TYPES]
                for doc in self.nlp.pipe(texts, batch_size=batch_size)]

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        return [Detection(s, e, t, self.score, self.name, f"learned:{t}")
                for s, e, t in self.spans_many([text])[0]]

    def vet_detections(self, text: str, found: list[Detection]) -> list[Detection]:
        """Drop the other recognizers' detections of the ``vet`` types that the learned spans (this recognizer's
        detections in ``found``) cover less than half of."""
        if not self.vet:
            return found
        learned = {i for d in found if d.recognizer == self.name for i in range(d.start, d.end)}
        return [d for d in found if d.recognizer == self.name or d.type not in self.vet
                or 2 * sum(1 for i in range(d.start, d.end) if i in learned) >= d.end - d.start]
