"""The driver every shell uses: validation, dead letters, isolation of a record that breaks a batch."""
import base64

import orjson

from anonstream import topics
from anonstream.stages.base import Emit, InputMessage, Stage, StageDriver
from anonstream.stages.ingest import IngestStage


def _message(value: bytes, offset: int = 0) -> InputMessage:
    return InputMessage("t.documents.v1", 3, offset, b"k", value)


def test_ingest_dead_letters_bad_records_with_reason_and_original_bytes():
    driver = StageDriver(IngestStage(), "t")
    good = orjson.dumps({"doc_id": "d1", "text": "One sentence. Two sentences.", "metadata": {"m": 1}})
    bad = [b"{not json", orjson.dumps({"doc_id": "d2"}), None]
    handled = driver.handle([_message(good, 0)] + [_message(b, i + 1) for i, b in enumerate(bad)])
    assert [e.value["doc_id"] for e in handled.emits] == ["d1"]
    assert handled.emits[0].value["metadata"] == {"m": 1}
    assert len(handled.dead_letters) == 3
    for dead, original in zip(handled.dead_letters, bad):
        value = dead.value
        assert value["stage"] == "ingest" and value["error_class"] == "RecordInvalid"
        assert value["source"] == {"topic": "t.documents.v1", "partition": 3, "offset": value["source"]["offset"],
                                   "key_b64": base64.b64encode(b"k").decode()}
        assert base64.b64decode(value["original_b64"]) == (original or b"")
    assert "required (text)" in handled.dead_letters[1].value["error_message"]


class _Fragile(Stage):
    """Fails the whole batch when it contains the poison record, like a batched model call would."""

    name, version, inputs = "fragile", "1", (topics.DOCUMENTS,)

    def process(self, items):
        if any(item["doc_id"] == "poison" for _, item in items):
            raise RuntimeError("boom")
        return [[Emit(topics.CHUNKS, item["doc_id"], item["doc_id"], {})] for _, item in items]


def test_a_record_that_breaks_the_batch_is_isolated_and_the_rest_still_flows():
    docs = [{"doc_id": d, "text": "x"} for d in ("a", "poison", "b")]
    # _Fragile's outputs are not valid chunks, so the survivors are dead-lettered as invalid output:
    # the point is that "a" and "b" were processed despite the poison record in their batch.
    result = StageDriver(_Fragile(), "t").handle([_message(orjson.dumps(d), i) for i, d in enumerate(docs)])
    classes = {d.value["source"]["offset"]: d.value["error_class"] for d in result.dead_letters}
    assert classes == {0: "RecordInvalid", 1: "RuntimeError", 2: "RecordInvalid"}


def test_driver_reports_the_ingest_time_of_each_accepted_document():
    from anonstream.stages.base import InputMessage, StageDriver
    from anonstream.stages.ingest import IngestStage
    from anonstream import topics

    driver = StageDriver(IngestStage(), "p")
    name = topics.name(topics.DOCUMENTS, "p")
    handled = driver.handle([
        InputMessage(name, 0, 0, b"a", b'{"doc_id": "a", "text": "One. Two.", "metadata": {}}', 1000),
        InputMessage(name, 0, 1, b"b", b'{"doc_id": "b", "text": "Three.", "metadata": {}}', None),
        InputMessage(name, 0, 2, b"c", b"{not json", 3000)])
    assert handled.ingested_at == {"a": 1000}
    assert len(handled.dead_letters) == 1 and {e.partition_key for e in handled.emits} == {"a", "b"}
