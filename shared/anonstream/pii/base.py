"""Contracts of the detector: recognizer results and the recognizer interface (Presidio-style)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Detection:
    """One span a recognizer found, with the trace of why (recognizer, rule, score, context)."""

    start: int
    end: int
    type: str  # one of records.TAB_TYPES
    score: float
    recognizer: str
    rule: str = ""
    context: list[str] = field(default_factory=list)
    subtype: str | None = None  # finer label: OntoNotes label (GPE, NORP, ...) or EMAIL/URL/PHONE/...

    def trace(self) -> dict[str, Any]:
        return {"recognizer": self.recognizer, "rule": self.rule, "score": self.score, "context": self.context}


class Recognizer(ABC):
    """Finds spans of some entity types in a text. ``doc`` is the spaCy Doc of ``text`` when the
    detector has parsed it (recognizers that need NER or tokens use it; regex ones ignore it)."""

    name: str = "recognizer"

    @abstractmethod
    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        """Return the detections in ``text`` (offsets into ``text``)."""
