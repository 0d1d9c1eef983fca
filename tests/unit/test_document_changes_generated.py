"""Target: a consumer rebuilds, from a sanitized document's ``changes`` alone, which characters are surrogates.

Generated documents (names, codes, places, organisations, nationalities, dates, amounts in varied sentences,
one to three chunks) go through the pure cores of the pipeline: the pii stage's replacement
(``PiiEngine.apply``: direct identifiers become pseudonyms), the swap stage (``SwapProcessor``: swap,
generalize, suppress) and the sink (``SinkStage``: the document and its ``changes``). The reference is
computed apart from ``changes``: the input text is rewritten forward with the pii replacements (original
offsets from the generator, surrogates from the pii core) and the swap log's old/new values, flagging every
character written by a replacement; the result must be the released text, and the characters flagged must
be exactly those ``changes`` cover.
"""
from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonstream import contracts, topics
from anonstream.document_changes import OPERATORS, changed_characters, highlight
from anonstream.pii.engine import InMemoryPseudonymStore, PiiEngine
from anonstream.pii.grouping import DocumentEntities
from anonstream.records import Chunk, EntitySpan
from anonstream.stages.sink import SinkStage
from anonstream.stores.base import InMemoryPendingChunks
from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, Release, SwapProcessor
from anonstream.swap.release import DEFAULT_RELEASE

# (type, subtype, kind, identifier type) -> values
VOCAB = {
    ("PERSON", None, None, "DIRECT"): ["John Smith", "Anna Kowalska", "Mr Yilmaz", "Ms Jensen"],
    ("CODE", None, None, "DIRECT"): ["no. 12345/06", "AB-778-21"],
    ("LOC", "GPE", "city", "QUASI"): ["Paris", "Gdańsk", "Ankara", "Texas"],
    ("LOC", "GPE", "country", "QUASI"): ["Denmark", "Poland", "the United States"],
    ("ORG", None, "company", "QUASI"): ["Acme", "Beta Corp", "Siemens", "Johnson & Johnson"],
    ("DEM", "NORP", "nationality", "QUASI"): ["Danish", "Polish", "Italian"],
    ("DATETIME", "DATE", None, "QUASI"): ["31 August 2006", "May 2001", "2003", "5 June 1999"],
    ("QUANTITY", "MONEY", "money", "QUASI"): ["EUR 5,000", "300 euros", "$1.2 million"],
    ("ORG", None, "party", "NO_MASK"): ["Labour Party"],
}
KEYS = sorted(VOCAB, key=str)
SEPARATORS = [" ", ", ", " and ", " in ", " said ", " on ", " paid ", "'s ", " met ", " of "]
FILLER = ["we", "the applicant", "an", "a report", "growth", "on"]


def _release(**categories) -> Release:
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"].update({k: {"status": v} for k, v in categories.items()})
    return Release.from_dict(obj)


RELEASES = [Release.default(), _release(Date="S", Quantity="C", Organization="G"),
            _release(Location="C", Demographic="G")]

part = st.one_of(st.sampled_from(KEYS).flatmap(lambda k: st.sampled_from(VOCAB[k]).map(lambda v: (k, v))),
                 st.sampled_from(FILLER).map(lambda w: (None, w)))
sentence = st.lists(st.tuples(part, st.sampled_from(SEPARATORS)), min_size=1, max_size=6)
document = st.lists(st.lists(sentence, min_size=1, max_size=2), min_size=1, max_size=3)  # chunks of sentences


def _chunk_input(doc_id: str, index: int, count: int, sentences) -> tuple[str, list[EntitySpan]]:
    text, spans = "", []
    for parts in sentences:
        for j, ((key, value), sep) in enumerate(parts):
            word = value[:1].upper() + value[1:] if j == 0 and key is None else value
            if key is not None:
                type_, subtype, kind, identifier_type = key
                spans.append(EntitySpan(len(text), len(text) + len(word), type_, identifier_type,
                                        f"{doc_id}:{type_}:{word}", word, subtype=subtype, kind=kind,
                                        recognizer="test"))
            text += word + (sep if j < len(parts) - 1 else "")
        text += ".\n" if index == count - 1 else ". "
    return text, spans


def _forward(text: str, flags: list[bool], replacements: list[tuple[int, str, str]]) -> tuple[str, list[bool]]:
    """``text`` (``flags``: which of its characters a replacement wrote) with ``(start in text, old, new)``
    replacements applied (disjoint, sorted); the characters of ``new`` are flagged, the others keep theirs."""
    out, out_flags, cursor = [], [], 0
    for start, old, new in replacements:
        assert start >= cursor and text[start:start + len(old)] == old
        out.append(text[cursor:start] + new)
        out_flags += flags[cursor:start] + [True] * len(new)
        cursor = start + len(old)
    out.append(text[cursor:])
    out_flags += flags[cursor:]
    return "".join(out), out_flags


def _swap_replacements(released_text: str, logged: list[dict]) -> list[tuple[int, str, str]]:
    """The swap log's changes (offsets into the released text, ``old`` and ``new``) as replacements in the
    text before the swap."""
    out, shift = [], 0
    for change in sorted(logged, key=lambda c: c["start"]):
        assert released_text[change["start"]:change["end"]] == change["new"]
        out.append((change["start"] - shift, change["old"], change["new"]))
        shift += len(change["new"]) - len(change["old"])
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(document, min_size=2, max_size=4), st.sampled_from(range(len(RELEASES))),
       st.randoms(use_true_random=False))
def test_changes_alone_mark_exactly_the_changed_characters(documents, which, rnd):
    release = RELEASES[which]
    engine = PiiEngine(None, [])
    pseudonyms = InMemoryPseudonymStore()
    swap = SwapProcessor(release, InMemoryPoolStore(), InMemoryTupleCounts(), random.Random(rnd.random()),
                         clock=lambda: 0.0)
    reference: dict[tuple[str, int], tuple[str, str, list[tuple[int, str, str]]]] = {}
    released, log = [], []
    for d, chunks in enumerate(documents):
        doc_id, registry = f"doc{d}", DocumentEntities(f"doc{d}")
        for i, sentences in enumerate(chunks):
            text, spans = _chunk_input(doc_id, i, len(chunks), sentences)
            originals = [(s.start, s.text) for s in spans]
            pii_text, pii_spans = engine.apply(text, spans, registry, pseudonyms, doc_id)
            pii_replacements = [(start, old, s.surrogate) for (start, old), s in zip(originals, pii_spans)
                                if s.surrogate is not None]
            reference[(doc_id, i)] = (text, pii_text, pii_replacements)
            chunk = Chunk(doc_id, i, len(chunks), pii_text, 0, len(sentences), {}, entities=pii_spans,
                          cluster={"model_version": 1, "component": rnd.randrange(2), "posterior": 0.9,
                                   "log_density": -1.0}, lineage={"ingest": "1", "pii": "1"})
            out = swap.offer(chunk)
            released += out.chunks
            log += out.log
    out = swap.drain()
    released += out.chunks
    log += out.log
    logged = {(r["doc_id"], r["chunk_index"]): r["changes"] for r in log}

    sink = SinkStage(InMemoryPendingChunks())
    emitted = [e for result in sink.process([(None, c) for c in released]) for e in result]
    assert sorted(e.value["doc_id"] for e in emitted) == sorted(f"doc{d}" for d in range(len(documents)))
    for emit in emitted:
        doc = emit.value
        assert emit.topic is topics.SANITIZED
        contracts.validate(topics.SANITIZED.schema, doc)
        text, flags = "", []
        for i in range(doc["chunk_count"]):
            original, pii_text, pii_replacements = reference[(doc["doc_id"], i)]
            after_pii, pii_flags = _forward(original, [False] * len(original), pii_replacements)
            assert after_pii == pii_text
            released_text = next(c.text for c in released if (c.doc_id, c.chunk_index) == (doc["doc_id"], i))
            after_swap, chunk_flags = _forward(pii_text, pii_flags,
                                               _swap_replacements(released_text, logged[(doc["doc_id"], i)]))
            assert after_swap == released_text
            text += after_swap
            flags += chunk_flags
        assert doc["text"] == text
        changes = doc["changes"]
        assert changed_characters(len(doc["text"]), changes) == flags  # covered = changed, nothing more
        assert all(a["end"] <= b["start"] for a, b in zip(changes, changes[1:]))  # one change per span
        for change in changes:
            assert change["operator"] in OPERATORS and change["release_version"] == release.version
            assert change["entity_type"] is not None and change["identifier_type"] in ("DIRECT", "QUASI")
        marked = highlight(doc["text"], changes)
        assert marked.replace("⟦", "").replace("⟧", "") == doc["text"]
        assert marked.count("⟦") == len(changes)
