"""The pii stage waits for a whole document, then masks it with one entity registry."""
import pytest

from anonstream import topics
from anonstream.pii.engine import InMemoryPseudonymStore, PiiEngine
from anonstream.records import Chunk
from anonstream.stages.pii import PiiStage
from anonstream.stores.base import InMemoryDocumentState

TEXTS = ["The applicant, Mr Cengiz Polat, was born in 1960. ", "He lives in Ankara.\n\n",
         "Mr Polat wrote to john.doe@example.org on 3 May 2001."]


@pytest.fixture(scope="module")
def engine():
    return PiiEngine.from_config()


def _chunks(doc_id="d1"):
    return [Chunk(doc_id, i, len(TEXTS), t, 0, 1, {}, lineage={"ingest": "1"}) for i, t in enumerate(TEXTS)]


def test_waits_for_every_chunk_then_masks_the_document_consistently(engine):
    states = InMemoryDocumentState()
    stage = PiiStage(engine, InMemoryPseudonymStore(), states)
    c0, c1, c2 = _chunks()
    assert stage.process([(None, c2), (None, c0)]) == [[], []]
    assert set(states.get("d1")["chunks"]) == {"0", "2"}  # persisted before the offsets are committed
    (emits,) = stage.process([(None, c1)])
    assert [e.value["chunk_index"] for e in emits] == [0, 1, 2]
    assert all(e.topic is topics.CHUNKS_PII for e in emits)
    first, last = emits[0].value, emits[2].value
    assert "Polat" not in first["text"] and "Polat" not in last["text"]
    assert "john.doe@example.org" not in last["text"]
    polat = {e["entity_id"] for v in (first, last) for e in v["entities"] if e["type"] == "PERSON"}
    assert len(polat) == 1, "the two mentions of Polat are one entity"
    assert states.get("d1") is not None  # kept until the outputs are acknowledged
    stage.after_produced(emits)
    assert states.get("d1") is None


def test_a_redelivered_chunk_in_the_same_batch_does_not_emit_the_document_twice(engine):
    stage = PiiStage(engine, InMemoryPseudonymStore(), InMemoryDocumentState())
    c0, c1, c2 = _chunks("d2")
    results = stage.process([(None, c0), (None, c1), (None, c2), (None, c2), (None, c0)])
    assert [len(r) for r in results] == [0, 0, 3, 0, 0]


def test_places_and_organisations_leave_the_stage_with_their_country(engine):
    """The swap stage exchanges a place or an organisation only within its country (pii/kinds.py)."""
    stage = PiiStage(engine, InMemoryPseudonymStore(), InMemoryDocumentState())
    texts = ["The applicant is a Turkish national who lives in Ankara. ",
             "She studied at İnönü University in Malatya and later in Kraków."]
    chunks = [Chunk("d3", i, len(texts), t, 0, 1, {}, lineage={"ingest": "1"}) for i, t in enumerate(texts)]
    (emits,) = stage.process([(None, c) for c in chunks])[-1:]
    countries = {e["text"]: e["country"] for emit in emits for e in emit.value["entities"]}
    assert countries["Ankara"] == "TR" and countries["Kraków"] == "PL"  # a city's own country
    assert countries["İnönü University"] == "TR"  # the document's (DocumentEntities.dominant_country)
