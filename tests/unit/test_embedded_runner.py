"""The embedded runner (runtime/embedded.py): embed on a worker thread, one batch in flight; records between stages validated once."""
import threading

import numpy as np
import orjson
import pytest

from anonstream import topics
from anonstream.runtime.embedded import EmbeddedPipeline
from anonstream.stages.base import Stage
from anonstream.stages.embed import EmbedStage
from anonstream.stages.ingest import IngestStage, chunk_emit


class PassPii(Stage):
    """chunks -> chunks.pii unchanged; sets ``started`` when it sees a document of ``signal_doc``."""

    name, version, inputs = "pii", "1", (topics.CHUNKS,)

    def __init__(self, signal_doc: str):
        self.signal_doc, self.started = signal_doc, threading.Event()

    def decode(self, topic, obj):
        from anonstream.records import Chunk

        return Chunk.from_wire(obj)

    def process(self, items):
        if any(chunk.doc_id == self.signal_doc for _, chunk in items):
            self.started.set()
        for _, chunk in items:
            chunk.entities = []
        return [[chunk_emit(topics.CHUNKS_PII, chunk)] for _, chunk in items]


class WaitingEmbedder:
    """Vectors from the text's bytes; the call on ``first_doc``'s batch waits (up to 5 s) for ``event``."""

    model_name, dim = "fake", 8

    def __init__(self, event: threading.Event | None = None, first_doc: str = "d0"):
        self.event, self.first_doc = event, first_doc
        self.threads: set[str] = set()
        self.overlapped: list[bool] = []

    def encode(self, texts):
        self.threads.add(threading.current_thread().name)
        if self.event is not None and any(self.first_doc in t for t in texts):
            self.overlapped.append(self.event.wait(5.0))
        raw = np.array([[(sum(t.encode()) * (j + 1)) % 97 + 1 for j in range(self.dim)] for t in texts], float)
        return (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)


class Collect(Stage):
    name, version, inputs = "sink", "1", (topics.CHUNKS_EMBEDDED,)

    def __init__(self):
        self.seen: list[tuple[str, int, tuple]] = []

    def process(self, items):
        self.seen += [(c["doc_id"], c["chunk_index"], tuple(c["embedding"]["vector"])) for _, c in items]
        return [[] for _ in items]


def batches():
    docs = [{"doc_id": f"d{i}", "text": f"Sentence d{i} one. Sentence d{i} two has more words.", "metadata": {}}
            for i in range(6)]
    return [[(d["doc_id"], orjson.dumps(d)) for d in docs[i:i + 2]] for i in range(0, 6, 2)]


def run(background, embedder, pii):
    sink = Collect()
    pipeline = EmbeddedPipeline([IngestStage(), pii, EmbedStage(embedder), sink], "t", background=background)
    seen_after_batches = []
    for batch in batches():
        pipeline.run_batch(batch)
        seen_after_batches.append(len(sink.seen))
    pipeline.finish()
    pipeline.close()
    return sink.seen, seen_after_batches


def test_background_embed_gives_the_same_records_in_the_same_order():
    inline, counts_inline = run(None, WaitingEmbedder(), PassPii("-"))
    embedder = WaitingEmbedder()
    overlapped, counts = run("embed", embedder, PassPii("-"))
    assert overlapped == inline and len(inline) == 6
    assert embedder.threads and threading.main_thread().name not in embedder.threads
    # one batch in flight: the sink sees a batch's chunks only once the next batch reached embed
    assert counts_inline == [2, 4, 6] and counts == [0, 2, 4]


def test_embed_of_one_batch_runs_while_pii_works_on_the_next():
    pii = PassPii("d2")  # the second batch (d2, d3)
    embedder = WaitingEmbedder(pii.started, first_doc="d0")
    seen, _ = run("embed", embedder, pii)
    assert embedder.overlapped == [True] and len(seen) == 6


def test_an_unknown_background_stage_is_refused():
    with pytest.raises(ValueError):
        EmbeddedPipeline([IngestStage()], "t", background="embed")


def test_records_between_stages_are_validated_once_and_inputs_always():
    """Messages the pipeline's own drivers emitted (validated on the way out) skip the consumer's schema walk;
    input documents, dead letters and records replayed from elsewhere (run_records) do not."""
    from anonstream import contracts
    from anonstream.stages.base import Emit

    seen: list[tuple[str, bool]] = []

    class Spy(Stage):
        name, version, inputs = "spy", "1", (topics.CHUNKS, topics.DEAD_LETTER)

        def process(self, items):
            return [[] for _ in items]

    pipeline = EmbeddedPipeline([IngestStage(), Spy()], "t")
    handle = pipeline.drivers[1].handle
    pipeline.drivers[1].handle = lambda messages: (seen.extend((m.topic, m.validated) for m in messages),
                                                   handle(messages))[1]
    pipeline.run_batch([("k", orjson.dumps({"doc_id": "d", "text": "One. Two.", "metadata": {}})), ("bad", b"{")])
    assert sorted(seen) == [("t.chunks.v1", True), ("t.dead-letter.v1", False)]
    # a validated message is not walked again; the same bytes unvalidated are, and fail
    chunk = {"doc_id": "d", "chunk_index": -1}
    replayed = pipeline.run_records([Emit(topics.CHUNKS, "d|0", "d", chunk)])
    assert [e.value["error_class"] for e in replayed if e.topic is topics.DEAD_LETTER] == ["RecordInvalid"]
    assert seen[2:] == [("t.chunks.v1", False), ("t.dead-letter.v1", False)]
    with pytest.raises(contracts.RecordInvalid):
        contracts.validate(topics.CHUNKS.schema, chunk)


def test_blas_limit_sets_and_restores_the_blas_threads():
    from threadpoolctl import threadpool_info

    from anonstream.runtime.wiring import blas_limit

    def blas_threads():
        return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}

    import numpy  # noqa: F401 - loads OpenBLAS

    before = blas_threads()
    assert blas_limit(0) is None and blas_threads() == before
    handle = blas_limit(1)
    try:
        assert blas_threads() == {1}
    finally:
        handle.restore_original_limits()
    assert blas_threads() == before
