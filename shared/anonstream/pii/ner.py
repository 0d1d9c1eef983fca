"""spaCy NER recognizer and the documented OntoNotes → TAB type mapping.

Mapping (OntoNotes 5 labels of en_core_web_md → TAB guidelines §Step 1 categories):

| OntoNotes | TAB | why |
| --- | --- | --- |
| PERSON | PERSON | names of people |
| NORP | DEM | nationalities, religious and political groups are demographic attributes |
| GPE, LOC, FAC | LOC | countries/cities, other places, buildings and named infrastructure |
| ORG | ORG | organisations |
| DATE, TIME | DATETIME | dates, times and durations ("18 years") |
| MONEY, PERCENT, QUANTITY | QUANTITY | meaningful quantities with units |
| CARDINAL | QUANTITY (low score) | bare numbers; kept only when the policy asks for it |
| EVENT, PRODUCT, WORK_OF_ART, LAW, LANGUAGE | MISC | other named things (LANGUAGE could be DEM "native language"; it is MISC with subtype LANGUAGE so a policy can re-type it) |
| ORDINAL | (dropped) | "first", "second" identify nothing |

The OntoNotes label is kept as the detection's ``rule`` ("ner:GPE") and becomes ``EntitySpan.subtype``.
"""
from __future__ import annotations

from typing import Any

from .base import Detection, Recognizer

ONTONOTES_TO_TAB: dict[str, str | None] = {
    "PERSON": "PERSON",
    "NORP": "DEM",
    "GPE": "LOC",
    "LOC": "LOC",
    "FAC": "LOC",
    "ORG": "ORG",
    "DATE": "DATETIME",
    "TIME": "DATETIME",
    "MONEY": "QUANTITY",
    "PERCENT": "QUANTITY",
    "QUANTITY": "QUANTITY",
    "CARDINAL": "QUANTITY",
    "EVENT": "MISC",
    "PRODUCT": "MISC",
    "WORK_OF_ART": "MISC",
    "LAW": "MISC",
    "LANGUAGE": "MISC",
    "ORDINAL": None,
}

# Base scores: how much a bare NER label is trusted before any other evidence.
LABEL_SCORE: dict[str, float] = {"CARDINAL": 0.4, "LAW": 0.5, "WORK_OF_ART": 0.6, "PRODUCT": 0.6}


class SpacyNerRecognizer(Recognizer):
    name = "spacy_ner"

    def __init__(self, mapping: dict[str, str | None] | None = None, drop: tuple[str, ...] = ()):
        self.mapping = dict(ONTONOTES_TO_TAB if mapping is None else mapping)
        self.drop = set(drop)

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        if doc is None:
            return []
        out: list[Detection] = []
        for ent in doc.ents:
            label = ent.label_
            tab = self.mapping.get(label)
            if tab is None or label in self.drop:
                continue
            out.append(
                Detection(
                    ent.start_char,
                    ent.end_char,
                    tab,
                    LABEL_SCORE.get(label, 0.85),
                    self.name,
                    f"ner:{label}",
                    subtype=label,
                )
            )
        return out
