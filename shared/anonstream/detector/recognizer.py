"""The learned span detector as a pii recognizer (``PiiConfig.detector``).

Its detections join the rules' before span refinement, vetting and overlap resolution (engine.py), so the entity
grouping, the kinds and the DIRECT/QUASI/NO_MASK policy treat them like any other recognizer's. With the default
``score`` (0.7, below the engine's ``confident`` 0.75) a rule span wins every overlap and the learned spans fill
what the rules did not find; ``score`` >= ``confident`` lets the longer span win. With ``vet`` (a list of TAB
types), a rule span of those types is kept only when the learned spans cover at least half of its characters
(union with vetting: the model overrules the rules where they are least precise). ``windows`` runs the model
only on the candidate windows of pii/windows.py (cheaper; lower-case-only mentions are then not looked for).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from ..pii.base import Detection, Recognizer
from ..pii.windows import NerWindows
from ..records import TAB_TYPES

SHIPPED = Path(__file__).resolve().parent / "model"


def resolve_detector(spec: Any) -> tuple[Path, dict[str, Any]]:
    """``PiiConfig.detector``: ``"shipped"``, a model directory, or ``{model: ..., score: ..., vet: [types],
    windows: bool}`` → (model directory, recognizer options)."""
    spec = dict(spec) if isinstance(spec, dict) else {"model": spec}
    model = spec.pop("model", "shipped")
    options = {"score": float(spec.pop("score", 0.7)), "vet": tuple(spec.pop("vet", None) or ()),
               "windows": bool(spec.pop("windows", False))}
    unknown = set(options["vet"]) - set(TAB_TYPES)
    if unknown or spec:
        raise ValueError(f"detector: unknown options {sorted(spec)} or vet types {sorted(unknown)}")
    return (SHIPPED if model == "shipped" else Path(model)), options


@lru_cache(maxsize=4)
def _loaded(path: str, base_model: str | None) -> Any:
    """One loaded model per process and location (engines with different ``score``/``vet`` share it)."""
    from .train import load_detector

    return load_detector(path, base_model)


class LearnedSpanRecognizer(Recognizer):
    """TAB-typed spans from the fine-tuned NER (train.py), run on the whole text."""

    name = "learned"

    def __init__(self, nlp: Any, score: float = 0.7, vet: tuple[str, ...] = (), windows: bool = False):
        self.nlp = nlp
        self.score = score
        self.vet = frozenset(vet)
        # only on the candidate windows of pii/windows.py (trigger tokens ± 4), as the rules' NER
        self._windows = NerWindows(nlp) if windows else None

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
