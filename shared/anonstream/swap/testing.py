"""Synthetic chunks for tests and demos (no spaCy): entity markup in a template string.

    make_chunk("d1", 0, "We met {ORG:ARM} and {ORG/PRODUCT:IC Validator} in {LOC/GPE:Texas}.",
               component=3)

``{TYPE:value}`` or ``{TYPE/SUBTYPE:value}`` becomes an ``EntitySpan`` (QUASI, in clear);
``{TYPE#kind:value}`` gives it a kind (``EntitySpan.kind``), ``{TYPE@ref:value}`` an entity id; ``{TYPE~:value}`` makes it NO_MASK;
``{TYPE!:value}`` one already replaced by the pii stage (``surrogate`` = value). The same value twice in
one document is one entity.
"""
from __future__ import annotations

import re

from ..records import Chunk, EntitySpan

_MARK = re.compile(r"\{(?P<type>[A-Z]+)(?:/(?P<sub>[A-Z_]+))?(?:#(?P<kind>[a-z_]+))?(?:@(?P<ref>\w+))?(?P<bang>!)?(?P<tilde>~)?:"
                   r"(?P<value>[^{}]+)\}")


def make_chunk(doc_id: str, index: int, template: str, *, component: int | None = 0, model_version: int = 1,
               chunk_count: int | None = None, identifier_type: str = "QUASI", country: str | None = None) -> Chunk:
    """A chunk from a template: ``{TYPE/SUBTYPE#kind@ref!~:value}`` marks an entity (``!`` already replaced,
    ``~`` NO_MASK); ``country`` is recorded on its places and organisations, as the pii stage does."""
    text_parts: list[str] = []
    entities: list[EntitySpan] = []
    pos = 0
    cursor = 0
    for n, m in enumerate(_MARK.finditer(template)):
        before = template[cursor:m.start()]
        text_parts.append(before)
        pos += len(before)
        value = m.group("value")
        replaced = bool(m.group("bang"))
        entities.append(EntitySpan(
            start=pos, end=pos + len(value), type=m.group("type"),
            identifier_type="DIRECT" if replaced else "NO_MASK" if m.group("tilde") else identifier_type,
            entity_id=f"{doc_id}_{m.group('ref')}" if m.group("ref") else f"{doc_id}:{value}", text=value, surrogate=value if replaced else None,
            subtype=m.group("sub"), kind=m.group("kind"), recognizer="test",
            country=country if m.group("type") in ("LOC", "ORG") and m.group("kind") not in ("country", "continent")
            else None))
        text_parts.append(value)
        pos += len(value)
        cursor = m.end()
    text_parts.append(template[cursor:])
    cluster = None if component is None else {"model_version": model_version, "component": component,
                                              "posterior": 0.9, "log_density": -1.0}
    return Chunk(doc_id=doc_id, chunk_index=index, chunk_count=chunk_count or index + 1, text="".join(text_parts),
                 doc_start=0, sentence_count=1, metadata={}, entities=entities, cluster=cluster,
                 lineage={"ingest": "1", "pii": "1"})
