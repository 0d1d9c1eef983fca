"""In-document entity grouping: mentions of one entity share an entity id.

Rules (applied in order, within one entity type):
* the same normalized form (case, whitespace, leading article, trailing possessive, titles and a trailing
  parenthetical — "Bydgoszcz District Court (Sąd Rejonowy)" — do not matter);
* PERSON: a name matches an earlier one when the surnames agree and the given names are compatible
  ("Mr Polat" ~ "Cengiz Polat", "J. Wołąsiewicz" ~ "Jakub Wołąsiewicz", "Cengiz" ~ "Cengiz Polat" when that
  is the only Cengiz); ambiguous matches go to the most recently mentioned candidate;
* ORG/MISC: an acronym introduced in parentheses after a name ("Kurdistan Workers’ Party (PKK)") and the
  acronym written alone are the same entity as the full name.

The registry is per document and carried across its chunks (``to_state``/``from_state``, JSON-able).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

from .gazetteer import TITLES

_TITLE_PREFIX = re.compile(rf"^(?:(?:{'|'.join(t.lower() for t in TITLES)})\.?\s+(?:and\s+)?)+", re.I)
_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")
_STRIP = " .,;:'\"’“”()[]"
_SPACES = re.compile(r"\s+")
_ARTICLE = re.compile(r"^(?:the|a|an) ")
_POSSESSIVE = re.compile(r"'s$")
_ACRONYM_FORM = re.compile(r"[a-z0-9&/-]{2,12}")
_ACRONYM_AT_END = re.compile(r"\(([A-Z][A-Z0-9&/-]{1,11})\)\s*$")  # "Kurdistan Workers’ Party (PKK)"
_ACRONYM_AT_START = re.compile(r"\s*\(([A-Z][A-Z0-9&/-]{1,11})\)")  # the text after a name: " (PKK), an illegal"
IDENTIFIER_RANK = {"NO_MASK": 0, "QUASI": 1, "DIRECT": 2}


def normalize(text: str) -> str:
    """Comparison form of a surface."""
    text = unicodedata.normalize("NFKC", text).replace("‑", "-").replace("’", "'").casefold()
    text = _SPACES.sub(" ", text).strip(_STRIP)
    text = _ARTICLE.sub("", text)
    text = _POSSESSIVE.sub("", text)
    return text


def entity_form(entity_type: str, text: str) -> str:
    if entity_type in ("ORG", "LOC", "MISC"):
        text = _PAREN_TAIL.sub("", text) or text
    form = normalize(text)
    if entity_type == "PERSON":
        form = _TITLE_PREFIX.sub("", form).strip(_STRIP)
    return form or normalize(text)


_NAME_SPLIT = re.compile(r"[\s]+")


def _name_tokens(form: str) -> list[str]:
    return [t for t in _NAME_SPLIT.split(form.replace(".", ". ")) if t]


def _initial_of(tok: str) -> str | None:
    t = tok.rstrip(".")
    return t[0] if len(t) == 1 or tok.endswith(".") and len(t) <= 2 else None


def _given_compatible(a: list[str], b: list[str]) -> bool:
    """Given-name token lists (surname removed) are compatible if one is empty or they agree pairwise,
    an initial agreeing with a full name."""
    if not a or not b:
        return True
    for x, y in zip(a, b):
        ix, iy = _initial_of(x), _initial_of(y)
        if ix or iy:
            if (ix or x[0]) != (iy or y[0]):
                return False
        elif x.rstrip(".") != y.rstrip("."):
            return False
    return True


class DocumentEntities:
    """Entities of one document seen so far (grouping state carried across its chunks)."""

    VERSION = 2

    def __init__(self, doc_id: str = "", context: dict[str, Any] | None = None):
        self.doc_id = doc_id
        # entity: {id, type, subtype, key, forms, count, identifier_type, first_seen, last_seen, country, recognizers}
        # (+ PERSON: masked_surfaces, the raw surfaces of its masked mentions, set by the engine: consistency.py)
        self.entities: list[dict[str, Any]] = []
        self.context: dict[str, Any] = dict(context or {})  # e.g. {"country_counts": {"POL": 3}}
        self.mentions_seen = 0
        self._by_form: dict[tuple[str, str], int] = {}
        self._acronyms: dict[str, int] = {}
        # PERSON entity index -> (its number of forms, tokens of its most complete name): not part of the state
        self._fullest_names: dict[int, tuple[int, list[str]]] = {}

    # -- state -----------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        return {
            "version": self.VERSION,
            "doc_id": self.doc_id,
            "context": self.context,
            "mentions_seen": self.mentions_seen,
            "entities": [dict(e) for e in self.entities],
            "acronyms": dict(self._acronyms),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "DocumentEntities":
        obj = cls(state.get("doc_id", ""), state.get("context") or {})
        obj.mentions_seen = int(state.get("mentions_seen", 0))
        obj.entities = [dict(e) for e in state.get("entities", [])]
        for i, ent in enumerate(obj.entities):
            ent.setdefault("recognizers", [])
            for f in ent.get("forms", []):
                obj._by_form[(ent["type"], f)] = i
        obj._acronyms = {k: int(v) for k, v in (state.get("acronyms") or {}).items()}
        return obj

    # -- queries ---------------------------------------------------------------------------
    def by_id(self, entity_id: str) -> dict[str, Any] | None:
        prefix = f"{self.doc_id}_e" if self.doc_id else "e"
        try:
            idx = int(entity_id[len(prefix):]) - 1
        except ValueError:
            return None
        return self.entities[idx] if 0 <= idx < len(self.entities) else None

    def dominant_country(self, min_weight: int = 0) -> str | None:
        """The most-signalled country of the document (state-actor mentions weigh 10, places and
        nationalities 1), if its weight reaches ``min_weight``."""
        counts = self.context.get("country_counts") or {}
        if not counts:
            return None
        best = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        return best[0] if best[1] >= min_weight else None

    def count_country(self, iso: str, weight: int = 1) -> None:
        counts = self.context.setdefault("country_counts", {})
        counts[iso] = counts.get(iso, 0) + weight

    # -- grouping --------------------------------------------------------------------------
    def _new(self, entity_type: str, form: str, subtype: str | None) -> int:
        n = len(self.entities) + 1
        self.entities.append({
            "id": f"{self.doc_id}_e{n}" if self.doc_id else f"e{n}",
            "type": entity_type,
            "subtype": subtype,
            "key": f"{entity_type}:{form}",
            "forms": [],
            "count": 0,
            "identifier_type": None,
            "first_seen": self.mentions_seen,
            "last_seen": self.mentions_seen,
            "country": None,
            "recognizers": [],
        })
        return n - 1

    def resolve(self, entity_type: str, text: str, subtype: str | None = None, recognizer: str = "",
                following: str = "") -> dict[str, Any]:
        """Return the entity the mention ``text`` belongs to, creating it if new. ``following`` is the
        text right after the mention (to catch "Name (ACRONYM)")."""
        self.mentions_seen += 1
        form = entity_form(entity_type, text)
        idx = self._match_person(form) if entity_type == "PERSON" else None
        if idx is None:
            idx = self._by_form.get((entity_type, form))
        if idx is None and entity_type in ("ORG", "MISC", "LOC") and _ACRONYM_FORM.fullmatch(form):
            idx = self._acronyms.get(form)
        if idx is None:
            idx = self._new(entity_type, form, subtype)
        ent = self.entities[idx]
        ent["count"] += 1
        ent["last_seen"] = self.mentions_seen
        if form not in ent["forms"]:
            ent["forms"].append(form)
        if recognizer and recognizer not in ent["recognizers"]:
            ent["recognizers"].append(recognizer)
        if ent.get("subtype") is None and subtype:
            ent["subtype"] = subtype
        self._by_form[(entity_type, form)] = idx
        if entity_type in ("ORG", "MISC", "LOC"):
            m = _ACRONYM_AT_END.search(text) or _ACRONYM_AT_START.match(following)
            if m:
                self._acronyms.setdefault(m.group(1).lower(), idx)
        return ent

    def _match_person(self, form: str) -> int | None:
        toks = _name_tokens(form)
        if not toks:
            return None
        surname = toks[-1].rstrip(".")
        cands = []
        for i, ent in enumerate(self.entities):
            if ent["type"] != "PERSON" or not ent["forms"]:
                continue
            ft = self._fullest_name(i, ent["forms"])
            if not ft:
                continue
            if len(surname) > 1 and ft[-1].rstrip(".") == surname and _given_compatible(toks[:-1], ft[:-1]):
                cands.append(i)
            elif len(toks) == 1 and len(surname) > 2 and len(ft) > 1 and ft[0] == toks[0]:
                cands.append(i)  # a given name alone: "Cengiz" ~ "Cengiz Polat"
        if not cands:
            return None
        return max(cands, key=lambda i: self.entities[i]["last_seen"])

    def _fullest_name(self, idx: int, forms: list[str]) -> list[str]:
        """Tokens of entity ``idx``'s most complete name ("cengiz polat", not a bare "polat" it also has),
        computed again only when the entity has gained a form."""
        cached = self._fullest_names.get(idx)
        if cached is None or cached[0] != len(forms):
            cached = (len(forms), max((_name_tokens(f) for f in forms), key=lambda t: (len(t), sum(map(len, t)))))
            self._fullest_names[idx] = cached
        return cached[1]
