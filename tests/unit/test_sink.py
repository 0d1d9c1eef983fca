"""Reassembly: chunk order, completeness, and forgetting a document only after its produce."""
import base64

import orjson

from anonstream import topics
from anonstream.records import Chunk
from anonstream.stages.sink import SinkStage
from anonstream.stores.base import InMemoryPendingChunks

TEXT = ["PROCEDURE\n\n", "The case began. ", "It ended.\n"]


def _chunks(doc_id="d1"):
    return [Chunk(doc_id, i, len(TEXT), t, 0, 1, {"m": doc_id}, entities=[], cluster=None, changes=[],
                  lineage={"ingest": "1", "swap": "0"}) for i, t in enumerate(TEXT)]


def test_document_is_emitted_once_complete_in_chunk_order_whatever_the_arrival_order():
    sink = SinkStage(InMemoryPendingChunks())
    c0, c1, c2 = _chunks()
    results = sink.process([(None, c2), (None, c0)])
    assert results == [[], []]
    (emit,), = sink.process([(None, c1)])
    assert emit.topic is topics.SANITIZED
    assert emit.value["text"] == "".join(TEXT)
    assert emit.value["metadata"] == {"m": "d1"} and emit.value["chunk_count"] == 3


def test_redelivered_chunks_do_not_duplicate_and_nothing_is_forgotten_before_the_ack():
    pending = InMemoryPendingChunks()
    sink = SinkStage(pending)
    c0, c1, c2 = _chunks()
    sink.process([(None, c0), (None, c0), (None, c1)])  # c0 delivered twice
    (emit,), = sink.process([(None, c2)])
    # not acknowledged yet: re-deliveries inside this process do not emit it again
    assert sink.process([(None, c0), (None, c1), (None, c2)]) == [[], [], []]
    # the process crashed before the acknowledgement: a new sink on the same state emits it once
    sink = SinkStage(pending)
    results = sink.process([(None, c0), (None, c1), (None, c2)])
    (again,) = [e for r in results for e in r]
    assert again.key == emit.key
    sink.after_produced([again])
    # after the acknowledged produce, late duplicates are ignored
    assert sink.process([(None, c1), (None, c2)]) == [[], []]
    assert pending.take("d1") == []


def test_an_incomplete_document_is_dead_lettered_after_the_bounded_wait_not_dropped():
    now = [1000.0]
    pending = InMemoryPendingChunks()
    sink = SinkStage(pending, max_wait_s=60, clock=lambda: now[0])
    c0, _, c2 = _chunks()
    sink.process([(None, c0), (None, c2)])
    assert sink.tick(1059.0) == []
    (dead,) = sink.tick(1061.0)
    assert dead.topic is topics.DEAD_LETTER
    assert dead.value["error_class"] == "IncompleteDocument" and dead.value["error_message"].startswith("2 of 3")
    held = orjson.loads(base64.b64decode(dead.value["original_b64"]))
    assert [c["chunk_index"] for c in held] == [0, 2]
    sink.after_produced([dead])
    assert sink.tick(2000.0) == [] and pending.take("d1") == []


def test_end_of_input_dead_letters_every_incomplete_document():
    sink = SinkStage(InMemoryPendingChunks(), max_wait_s=3600)
    c0, c1, _ = _chunks()
    sink.process([(None, c0), (None, c1)])
    (dead,) = sink.drain()
    assert dead.value["error_class"] == "IncompleteDocument" and dead.value["error_message"].startswith("2 of 3")


def test_the_document_carries_the_changes_of_its_chunks_at_document_offsets():
    from anonstream import contracts
    from anonstream.records import EntitySpan

    c0, c1, c2 = _chunks()
    c1.entities = [EntitySpan(4, 8, "PERSON", "DIRECT", "p1", "[P1]", surrogate="[P1]")]
    c2.changes = [{"start": 3, "end": 8, "category": "Event", "operator": "generalize", "new": "ended"}]
    sink = SinkStage(InMemoryPendingChunks())
    (emit,), = [r for r in sink.process([(None, c0), (None, c1), (None, c2)]) if r]
    value = emit.value
    contracts.validate(topics.SANITIZED.schema, value)
    assert [(c["start"], c["end"], c["operator"]) for c in value["changes"]] == [
        (len(TEXT[0]) + 4, len(TEXT[0]) + 8, "pseudonym"), (len(TEXT[0]) + len(TEXT[1]) + 3,
                                                             len(TEXT[0]) + len(TEXT[1]) + 8, "generalize")]
    assert value["lineage"]["sink"] == SinkStage.version
