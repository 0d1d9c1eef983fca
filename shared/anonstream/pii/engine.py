"""The pii stage's core: detection, in-document entity grouping, identifier typing, operators.

Contract used by the pii stage and the embedded runner:

* ``DocumentEntities`` — per-document entity registry; chunks of one document are processed in order
  with the same registry; ``to_state()``/``from_state()`` make it JSON-able (the service keeps it in Redis).
* ``PseudonymStore`` — ``surrogate_for(namespace, entity_key, entity_type)`` returns a consistent surrogate.
* ``PiiEngine.detect(text, entities)`` and ``PiiEngine.process(text, entities, pseudonyms, namespace)``.
"""
from __future__ import annotations

import re
import threading
import unicodedata
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..records import EntitySpan
from .base import Detection, Recognizer
from .ner import SpacyNerRecognizer
from .patterns import EmailRecognizer, PhoneRecognizer, UrlRecognizer

# Subtypes whose placeholder label is the subtype itself ([EMAIL_1] rather than [CODE_1]).
PATTERN_LABELS = ("EMAIL", "URL", "PHONE", "IBAN", "CARD", "IP")
_TITLE = re.compile(r"^(?:mr|mrs|ms|miss|dr|prof|judge|sir|madam|mme|mlle|m)\.?\s+", re.I)


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip(" .,;:'\"’")


# ---------------------------------------------------------------------------------------------
# Per-document entity registry
# ---------------------------------------------------------------------------------------------
class DocumentEntities:
    """Entities of one document seen so far (grouping state carried across its chunks)."""

    def __init__(self, doc_id: str = ""):
        self.doc_id = doc_id
        self.entities: list[dict[str, Any]] = []  # {id, type, key, forms, count, identifier_type, subtype}
        self._by_form: dict[tuple[str, str], int] = {}

    def _new_id(self) -> str:
        n = len(self.entities) + 1
        return f"{self.doc_id}_e{n}" if self.doc_id else f"e{n}"

    def resolve(self, entity_type: str, text: str, subtype: str | None = None) -> dict[str, Any]:
        """Return the entity this mention belongs to, creating it if new."""
        form = normalize(text)
        bare = _TITLE.sub("", form) if entity_type == "PERSON" else form
        idx = self._by_form.get((entity_type, bare))
        if idx is None and entity_type == "PERSON":
            idx = self._match_person(bare)
        if idx is None:
            ent = {
                "id": self._new_id(),
                "type": entity_type,
                "key": f"{entity_type}:{bare}",
                "forms": [bare],
                "count": 0,
                "subtype": subtype,
                "identifier_type": None,
            }
            self.entities.append(ent)
            idx = len(self.entities) - 1
        ent = self.entities[idx]
        ent["count"] += 1
        if bare not in ent["forms"]:
            ent["forms"].append(bare)
        self._by_form[(entity_type, bare)] = idx
        return ent

    def _match_person(self, bare: str) -> int | None:
        tokens = bare.split()
        if not tokens:
            return None
        candidates = []
        for i, ent in enumerate(self.entities):
            if ent["type"] != "PERSON":
                continue
            for f in ent["forms"]:
                ft = f.split()
                # "polat" ~ "cengiz polat" (surname), "cengiz polat" ~ "polat"
                if ft and (tokens[-1] == ft[-1]) and (len(tokens) == 1 or len(ft) == 1 or tokens[0] == ft[0]):
                    candidates.append(i)
                    break
        return candidates[0] if len(candidates) == 1 else None

    def to_state(self) -> dict[str, Any]:
        return {"version": 1, "doc_id": self.doc_id, "entities": [dict(e) for e in self.entities]}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "DocumentEntities":
        obj = cls(state.get("doc_id", ""))
        obj.entities = [dict(e) for e in state.get("entities", [])]
        for i, ent in enumerate(obj.entities):
            for f in ent["forms"]:
                obj._by_form[(ent["type"], f)] = i
        return obj


# ---------------------------------------------------------------------------------------------
# Pseudonym stores
# ---------------------------------------------------------------------------------------------
class PseudonymStore(ABC):
    """Maps (namespace, entity key, type) to a surrogate, the same one every time it is asked."""

    @abstractmethod
    def surrogate_for(self, namespace: str, entity_key: str, entity_type: str) -> str: ...


class InMemoryPseudonymStore(PseudonymStore):
    """Process-local store (embedded runner, tests): ``[TYPE_n]`` with n allocated per (namespace, type)."""

    def __init__(self, template: str = "[{type}_{index}]"):
        self.template = template
        self._map: dict[tuple[str, str, str], str] = {}
        self._counters: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def surrogate_for(self, namespace: str, entity_key: str, entity_type: str) -> str:
        k = (namespace, entity_type, entity_key)
        with self._lock:
            got = self._map.get(k)
            if got is None:
                n = self._counters.get((namespace, entity_type), 0) + 1
                self._counters[(namespace, entity_type)] = n
                got = self.template.format(type=entity_type, index=n)
                self._map[k] = got
            return got


# ---------------------------------------------------------------------------------------------
# Configuration and engine
# ---------------------------------------------------------------------------------------------
@dataclass
class PiiConfig:
    spacy_model: str | None = None
    # Types whose mentions are replaced now (the rest stay in clear for the swap stage).
    mask_now_types: tuple[str, ...] = ("PERSON", "CODE")
    min_score: float = 0.5


class PiiEngine:
    def __init__(self, nlp: Any, recognizers: list[Recognizer], config: PiiConfig):
        self.nlp = nlp
        self.recognizers = recognizers
        self.config = config

    @classmethod
    def from_config(cls, config: "PiiConfig | None" = None) -> "PiiEngine":
        from .spacy_model import load_spacy

        config = config or PiiConfig()
        nlp = load_spacy(config.spacy_model)
        recognizers: list[Recognizer] = [SpacyNerRecognizer(), EmailRecognizer(), UrlRecognizer(), PhoneRecognizer()]
        return cls(nlp, recognizers, config)

    # -- detection ---------------------------------------------------------------------------
    def _detections(self, text: str, doc: Any) -> list[Detection]:
        found: list[Detection] = []
        for r in self.recognizers:
            found.extend(d for d in r.analyze(text, doc) if d.score >= self.config.min_score)
        return _resolve_overlaps(found)

    def _to_spans(self, text: str, dets: list[Detection], entities: DocumentEntities) -> list[EntitySpan]:
        spans = []
        for d in dets:
            ent = entities.resolve(d.type, text[d.start : d.end], d.subtype)
            if ent["identifier_type"] is None:
                ent["identifier_type"] = "DIRECT" if d.type in ("PERSON", "CODE") else "QUASI"
            spans.append(
                EntitySpan(
                    start=d.start,
                    end=d.end,
                    type=d.type,
                    identifier_type=ent["identifier_type"],
                    entity_id=ent["id"],
                    text=text[d.start : d.end],
                    subtype=d.subtype,
                    recognizer=f"{d.recognizer}/{d.rule}" if d.rule else d.recognizer,
                    score=d.score,
                )
            )
        return spans

    def detect(self, text: str, entities: DocumentEntities) -> list[EntitySpan]:
        doc = self.nlp(text)
        return self._to_spans(text, self._detections(text, doc), entities)

    def detect_many(self, texts: Iterable[str], entities: Iterable[DocumentEntities], batch_size: int = 16):
        texts = list(texts)
        out = []
        for text, doc, ents in zip(texts, self.nlp.pipe(texts, batch_size=batch_size), entities):
            out.append(self._to_spans(text, self._detections(text, doc), ents))
        return out

    # -- rewriting ---------------------------------------------------------------------------
    def _label(self, span: EntitySpan) -> str:
        if span.type == "CODE" and span.subtype in PATTERN_LABELS:
            return span.subtype
        return span.type

    def apply(
        self, text: str, spans: list[EntitySpan], entities: DocumentEntities, pseudonyms: PseudonymStore, namespace: str
    ) -> tuple[str, list[EntitySpan]]:
        keys = {e["id"]: e["key"] for e in entities.entities}
        pieces: list[str] = []
        out: list[EntitySpan] = []
        cursor = 0  # in the original text
        shift = 0  # new offset - original offset
        for span in sorted(spans, key=lambda s: s.start):
            orig_start, orig_end = span.start, span.end
            pieces.append(text[cursor:orig_start])
            replace = span.type in self.config.mask_now_types and span.identifier_type != "NO_MASK"
            new_text = text[orig_start:orig_end]
            if replace:
                new_text = pseudonyms.surrogate_for(namespace, keys[span.entity_id], self._label(span))
                span.surrogate = new_text
                span.text = new_text  # the span describes the NEW text: raw PII never leaves the stage
            pieces.append(new_text)
            span.start = orig_start + shift
            span.end = span.start + len(new_text)
            shift += len(new_text) - (orig_end - orig_start)
            cursor = orig_end
            out.append(span)
        pieces.append(text[cursor:])
        return "".join(pieces), out

    def process(
        self, text: str, entities: DocumentEntities, pseudonyms: PseudonymStore, namespace: str = "default"
    ) -> tuple[str, list[EntitySpan]]:
        spans = self.detect(text, entities)
        return self.apply(text, spans, entities, pseudonyms, namespace)

    def process_many(self, texts, entities, pseudonyms: PseudonymStore, namespace: str = "default"):
        texts = list(texts)
        entities = list(entities)
        return [
            self.apply(t, s, e, pseudonyms, namespace)
            for t, s, e in zip(texts, self.detect_many(texts, entities), entities)
        ]


def _resolve_overlaps(dets: list[Detection]) -> list[Detection]:
    """Keep the best of overlapping detections: higher score, then longer span."""
    ranked = sorted(dets, key=lambda d: (-d.score, -(d.end - d.start), d.start))
    taken: list[Detection] = []
    for d in ranked:
        if all(d.end <= t.start or d.start >= t.end for t in taken):
            taken.append(d)
    return sorted(taken, key=lambda d: d.start)
