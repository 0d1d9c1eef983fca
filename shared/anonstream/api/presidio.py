"""Presidio-compatible analyze and anonymize, as pure functions over plain JSON-able values.

The REST server (``app.py``) only validates shapes and calls these; nothing here touches Kafka or Redis.

Entity names. ``analyze`` reports the pii core's spans under Presidio's entity names where one exists:

| anonstream (TAB type / subtype) | Presidio entity_type |
| --- | --- |
| PERSON | PERSON |
| CODE / EMAIL | EMAIL_ADDRESS |
| CODE / PHONE | PHONE_NUMBER |
| CODE / IBAN | IBAN_CODE |
| CODE / CARD | CREDIT_CARD |
| CODE / IP | IP_ADDRESS |
| CODE / URL | URL |
| CODE (case numbers, other codes) | CODE (no Presidio equivalent) |
| LOC | LOCATION |
| DATETIME | DATE_TIME |
| DEM (nationality, religion, political group) | NRP |
| ORG | ORGANIZATION |
| QUANTITY, MISC | QUANTITY, MISC (no Presidio equivalent) |

Every detected span is reported, whatever the masking policy decided (Presidio reports all PII too); the
policy's verdict (DIRECT / QUASI / NO_MASK) is in ``recognition_metadata.identifier_type``.

Anonymize follows presidio-anonymizer's engine: operators ``replace`` (``new_value``, default
``<ENTITY_TYPE>``), ``redact``, ``mask`` (``masking_char``, ``chars_to_mask``, ``from_end``), ``hash``
(``hash_type`` sha256 | sha512; optional ``salt``, else a random salt per server process, so equal values
hash equally within one process and cannot be looked up in a table of hashed names) and ``keep``; the
operator of an entity type, else ``DEFAULT``, else replace. Overlaps are resolved as Presidio's default
(merge intersecting results of one type; drop a result contained in another, of equal extent only when its
score is not higher); results still overlapping partially are trimmed, the higher score keeping the shared
characters. Items carry offsets into the new text, in Presidio's order (last span first): the contract of a
sanitized document's ``changes`` (``document_changes.highlight`` and ``changed_characters`` read both).
"""
from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Iterable

from ..pii.engine import DocumentEntities, PiiEngine
from ..records import EntitySpan

LANGUAGES = ("en",)

PRESIDIO_BY_SUBTYPE = {"EMAIL": "EMAIL_ADDRESS", "PHONE": "PHONE_NUMBER", "IBAN": "IBAN_CODE", "CARD": "CREDIT_CARD",
                       "IP": "IP_ADDRESS", "URL": "URL"}
PRESIDIO_BY_TYPE = {"PERSON": "PERSON", "LOC": "LOCATION", "DATETIME": "DATE_TIME", "DEM": "NRP",
                    "ORG": "ORGANIZATION", "CODE": "CODE", "QUANTITY": "QUANTITY", "MISC": "MISC"}
OPERATORS = ("replace", "redact", "mask", "hash", "keep")
HASH_TYPES = ("sha256", "sha512")


class InvalidRequest(ValueError):
    """The request is well-formed JSON but cannot be served (Presidio answers these with 422). The message
    names parameters and limits, never values from the text."""


def presidio_entity(span: EntitySpan) -> str:
    if span.type == "CODE" and span.subtype in PRESIDIO_BY_SUBTYPE:
        return PRESIDIO_BY_SUBTYPE[span.subtype]
    return PRESIDIO_BY_TYPE.get(span.type, span.type)


class Analyzer:
    """The pii core behind ``POST /analyze``. One request is one document (a fresh entity registry); the
    engine's spaCy pipeline is not shared between threads, so calls are serialized."""

    def __init__(self, engine: PiiEngine):
        self.engine = engine
        self._lock = threading.Lock()

    def analyze(self, text: str, language: str, entities: Iterable[str] | None = None,
                score_threshold: float | None = None) -> list[dict[str, Any]]:
        if language not in LANGUAGES:
            raise InvalidRequest(f"language: only {', '.join(LANGUAGES)} is supported")
        if not text:
            return []
        with self._lock:
            spans = self.engine.detect(text, DocumentEntities("api"))
        wanted = set(entities) if entities else None
        threshold = score_threshold or 0.0
        out = []
        for span in sorted(spans, key=lambda s: (s.start, s.end)):
            name = presidio_entity(span)
            if (wanted is not None and name not in wanted) or span.score < threshold:
                continue
            out.append({"entity_type": name, "start": span.start, "end": span.end, "score": span.score,
                        "analysis_explanation": None,
                        "recognition_metadata": {"recognizer_name": span.recognizer,
                                                 "identifier_type": span.identifier_type}})
        return out


# ---------------------------------------------------------------------------------------------
# anonymize
# ---------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Result:
    entity_type: str
    start: int
    end: int
    score: float

    def overlap(self, other: "Result") -> int:
        return max(0, min(self.end, other.end) - max(self.start, other.start))

    def contains(self, other: "Result") -> bool:
        return self.start <= other.start and self.end >= other.end

    def conflicts_with(self, other: "Result") -> bool:
        """Presidio's rule: dropped in favour of ``other`` when inside it (same extent: not a higher score)."""
        if (self.start, self.end) == (other.start, other.end):
            return self.score <= other.score
        return other.contains(self)


_SESSION_SALT = secrets.token_bytes(16)


def _validate_operator(config: dict[str, Any]) -> None:
    kind = config.get("type")
    if kind not in OPERATORS:
        raise InvalidRequest(f"anonymizers: operator type must be one of {', '.join(OPERATORS)}")
    if kind == "mask":
        char, count = config.get("masking_char"), config.get("chars_to_mask")
        if not isinstance(char, str) or len(char) != 1:
            raise InvalidRequest("mask: masking_char must be one character")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise InvalidRequest("mask: chars_to_mask must be a non-negative integer")
    if kind == "hash" and config.get("hash_type", "sha256") not in HASH_TYPES:
        raise InvalidRequest(f"hash: hash_type must be one of {', '.join(HASH_TYPES)}")


def operate(value: str, entity_type: str, config: dict[str, Any]) -> str:
    """One Presidio operator applied to one span's text."""
    kind = config.get("type", "replace")
    if kind == "replace":
        return config.get("new_value") or f"<{entity_type}>"
    if kind == "redact":
        return ""
    if kind == "keep":
        return value
    if kind == "mask":
        n = min(len(value), config["chars_to_mask"])
        start = len(value) - n if config.get("from_end") else 0
        return value[:start] + config["masking_char"] * n + value[start + n:]
    if kind == "hash":
        salt = config["salt"].encode() if config.get("salt") else _SESSION_SALT
        return hashlib.new(config.get("hash_type", "sha256"), salt + value.encode()).hexdigest()
    raise InvalidRequest(f"anonymizers: unknown operator type {kind!r}")


def resolve_conflicts(results: list[Result]) -> list[Result]:
    """Presidio's default conflict resolution, then trimming of partial overlaps; sorted by start."""
    merged: list[Result] = []
    for r in results:  # intersecting results of one type become one (union of extents, max score)
        r = Result(r.entity_type, r.start, r.end, r.score)
        changed = True
        while changed:
            changed = False
            for m in merged:
                if m.entity_type == r.entity_type and m.overlap(r) > 0:
                    merged.remove(m)
                    r = Result(r.entity_type, min(r.start, m.start), max(r.end, m.end), max(r.score, m.score))
                    changed = True
                    break
        merged.append(r)
    kept = list(merged)
    for r in merged:
        if any(r.conflicts_with(o) for o in kept if o is not r):
            kept.remove(r)
    kept.sort(key=lambda r: (r.start, r.end))
    i = 0
    while i < len(kept) - 1:
        a, b = kept[i], kept[i + 1]
        if a.end <= b.start:
            i += 1
            continue
        if a.score >= b.score:
            b.start = a.end
        else:
            a.end = b.start
        kept = sorted((r for r in kept if r.start < r.end), key=lambda r: (r.start, r.end))
    return kept


def anonymize(text: str, analyzer_results: list[dict[str, Any]],
              anonymizers: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Presidio's ``POST /anonymize``: ``{"text", "items": [{"start", "end", "entity_type", "text",
    "operator"}]}`` with item offsets into the new text."""
    if not text:
        raise InvalidRequest("Invalid input, text can not be empty")
    anonymizers = anonymizers or {}
    for config in anonymizers.values():
        _validate_operator(config)
    results = []
    for r in analyzer_results:
        start, end = r["start"], r["end"]
        if not 0 <= start <= end <= len(text):
            raise InvalidRequest(f"Invalid analyzer result, start: {start} and end: {end}, "
                                 f"while text length is only {len(text)}")
        results.append(Result(r["entity_type"], start, end, float(r["score"])))
    pieces, items, cursor, shift = [], [], 0, 0
    for r in resolve_conflicts(results):
        config = anonymizers.get(r.entity_type) or anonymizers.get("DEFAULT") or {"type": "replace"}
        new = operate(text[r.start:r.end], r.entity_type, config)
        pieces += [text[cursor:r.start], new]
        items.append({"start": r.start + shift, "end": r.start + shift + len(new), "entity_type": r.entity_type,
                      "text": new, "operator": config.get("type", "replace")})
        shift += len(new) - (r.end - r.start)
        cursor = r.end
    pieces.append(text[cursor:])
    return {"text": "".join(pieces), "items": items[::-1]}
