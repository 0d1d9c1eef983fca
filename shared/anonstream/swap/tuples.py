"""Chunk entity tuples: the value of each release category in a chunk (paper 000, §3.1.4).

The paper turns each chunk y_i into one cell of the p-way contingency table z (§2, "p-way
contingency table"): per category, the chunk's value is its named entities of that category joined
into one value ("Goldman Sachs & Morgan Stanley"), no value when there is none.

Here a chunk's *mentions* are its entity spans still in clear (``surrogate is None``: the pii stage
has not replaced them), with overlapping spans resolved (a span already replaced wins, then the
longer one) and a trailing possessive ("Siemens's", "Siemens'") left out of the value. Values are
compared by a normalized key (NFKC, case-folded, whitespace collapsed, a leading "the" dropped); the
surface form of a value is the one of its first mention. DIRECT identifiers still in clear are not
part of the tuple: the swap stage always suppresses them (defense in depth; the pii stage should have
replaced them already).

* ``chunk_tuple(chunk, release)``: {category: joined value}, categories without a value left out.
* ``tuple_values(chunk, release)``: {category: [distinct surface values in order of first mention]}.
* ``analyze(chunk, release)``: mentions, list *sites* (mentions of one slot joined by ", ",
  " and ", " & " ...) and the digests the pairing compares.

Scope (``release.scope``): with ``masked`` (the default) only entities the pii stage decided to mask
(QUASI; DIRECT ones are pseudonyms already) are mentions: NO_MASK entities ("the Court of Cassation")
stay as written and are not part of the tuple. With ``all`` every detected entity is, as in the paper.

Slots: a value may only move into a place that held one of the same *kind* (``EntitySpan.kind``, decided
by the pii stage: a court for a court, a city for a city of the same country). A mention's slot is its kind
(its category when the span has no kind); the pairing exchanges values slot by slot. Inside a slot the
values are the chunk's distinct *entities* (``entity_id``), each represented by its longest surface in the
chunk that is not an acronym, so "Turkish Revolutionary Communist Party (TDKP)" is one value whose
acronym mention follows it (``rewrite``). An entity the chunk names only by its acronym while the pii stage
knows its kind from the full name elsewhere ("LO") has the slot "<kind> acronym": it swaps with acronyms of its kind, never into a
full name's place.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

from ..pii.gazetteer import canonical_city, city_country
from ..records import Chunk, EntitySpan
from .release import CATEGORIES, Release, category_of

_POSSESSIVE = re.compile(r"(?:['’]s|(?<=[sS])['’])$")
_LEADING_THE = re.compile(r"^the\s+")
# Text between two mentions of one category that makes them one list ("A, B and C", "A & B", "A/B").
# Never across a line break: a list re-rendered with fewer values would remove it.
_LIST_SEPARATOR = re.compile(r"^(?:[ \t]*,[ \t]*(?:(?:and|or|&)[ \t]+)?|[ \t]+(?:and|or|&)[ \t]+|[ \t]*/[ \t]*|[ \t]*;[ \t]*)\Z",
                             re.I)
_CLAUSE_JOIN = re.compile(r"[ \t]*,[ \t]*(?:and|or)[ \t]+\Z", re.I)
_ACRONYM = re.compile(r"^[A-Z0-9][A-Z0-9&./-]*[A-Z0-9.]$")


def norm_key(value: str) -> str:
    """Comparison key of a value: NFKC, case-folded, whitespace collapsed, leading "the" dropped; a city's other
    names are its main name ("Warszawa" and "Warsaw" are one value, so a swap between them changes nothing)."""
    key = " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    key = _LEADING_THE.sub("", key).strip(" .,;:\"'’“”")
    return canonical_city(key) or key


@dataclass(slots=True)
class Mention:
    """One clear entity mention: ``entities[index]`` covering ``text[start:end]`` (the value)."""

    index: int
    category: str
    start: int
    end: int
    value: str
    key: str
    direct: bool
    entity: EntitySpan
    slot: str = ""  # the kind of thing it is: values only move between mentions of one slot
    ref: str = ""  # the entity it mentions (entity_id; the key when there is none)
    short: bool = False  # an acronym of an entity the chunk also names in full ("TDKP" beside its expansion)

    @property
    def acronym(self) -> bool:
        return is_acronym(self.value)


@dataclass(slots=True)
class Site:
    """Consecutive mentions of one slot that read as one list ("ARM, TSMC and Xilinx")."""

    category: str
    mentions: list[Mention]
    direct: bool = False
    slot: str = ""

    @property
    def start(self) -> int:
        return self.mentions[0].start

    @property
    def end(self) -> int:
        return self.mentions[-1].end

    @property
    def values(self) -> list[str]:
        return [m.value for m in self.mentions]


@dataclass(slots=True)
class Analysis:
    """Everything the pairing needs to know about one chunk under one release."""

    mentions: list[Mention]
    sites: list[Site]
    values: dict[str, list[str]]  # category -> distinct surface values (first-mention order)
    keys: dict[str, list[str]] = field(default_factory=dict)  # category -> their keys
    slots: dict[str, list[str]] = field(default_factory=dict)  # slot -> refs of its entities (first mention)
    slot_values: dict[str, list[str]] = field(default_factory=dict)  # slot -> each entity's value
    slot_category: dict[str, str] = field(default_factory=dict)  # slot -> its release category

    def tuple(self, separator: str = " & ") -> dict[str, str]:
        return {c: separator.join(v) for c, v in self.values.items() if v}

    def presence(self, categories: Iterable[str]) -> tuple[str, ...]:
        """Which of ``categories`` have a value."""
        return tuple(c for c in categories if self.values.get(c))

    def slots_in(self, categories: Iterable[str]) -> tuple[str, ...]:
        """The slots (sorted) whose category is one of ``categories``: the places values can move into."""
        wanted = set(categories)
        return tuple(sorted(s for s, c in self.slot_category.items() if c in wanted and self.slots.get(s)))

    def slot_shape(self, slots: Iterable[str]) -> list[int]:
        """Number of entities in each of ``slots``."""
        return [len(self.slots[s]) for s in slots]

    def slot_digests(self, slots: Iterable[str]) -> dict[str, str]:
        """Per slot, a digest of its value keys (what a swap on that slot would change)."""
        return {s: digest_of({s: [norm_key(v) for v in self.slot_values[s]]}) for s in slots}

    def digest(self, categories: Iterable[str]) -> str:
        """Digest of the value sets on ``categories`` (a cell of the marginal table z_J, §2.4.3)."""
        return digest_of({c: self.keys.get(c, []) for c in categories})


def swappable_slots(an: Analysis, release: Release) -> tuple[str, ...]:
    """The slots of the swapped categories J whose kind the release swaps: what a partner could exchange. None:
    the swap stage releases the chunk at once (reason ``no_values``) and looks for no partner."""
    return tuple(s for s in an.slots_in(release.swapped) if release.swaps_slot(kind_of_slot(s)))


def digest_of(keys: dict[str, list[str]]) -> str:
    """Order-free digest of {category: value keys}; categories without values count as empty."""
    canonical = json.dumps([[c, sorted(set(v))] for c, v in sorted(keys.items()) if v],
                           ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


def _value_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Trim whitespace and a trailing possessive from ``text[start:end]``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    m = _POSSESSIVE.search(text[start:end])
    if m and m.start() > 0:
        end = start + m.start()
    return start, end


def is_acronym(value: str) -> bool:
    """"TDKP", "HAK-PAR", "THKP-C", "U.S.": capitals and digits, no spaces, at least two letters."""
    return bool(_ACRONYM.match(value)) and sum(ch.isalpha() for ch in value) >= 2


ACRONYM_SLOT = " acronym"  # suffix of the slot of an entity the chunk names by its acronym only


COUNTRY_SLOT = " in "  # "city in PL": a city of that country


def kind_of_slot(slot: str) -> str:
    """The kind a slot holds ("association acronym" holds associations, "city in PL" cities)."""
    return slot.removesuffix(ACRONYM_SLOT).partition(COUNTRY_SLOT)[0]


def country_of_slot(slot: str) -> str | None:
    """The country a slot's values belong to ("city in PL" → "PL"), or None."""
    return slot.removesuffix(ACRONYM_SLOT).partition(COUNTRY_SLOT)[2] or None


def slot_of(entity: EntitySpan) -> str:
    """The entity's kind, or its release category (capitalized, so never mistaken for a kind) when the pii
    stage recorded none. A place's or organisation's slot names its country ("city in PL", "school in TR";
    ``EntitySpan.country``, a city's own from GeoNames): it gives way only to one of the same country, so "lives
    in Izmir" never reads "lives in Bytów" (Poland), a Turkish university never becomes a Danish one, and the
    reader still learns the country, which is true."""
    if entity.kind == "city" and (country := entity.country or city_country(entity.text.split(",")[0])):
        return f"city{COUNTRY_SLOT}{country}"
    if entity.kind and entity.country:
        return f"{entity.kind}{COUNTRY_SLOT}{entity.country}"
    return entity.kind or category_of(entity)


def mentions(chunk: Chunk, scope: str = "all") -> list[Mention]:
    """The chunk's clear mentions in text order (see the module docstring for the rules); with ``scope``
    ``masked`` only those of entities the pii stage decided to mask."""
    text = chunk.text
    entities = chunk.entities or []
    valid = [(i, e) for i, e in enumerate(entities) if 0 <= e.start < e.end <= len(text)
             and (scope == "all" or e.identifier_type != "NO_MASK" or e.surrogate is not None)]
    # replaced spans first (they are fixed), then longer spans, then earlier ones
    ranked = sorted(valid, key=lambda ie: (ie[1].surrogate is None, -(ie[1].end - ie[1].start), ie[1].start))
    taken: list[tuple[int, int]] = []
    out: list[Mention] = []
    for i, e in ranked:
        if any(e.start < t_end and t_start < e.end for t_start, t_end in taken):
            continue
        taken.append((e.start, e.end))
        if e.surrogate is not None:
            continue
        start, end = _value_span(text, e.start, e.end)
        if start >= end:
            continue
        value = " ".join(text[start:end].split())
        key = norm_key(value)
        if not key:
            continue
        out.append(Mention(i, category_of(e), start, end, value, key, e.identifier_type == "DIRECT", e,
                           slot_of(e), e.entity_id or f"key:{key}"))
    out.sort(key=lambda m: m.start)
    return out


def sites(text: str, found: list[Mention]) -> list[Site]:
    """Group mentions (text order) into list sites: same slot, same DIRECT flag, only a list separator (on one
    line) between them, and no entity twice (a name repeated after a comma starts a new clause, not a list). A comma
    before "and"/"or" joins a list only after two items or more ("A, B, and C"); after one it joins two clauses
    ("in 2015, and 2016 was better than 2015" had become "in the 2010s was better than the 2010s")."""
    out: list[Site] = []
    for m in found:
        last = out[-1] if out else None
        gap = text[last.end:m.start] if last is not None else ""
        if (last is not None and last.slot == m.slot and last.direct == m.direct
                and _LIST_SEPARATOR.match(gap) and not (len(last.mentions) == 1 and _CLAUSE_JOIN.match(gap))
                and all(other.ref != m.ref for other in last.mentions)):  # "at Siemens, and Siemens expects": no list
            last.mentions.append(m)
        else:
            out.append(Site(m.category, [m], m.direct, m.slot))
    return out


def analyze(chunk: Chunk, release: Release) -> Analysis:
    found = mentions(chunk, release.scope)
    values: dict[str, list[str]] = {}
    keys: dict[str, list[str]] = {}
    slots: dict[str, list[str]] = {}
    best: dict[str, str] = {}  # ref -> its representative surface
    slot_category: dict[str, str] = {}
    for m in found:
        if m.direct:
            continue
        k = keys.setdefault(m.category, [])
        if m.key not in k:
            k.append(m.key)
            values.setdefault(m.category, []).append(m.value)
        current = best.get(m.ref)
        if current is None or (is_acronym(current) and not m.acronym) or (
                is_acronym(current) == m.acronym and len(m.value) > len(current)):
            best[m.ref] = m.value
    for m in found:
        if m.direct:
            continue
        if is_acronym(best[m.ref]) and m.entity.kind not in (None, "acronym"):  # named in full elsewhere, only
            m.slot += ACRONYM_SLOT  # its acronym here ("LO"): no value for a full name's place ("the Foundation")
        refs = slots.setdefault(m.slot, [])
        slot_category.setdefault(m.slot, m.category)
        if m.ref not in refs:
            refs.append(m.ref)
    ordered_values = {c: values[c] for c in CATEGORIES if c in values}
    ordered_keys = {c: keys[c] for c in CATEGORIES if c in keys}
    slot_values = {s: [best[r] for r in refs] for s, refs in slots.items()}
    for m in found:
        m.short = m.acronym and m.ref in best and not is_acronym(best[m.ref])
    return Analysis(found, sites(chunk.text, found), ordered_values, ordered_keys, slots, slot_values, slot_category)


def tuple_values(chunk: Chunk, release: Release) -> dict[str, list[str]]:
    """{category: distinct surface values in order of first mention}; empty categories left out."""
    return analyze(chunk, release).values


def chunk_tuple(chunk: Chunk, release: Release) -> dict[str, str]:
    """{category: value} with several entities of one category joined as one value (§3.1.4)."""
    return analyze(chunk, release).tuple(release.join_separator)
