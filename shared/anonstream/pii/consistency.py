"""Per-entity masking consistency: once a PERSON is masked, it is masked everywhere in the document.

The registry (``DocumentEntities``) records, per PERSON entity, the surface forms of its masked mentions
(``masked_surfaces``: "Mr Cengiz Polat", "Polat", "M"). ``consistent_spans`` then makes every whole-word,
case-sensitive occurrence of any of them in a text a masked PERSON mention of that entity, whatever the
recognizers said there: not detected at all ("dissimilarities between M and her husband"), detected with
another type ("S." read as an ORG), or inside a longer entity that is not masked now ("Polat Holding"). Privacy
first: in the last case the longer span is split around the mask and its pieces keep their entity and type;
except where the surface owns the longer name through a possessive clitic at its start ("Sam's Club"): there it
is part of the name, which a person's name never is (of the 29 annotated names holding "X's Word" in the 100 TAB
train judgments and the 100 biographies, none is a person).

Called on each text as it is detected (forms from earlier chunks and from this text), and again on every chunk
of a document once all of them are detected (``PiiEngine.process_document``), so that a name first masked in a
later chunk is masked in the earlier ones too.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from ..records import EntitySpan
from .gazetteer import STRONG_TITLES
from .grouping import DocumentEntities
from .occurrences import find_occurrences

RECOGNIZER = "consistency/same_surface"
# "Mr Nedim Öndeş" -> "Nedim Öndeş": a full name after a title is as specific without it, and the NER often
# reads the bare name as something else (an ORG, a facility) where the title is missing.
_TITLED_FULL_NAME = re.compile(rf"^(?:{'|'.join(STRONG_TITLES)})\.?\s+(?P<name>\w[\w'’.-]*(?:\s+\w[\w'’.-]*)+)$")
_POSSESSIVE_AT = re.compile(r"['’]s\s")
_FUNCTION_WORDS = frozenset(("the", "a", "an", "of", "and", "or", "for", "in", "on", "at", "to", "by", "with", "from", "s"))


def record_masked_surfaces(text: str, spans: list[EntitySpan], entities: DocumentEntities,
                           masks: Callable[[EntitySpan], bool]) -> None:
    """Remember the raw surface of every masked PERSON mention on its entity (``masked_surfaces``), and a titled
    full name also without its title. Mentions the consistency pass added are not recorded: they only repeat
    known surfaces (or join one to a masked span)."""
    for s in spans:
        if s.type != "PERSON" or not masks(s) or s.recognizer == RECOGNIZER:
            continue
        ent = entities.by_id(s.entity_id)
        if ent is None:
            continue
        surface = text[s.start : s.end].strip()
        known = ent.setdefault("masked_surfaces", [])
        titled = _TITLED_FULL_NAME.match(surface)
        for form in (surface, titled and titled["name"]):
            if form and form not in known:
                known.append(form)


def masked_forms(entities: DocumentEntities) -> dict[str, dict[str, Any]]:
    """Surface -> PERSON entity, over the document's masked surfaces (the latest-seen entity wins a tie)."""
    out: dict[str, dict[str, Any]] = {}
    for ent in sorted(entities.entities, key=lambda e: e.get("last_seen", 0)):
        if ent["type"] != "PERSON" or ent.get("identifier_type") == "NO_MASK":
            continue
        for surface in ent.get("masked_surfaces") or ():
            out[surface] = ent
    return out


def _piece(span: EntitySpan, text: str, start: int, end: int) -> EntitySpan | None:
    """The part [start, end) of ``span``, without surrounding spaces (punctuation stays: "BG Bank A/" keeps
    the slash of "A/S" covered); None when no word or only function words are left ("The" of "E.H. The")."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    words = re.findall(r"\w+", text[start:end])
    if not words or all(w.lower() in _FUNCTION_WORDS for w in words):
        return None
    return replace(span, start=start, end=end, text=text[start:end], surrogate=None)


def consistent_spans(text: str, spans: list[EntitySpan], entities: DocumentEntities,
                     masks: Callable[[EntitySpan], bool]) -> list[EntitySpan]:
    """Add a masked PERSON span for every whole-word occurrence of a masked surface that no masked span covers
    (see module docstring). An occurrence partly covered by masked spans ("Constable Bolte" where only "Bolte"
    is masked) becomes one span over their union, so no fragment of a name becomes a surface of its own; spans
    it overlaps that are not masked are split around it. Returns spans sorted by start."""
    forms = masked_forms(entities)
    if not forms:
        return spans
    masked = sorted((s for s in spans if masks(s)), key=lambda s: s.start)
    new: list[list[Any]] = []  # [start, end, entity]
    for m_start, m_end, form in find_occurrences(text, forms):
        if _POSSESSIVE_AT.match(text, m_end) and any(s.start == m_start and s.end > m_end + 3 for s in spans):
            continue  # the owner at the start of a longer name ("Sam" of "Sam's Club"): part of that name
        over = [s for s in masked if s.start < m_end and m_start < s.end]
        if any(s.start <= m_start and m_end <= s.end for s in over):
            continue  # already masked
        start = min([m_start] + [s.start for s in over])
        end = max([m_end] + [s.end for s in over])
        if new and start < new[-1][1]:  # overlaps the previous one (through a shared masked span): merge
            new[-1][1] = max(new[-1][1], end)
        else:
            new.append([start, end, forms[form]])
    if not new:
        return spans
    out: list[EntitySpan] = []
    for s in spans:
        hits = [(a, b) for a, b, _ in new if a < s.end and s.start < b]
        if not hits:
            out.append(s)
            continue
        if masks(s):
            continue  # a masked span partly covered by an occurrence: replaced by the union
        cursor = s.start
        for a, b in sorted(hits):  # split the unmasked span around the new masks
            if a > cursor:
                piece = _piece(s, text, cursor, a)
                if piece is not None:
                    out.append(piece)
            cursor = max(cursor, b)
        if cursor < s.end:
            piece = _piece(s, text, cursor, s.end)
            if piece is not None:
                out.append(piece)
    for a, b, ent in new:
        out.append(EntitySpan(start=a, end=b, type="PERSON", identifier_type=ent.get("identifier_type") or "QUASI",
                              entity_id=ent["id"], text=text[a:b], subtype="PERSON", recognizer=RECOGNIZER, score=0.8))
    return sorted(out, key=lambda s: (s.start, s.end))
