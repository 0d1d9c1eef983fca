"""Record contracts: what travels on each topic.

Every record on a chunk topic is one ``Chunk``; the stages fill in more of it as it moves along
(ingest: text and offsets; pii: entities; embed: embedding; cluster: cluster; swap: changes).
The JSON Schemas in ``schemas/`` are the wire contract; these classes are the in-process one and
``to_wire``/``from_wire`` convert between them. Field names are the same in both.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

# TAB's eight entity types (paper 001, TAB guidelines §3).
TAB_TYPES = ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC")
IDENTIFIER_TYPES = ("DIRECT", "QUASI", "NO_MASK")


@dataclass(slots=True)
class Document:
    """A producer's document (topic ``documents``) and, with sanitized text, the released one."""

    doc_id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, obj: dict[str, Any]) -> "Document":
        return cls(doc_id=obj["doc_id"], text=obj["text"], metadata=dict(obj.get("metadata") or {}))


@dataclass(slots=True)
class EntitySpan:
    """One detected mention inside a chunk's current text (offsets: code points, end exclusive).

    ``entity_id`` groups mentions of one entity inside a document; ``surrogate`` is the text that
    replaced the mention (``None`` while the mention is still in clear, e.g. a QUASI identifier
    left for the swap stage).
    """

    start: int
    end: int
    type: str
    identifier_type: str
    entity_id: str
    text: str
    surrogate: str | None = None
    subtype: str | None = None  # finer source label, e.g. OntoNotes EVENT/PRODUCT/GPE/NORP
    kind: str | None = None  # what sort of thing it is (court, city, nationality ...), pii/kinds.py
    recognizer: str = ""
    score: float = 1.0
    country: str | None = None  # ISO code of the country a place or organisation belongs to, pii/kinds.py
    decision: str | None = None  # why the masking decision differs from the policy's ("common(k=20)", commonness.py)

    def to_wire(self) -> dict[str, Any]:
        # the fields by name, not dataclasses.asdict: every field is a str, number or None, and asdict's recursive
        # deep copy of each was the largest cost of our own code in a profile of anonstream run
        return {name: getattr(self, name) for name in _ENTITY_FIELDS}

    @classmethod
    def from_wire(cls, obj: dict[str, Any]) -> "EntitySpan":
        return cls(**obj)


_ENTITY_FIELDS = tuple(f.name for f in fields(EntitySpan))


@dataclass(slots=True)
class Chunk:
    """A run of consecutive sentences of one document.

    The chunks of a document partition its text exactly: concatenating the ``text`` of chunks
    0..chunk_count-1 gives the document back (the whitespace between sentences stays with the
    chunk before it), so reassembly keeps the original layout.
    """

    doc_id: str
    chunk_index: int
    chunk_count: int
    text: str
    doc_start: int
    sentence_count: int
    metadata: dict[str, Any] = field(default_factory=dict)
    entities: list[EntitySpan] | None = None
    embedding: dict[str, Any] | None = None  # {"model", "dim", "vector": list[float]}
    cluster: dict[str, Any] | None = None  # {"model_version", "component", "posterior", "log_density"}
    changes: list[dict[str, Any]] | None = None  # rewritten spans, filled by swap
    release: dict[str, Any] | None = None  # echo of the release configuration, filled by swap
    entity_tuple: dict[str, str] | None = None  # category -> released value (paper 000 §2.1), by swap
    lineage: dict[str, str] = field(default_factory=dict)  # stage -> stage version

    @property
    def key(self) -> str:
        """Idempotency key of this chunk at its current stage: doc id, chunk index, stage versions."""
        stages = ",".join(f"{k}@{v}" for k, v in self.lineage.items())
        return f"{self.doc_id}|{self.chunk_index}|{stages}"

    def to_wire(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "doc_id": self.doc_id,
            "chunk_index": self.chunk_index,
            "chunk_count": self.chunk_count,
            "text": self.text,
            "doc_start": self.doc_start,
            "sentence_count": self.sentence_count,
            "metadata": self.metadata,
            "lineage": self.lineage,
        }
        if self.entities is not None:
            obj["entities"] = [e.to_wire() for e in self.entities]
        for name in ("embedding", "cluster", "changes", "release", "entity_tuple"):
            value = getattr(self, name)
            if value is not None:
                obj[name] = value
        return obj

    @classmethod
    def from_wire(cls, obj: dict[str, Any]) -> "Chunk":
        entities = obj.get("entities")
        return cls(
            doc_id=obj["doc_id"],
            chunk_index=obj["chunk_index"],
            chunk_count=obj["chunk_count"],
            text=obj["text"],
            doc_start=obj["doc_start"],
            sentence_count=obj["sentence_count"],
            metadata=dict(obj.get("metadata") or {}),
            entities=None if entities is None else [EntitySpan.from_wire(e) for e in entities],
            embedding=obj.get("embedding"),
            cluster=obj.get("cluster"),
            changes=obj.get("changes"),
            release=obj.get("release"),
            entity_tuple=obj.get("entity_tuple"),
            lineage=dict(obj.get("lineage") or {}),
        )
