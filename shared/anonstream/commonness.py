"""Identifying power of a value, counted on the stream: how many distinct protected identities mention it.

Paper 000 measures risk on rare *combinations* of values (the sample uniques of the tuple table, eq. 2.14-2.16);
this module gives the single-value decision the same evidence from the same stream. A value is counted once per
*identity* (the metadata field the release names, ``identity_field``, e.g. a company's ``ticker``; by default the
document id), never per mention, so "COVID" that every company names counts every company, and "Choice Hotels",
named by one company in a thousand calls, counts one. A QUASI named value (organisation, place, product, event,
term, group) that at least ``threshold`` identities mention identifies nobody on its own and is released as written;
the pii stage records the reason on its spans (``common(k=…)``).

* ``value_key(text)``: what is counted: the normalized form ("the  EBITDA" and "EBITDA" are one).
* ``ValueCounts``: ``add(identity, keys)`` (idempotent: adding an identity twice changes nothing, so a redelivered
  record counts once) and ``counts(keys)``; ``identities()`` is the number of identities seen. In memory here
  (the embedded runner; exact sets of 8-byte identity digests); Redis HyperLogLogs in
  ``stores/redis_values.py`` (the services).
* ``CommonRule``: the threshold, ``max(common_k, ceil(common_share × identities seen))``: a share of the identities
  seen, so a value does not become common because the stream grew; ``common_k`` a floor that makes the cold start
  safe (nothing is common until ``common_k`` identities mention it).
* ``common_entities``: the pure decision over one document's spans.
* ``InMemoryValueCounts.save``/``load``: counts of a reference corpus (``anonstream counts warm``), to seed a run.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from .records import EntitySpan

# TAB types whose values are named things; dates and amounts are generalized whatever their frequency, names and
# codes (DIRECT, or PERSON/CODE) pseudonymized however common.
NAMED_TYPES = frozenset(("ORG", "LOC", "MISC", "DEM"))
_LEADING_THE = re.compile(r"^the\s+")
_EDGE_PUNCTUATION = " .,;:!?\"'’“”()[]"
_POSSESSIVE = re.compile(r"(?:['’]s|(?<=s)['’])$")


def normalize_form(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed, a leading "the", a possessive and edge punctuation dropped."""
    form = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    form = _LEADING_THE.sub("", form).strip(_EDGE_PUNCTUATION)
    return _POSSESSIVE.sub("", form)


def value_key(text: str) -> str:
    """The counted key of a value: its normalized form. Not its kind: the kind the pii stage gives one string varies
    between documents and between versions of the kind rules (in 1,028 earnings calls "EBITDA" was read as an acronym
    in 171 companies' calls and as a product in 48), and what identifies is the string a reader sees, whatever its
    kind: a string that many identities write singles none of them out."""
    return normalize_form(text)


def _identity_digest(identity: str) -> bytes:
    return hashlib.blake2b(identity.encode("utf-8"), digest_size=8).digest()


class ValueCounts(ABC):
    """Distinct identities per value key."""

    @abstractmethod
    def add(self, identity: str, keys: Iterable[str]) -> None:
        """Record that ``identity`` mentions each of ``keys`` (idempotent)."""

    @abstractmethod
    def counts(self, keys: Iterable[str]) -> dict[str, int]:
        """Distinct identities per key (0 for a key never added)."""

    @abstractmethod
    def identities(self) -> int:
        """Distinct identities ever added."""


class InMemoryValueCounts(ValueCounts):
    """Exact counts: per key the set of 8-byte identity digests (memory: about 8 bytes per identity and value plus
    the sets' overhead; the embedded runner's counts live as long as its run). ``counts warm --out`` saves them
    (``save``) and ``anonstream run --counts`` starts from them (``load``): an identity of the reference corpus that
    the stream mentions again is counted once."""

    def __init__(self) -> None:
        self._ids: dict[str, set[bytes]] = defaultdict(set)
        self._seen: set[bytes] = set()

    def add(self, identity: str, keys: Iterable[str]) -> None:
        digest = _identity_digest(identity)
        self._seen.add(digest)
        for key in keys:
            self._ids[key].add(digest)

    def counts(self, keys: Iterable[str]) -> dict[str, int]:
        return {key: len(self._ids.get(key, ())) for key in keys}

    def identities(self) -> int:
        return len(self._seen)

    def keys(self) -> list[str]:
        return list(self._ids)

    def save(self, path: str | Path, identity_field: str | None, min_count: int = 2) -> int:
        """Write the counts of values at least ``min_count`` identities mention (values of one identity cannot be
        common and are most of the keys); returns the number of values written."""
        ids = sorted(self._seen)
        index = {d: i for i, d in enumerate(ids)}
        values = {k: sorted(index[d] for d in v) for k, v in sorted(self._ids.items()) if len(v) >= min_count}
        Path(path).write_text(json.dumps({"identity_field": identity_field, "identities": [d.hex() for d in ids],
                                          "values": values}, ensure_ascii=False), encoding="utf-8")
        return len(values)

    @classmethod
    def load(cls, path: str | Path) -> "InMemoryValueCounts":
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
        counts = cls()
        ids = [bytes.fromhex(d) for d in obj["identities"]]
        counts._seen.update(ids)
        for key, members in obj["values"].items():
            counts._ids[key].update(ids[i] for i in members)
        return counts


@dataclass(frozen=True, slots=True)
class CommonRule:
    """When a value is common: at least ``common_k`` identities, and at least ``common_share`` of the identities
    seen so far, mention it. ``common_k`` None turns the rule off (nothing is common)."""

    common_k: int | None = None
    common_share: float = 0.0

    @property
    def enabled(self) -> bool:
        return self.common_k is not None

    def threshold(self, identities_seen: int) -> int:
        if self.common_k is None:
            raise ValueError("the common-value rule is off (common_k is null)")
        return max(self.common_k, math.ceil(self.common_share * identities_seen))


def candidate_keys(spans: Iterable[EntitySpan]) -> dict[str, set[str]]:
    """Per entity of one document, the value keys of its mentions in clear whose type is a named one. Every form of
    the entity is a key (an entity is common only if each of its forms is)."""
    out: dict[str, set[str]] = defaultdict(set)
    for span in spans:
        if span.type in NAMED_TYPES and span.surrogate is None and span.identifier_type != "DIRECT":
            out[span.entity_id].add(value_key(span.text))
    return dict(out)


def common_entities(candidates: Mapping[str, set[str]], counts: Mapping[str, int], threshold: int) -> dict[str, int]:
    """The entities every form of which at least ``threshold`` identities mention, with the smallest such count."""
    out: dict[str, int] = {}
    for entity_id, keys in candidates.items():
        least = min((counts.get(k, 0) for k in keys), default=0)
        if keys and least >= threshold:
            out[entity_id] = least
    return out


def common_reason(threshold: int) -> str:
    """The reason recorded on a span released as written because its value is common."""
    return f"common(k={threshold})"


def release_common(spans: list[EntitySpan], identity: str, counts: ValueCounts, rule: CommonRule) -> int:
    """Count one document's named values for ``identity``, then mark its QUASI entities whose every form is common
    NO_MASK with the reason (``EntitySpan.decision``). Returns the number of spans so released. Counting comes first,
    so the document's own identity is part of every count (a value only this identity names counts 1)."""
    candidates = candidate_keys(spans)
    keys = set().union(*candidates.values()) if candidates else set()
    counts.add(identity, keys)  # an identity without named values still counts among the identities seen
    if not rule.enabled or not candidates:
        return 0
    threshold = rule.threshold(counts.identities())
    common = common_entities(candidates, counts.counts(keys), threshold)
    released = 0
    for span in spans:
        if span.entity_id in common and span.identifier_type == "QUASI" and span.type in NAMED_TYPES:
            span.identifier_type = "NO_MASK"
            span.decision = common_reason(threshold)
            released += 1
    return released


def identity_of(metadata: Mapping[str, Any], doc_id: str, identity_field: str | None) -> str:
    """The protected identity of a document: its ``identity_field`` metadata value, else its document id."""
    if identity_field:
        value = metadata.get(identity_field)
        if value is not None and value != "":
            return f"{identity_field}={value}"
    return f"doc={doc_id}"


class FormCounts:
    """Look-ups over saved counts (the release judges): identities that mention a text."""

    def __init__(self, counts: InMemoryValueCounts):
        self.identities = counts.identities()
        self._by_key = counts.counts(counts.keys())

    def count(self, text: str) -> int:
        return self._by_key.get(value_key(text), 0)
