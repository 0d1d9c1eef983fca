"""Where a sanitized document differs from its input: one record per changed span of the output text.

Two stages change text. The pii stage replaces direct identifiers by pseudonyms (entity spans with a
``surrogate``); the swap stage rewrites spans (the chunk's ``changes``: swap, generalize, suppress; the
mentions it changed carry a ``surrogate`` too). ``chunk_changes`` merges both sources of one sanitized
chunk: spans that overlap are one change (a swap change that covers the mentions it rewrote, a list
re-rendered as one value), the swap stage's operator wins, the entity attributes come from the first
mention inside. ``document_changes`` moves them to document offsets, the way the sink joins the chunks
(concatenated in chunk order). No record holds the value that was replaced: that stays on the
restricted swap log.

A change is ``{start, end, entity_type, kind, identifier_type, operator, release_version}``; the output
characters ``text[start:end]`` are the surrogate (``start == end``: the value was removed). Changes
are sorted and disjoint, so ``changed_characters`` (the mask) and ``highlight`` (markers around every
surrogate) need nothing else.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

OP_PSEUDONYM = "pseudonym"  # the pii stage's replacement of a direct identifier
OPERATORS = (OP_PSEUDONYM, "swap", "generalize", "suppress")

MARKERS = ("⟦", "⟧")
ANSI_MARKERS = ("\x1b[1;33m", "\x1b[0m")  # bold yellow, reset


def _overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """Whether two spans share a character, or an empty span (a removed value) lies strictly inside the other."""
    if a_start == a_end:
        return b_start < a_start < b_end
    if b_start == b_end:
        return a_start < b_start < a_end
    return a_start < b_end and b_start < a_end


def chunk_changes(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes of one sanitized chunk (wire form), offsets into the chunk's text."""
    release = chunk.get("release") or {}
    version = release.get("version")
    rewrites = [(c["start"], c["end"], c["operator"]) for c in chunk.get("changes") or []]
    replaced = [e for e in chunk.get("entities") or [] if e.get("surrogate") is not None]
    spans = sorted([(s, t, op, None) for s, t, op in rewrites]
                   + [(e["start"], e["end"], None, e) for e in replaced], key=lambda x: (x[0], x[1]))
    groups: list[list[tuple[int, int, str | None, dict | None]]] = []
    for span in spans:
        if groups and any(_overlaps(span[0], span[1], s, t) for s, t, _, _ in groups[-1]):
            groups[-1].append(span)
        else:
            groups.append([span])
    out = []
    for group in groups:
        entity = next((e for _, _, _, e in group if e is not None), None)
        operator = next((op for _, _, op, _ in group if op is not None), OP_PSEUDONYM)
        out.append({"start": min(s for s, _, _, _ in group), "end": max(t for _, t, _, _ in group),
                    "entity_type": entity["type"] if entity else None,
                    "kind": entity.get("kind") if entity else None,
                    "identifier_type": entity["identifier_type"] if entity else None,
                    "operator": operator, "release_version": version})
    return out


def document_changes(chunks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes of a document assembled from its sanitized chunks (wire form, chunk order), offsets
    into the joined text."""
    out: list[dict[str, Any]] = []
    offset = 0
    for chunk in chunks:
        for change in chunk_changes(chunk):
            out.append({**change, "start": change["start"] + offset, "end": change["end"] + offset})
        offset += len(chunk["text"])
    return out


def changed_characters(length: int, changes: Iterable[dict[str, Any]]) -> list[bool]:
    """For each character of an output text of ``length`` characters: whether it belongs to a surrogate."""
    mask = [False] * length
    for change in changes:
        mask[change["start"]:change["end"]] = [True] * (change["end"] - change["start"])
    return mask


def highlight(text: str, changes: Iterable[dict[str, Any]], markers: tuple[str, str] = MARKERS) -> str:
    """``text`` with every surrogate between ``markers`` (``ANSI_MARKERS`` for a terminal)."""
    pieces = []
    cursor = 0
    for change in sorted(changes, key=lambda c: (c["start"], c["end"])):
        pieces += [text[cursor:change["start"]], markers[0], text[change["start"]:change["end"]], markers[1]]
        cursor = change["end"]
    pieces.append(text[cursor:])
    return "".join(pieces)
