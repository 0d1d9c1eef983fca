"""PiiEngine contract: detect/process, offsets into the new text, consistent placeholders, state."""
from __future__ import annotations

import json

import pytest

from anonstream.pii.engine import DocumentEntities, InMemoryPseudonymStore, PiiEngine

TEXT = (
    "Mr Cengiz Polat, born in 1960 in Ankara, wrote to jane.doe@example.org and called "
    "+90 312 555 1234. Later Polat visited https://example.org/x."
)


@pytest.fixture(scope="module")
def engine() -> PiiEngine:
    return PiiEngine.from_config()  # spaCy pipeline is cached per process


def test_process_replaces_person_and_contact_hits(engine):
    ents = DocumentEntities("d1")
    new, spans = engine.process(TEXT, ents, InMemoryPseudonymStore())
    for raw in ("Cengiz", "Polat", "jane.doe@example.org", "555 1234", "example.org/x"):
        assert raw not in new
    assert "Ankara" in new  # QUASI LOC left for the swap stage
    for s in spans:
        assert new[s.start : s.end] == (s.surrogate if s.surrogate is not None else s.text)
    persons = [s for s in spans if s.type == "PERSON"]
    assert len(persons) == 2 and len({s.entity_id for s in persons}) == 1
    assert persons[0].surrogate == persons[1].surrogate == "[PERSON_1]"
    ankara = next(s for s in spans if s.text == "Ankara")
    assert ankara.surrogate is None and ankara.identifier_type == "QUASI" and ankara.subtype == "GPE"


def test_state_roundtrip_keeps_grouping_across_chunks(engine):
    ents = DocumentEntities("d2")
    store = InMemoryPseudonymStore()
    _, first = engine.process("The applicant, Mr Cengiz Polat, was arrested.", ents, store)
    restored = DocumentEntities.from_state(json.loads(json.dumps(ents.to_state())))
    _, second = engine.process("Later Polat was released.", restored, store)
    p1 = next(s for s in first if s.type == "PERSON")
    p2 = next(s for s in second if s.type == "PERSON")
    assert p1.entity_id == p2.entity_id and p1.surrogate == p2.surrogate


def test_pseudonyms_consistent_across_documents():
    store = InMemoryPseudonymStore()
    a = store.surrogate_for("t", "PERSON:polat", "PERSON")
    b = store.surrogate_for("t", "PERSON:smith", "PERSON")
    assert a != b and store.surrogate_for("t", "PERSON:polat", "PERSON") == a
    assert store.surrogate_for("other", "PERSON:smith", "PERSON") == "[PERSON_1]"
