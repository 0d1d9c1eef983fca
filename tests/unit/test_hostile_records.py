"""Two hostile records that stopped the ingest service (found by tests/chaos/): a 10 MB record, whose dead letter
was larger than the producer's limit, and a document nested deeper than orjson writes (read fine, validated
fine, then the produce raised)."""
import base64
import hashlib

import orjson

from anonstream import contracts, serde
from anonstream.runtime.kafka import MAX_MESSAGE_BYTES
from anonstream.stages.base import DEAD_LETTER_MAX_ORIGINAL, InputMessage, StageDriver
from anonstream.stages.ingest import IngestStage


def _handle(value: bytes):
    return StageDriver(IngestStage(), "t").handle([InputMessage("t.documents.v1", 0, 7, b"k", value)])


def test_a_ten_megabyte_record_becomes_a_dead_letter_the_producer_accepts():
    original = orjson.dumps({"doc_id": "huge", "text": "word " * (2 << 20)})
    handled = _handle(original)
    (dead,) = handled.dead_letters
    contracts.validate("dead-letter.v1.json", dead.value)
    assert len(serde.dumps(dead.value)) < MAX_MESSAGE_BYTES
    assert base64.b64decode(dead.value["original_b64"]) == original[:DEAD_LETTER_MAX_ORIGINAL]
    assert dead.value["original_size"] == len(original)
    assert dead.value["original_sha256"] == hashlib.sha256(original).hexdigest()


def test_a_small_record_keeps_all_its_bytes_and_no_size_fields():
    (dead,) = _handle(b"{not json").dead_letters
    assert base64.b64decode(dead.value["original_b64"]) == b"{not json"
    assert "original_size" not in dead.value


def test_a_document_nested_deeper_than_orjson_writes_is_a_dead_letter():
    raw = b'{"doc_id":"deep","text":"A sentence.","metadata":' + b'{"a":' * 600 + b"1" + b"}" * 601
    handled = _handle(raw)
    assert not handled.emits
    (dead,) = handled.dead_letters
    assert dead.value["error_class"] == "RecordInvalid" and "nested deeper" in dead.value["error_message"]


def test_ordinary_nesting_passes():
    doc = {"doc_id": "d", "text": "A sentence.", "metadata": {"a": {"b": [{"c": 1}]}}}
    handled = _handle(orjson.dumps(doc))
    assert handled.emits and not handled.dead_letters
    serde.dumps([e.value for e in handled.emits])
