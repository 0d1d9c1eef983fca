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


_COUNT_NOUN_POS = ("NOUN", "ADJ", "PROPN")


class SpacyNerRecognizer(Recognizer):
    """spaCy NER mapped to TAB types. With ``cardinals``, a CARDINAL followed by a noun phrase becomes a
    counted QUANTITY covering the noun ("30 hearings", "five co-accused", TAB QUANTITY); a bare CARDINAL
    stays weak (score 0.4, below the default threshold)."""

    name = "spacy_ner"

    def __init__(self, mapping: dict[str, str | None] | None = None, drop: tuple[str, ...] = (),
                 cardinals: bool = True):
        self.mapping = dict(ONTONOTES_TO_TAB if mapping is None else mapping)
        self.drop = set(drop)
        self.cardinals = cardinals

    def _counted(self, doc: Any, ent: Any) -> int | None:
        """End char of the counted noun phrase after a CARDINAL ("30 hearings", "five co-accused",
        "twenty-two other accused persons"; needs POS tags), or None."""
        accepted = []
        i = ent.end
        while i < len(doc) and len(accepted) < 5:
            tok = doc[i]
            if tok.text in ("-", "‑") and accepted and accepted[-1].whitespace_ == "" and i + 1 < len(doc):
                accepted.extend([tok, doc[i + 1]])
                i += 2
                continue
            lower = tok.text[:1].islower()
            if lower and (tok.pos_ in _COUNT_NOUN_POS or tok.tag_ in ("VBN", "VBG") and tok.pos_ == "VERB" and i > ent.end - 1):
                accepted.append(tok)
                i += 1
                continue
            break
        while accepted and accepted[-1].pos_ == "ADJ":
            accepted.pop()
        if not accepted or not any(t.pos_ == "NOUN" or t.tag_ == "VBN" for t in accepted):
            return None
        last = accepted[-1]
        return last.idx + len(last.text)

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        if doc is None:
            return []
        has_pos = doc.has_annotation("POS")
        out: list[Detection] = []
        for ent in doc.ents:
            label = ent.label_
            tab = self.mapping.get(label)
            if tab is None or label in self.drop:
                continue
            start, end = ent.start_char, ent.end_char
            score = LABEL_SCORE.get(label, 0.85)
            rule = f"ner:{label}"
            if label == "CARDINAL" and self.cardinals and has_pos:
                counted_end = self._counted(doc, ent)
                if counted_end is not None:
                    end, score, rule = counted_end, 0.75, "ner:CARDINAL+noun"
            out.append(Detection(start, end, tab, score, self.name, rule, subtype=label))
        return out
