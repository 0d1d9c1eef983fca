"""The walking pipeline on the real broker and Redis: every stage as its own process.

50 real TAB documents and 5 malformed records go in; 50 sanitized documents must come out (with
named-entity swapping on), each exactly once and in chunk order, the 5 malformed records must be dead letters with reasons, and no
PERSON name or e-mail address the detector finds in an input document may survive in its output.
"""
from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.pii.engine import DocumentEntities, PiiEngine
from anonstream.runtime import launch
from anonstream.runtime.kafka import create_topics
from anonstream.runtime.wiring import STAGE_NAMES
from anonstream.stages.ingest import IngestStage

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"
N_DOCS = 50
MALFORMED = [
    b"this is not json",
    b'["a", "list", "not", "an", "object"]',
    orjson.dumps({"doc_id": "no-text"}),
    orjson.dumps({"doc_id": "", "text": "An empty id is not an id."}),
    orjson.dumps({"doc_id": "wrong-type", "text": 42, "metadata": {}}),
]


@pytest.fixture(scope="module")
def documents() -> list[dict]:
    with SAMPLE.open("rb") as handle:
        return [orjson.loads(line) for line in list(handle)[:N_DOCS]]


@pytest.fixture(scope="module")
def service_env(kafka_bootstrap: str, redis_url: str) -> dict[str, str]:
    return launch.service_env(kafka_bootstrap, redis_url, "it", {"ANONSTREAM_REFIT_INTERVAL_S": "5"})


@pytest.fixture(scope="module")
def services(service_env: dict[str, str], tmp_path_factory):
    settings = _settings(service_env)
    asyncio.run(create_topics(settings))
    logs = tmp_path_factory.mktemp("service-logs")
    processes = {name: (launch.start_service(name, service_env, logs / f"{name}.log"), logs / f"{name}.log")
                 for name in STAGE_NAMES}
    yield processes
    launch.stop_services(process for process, _ in processes.values())


def _settings(env: dict[str, str]) -> Settings:
    return Settings(bootstrap=env["ANONSTREAM_BOOTSTRAP"], topic_prefix=env["ANONSTREAM_TOPIC_PREFIX"])


async def _produce(settings: Settings, documents: list[dict]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        name = topics.name(topics.DOCUMENTS, settings.topic_prefix)
        for doc in documents:
            await producer.send_and_wait(name, orjson.dumps(doc), key=doc["doc_id"].encode())
        for i, raw in enumerate(MALFORMED):
            await producer.send_and_wait(name, raw, key=f"malformed-{i}".encode())
    finally:
        await producer.stop()


async def _collect(settings: Settings, want_docs: int, want_dead: int, services, timeout_s: float):
    """Read sanitized documents and dead letters until both counts are reached (then a few
    seconds more, to see any duplicate), or until the time limit."""
    sanitized = topics.name(topics.SANITIZED, settings.topic_prefix)
    dead = topics.name(topics.DEAD_LETTER, settings.topic_prefix)
    chunks = topics.name(topics.CHUNKS_SANITIZED, settings.topic_prefix)
    consumer = AIOKafkaConsumer(sanitized, dead, chunks, bootstrap_servers=settings.bootstrap,
                                group_id=f"{settings.topic_prefix}.test-reader", auto_offset_reset="earliest",
                                isolation_level="read_committed")
    await consumer.start()
    docs, dead_letters, sanitized_chunks = [], [], []
    deadline = time.monotonic() + timeout_s
    settle_until = None
    try:
        while time.monotonic() < (settle_until or deadline):
            for name, (process, log_path) in services.items():
                assert process.poll() is None, f"service {name} died:\n{log_path.read_text()[-3000:]}"
            batches = await consumer.getmany(timeout_ms=1000)
            for records in batches.values():
                for record in records:
                    value = orjson.loads(record.value)
                    {sanitized: docs, dead: dead_letters, chunks: sanitized_chunks}[record.topic].append(value)
            if settle_until is None and len({d["doc_id"] for d in docs}) >= want_docs and len(dead_letters) >= want_dead:
                settle_until = time.monotonic() + 5
    finally:
        await consumer.stop()
    return docs, dead_letters, sanitized_chunks


def _detected_identifiers(documents: list[dict]) -> dict[str, set[str]]:
    """PERSON names and e-mail addresses our detector finds in each input document's chunks and decides to mask
    (a NO_MASK person is one the policy leaves in clear on purpose: a party in a cited judgment's title)."""
    engine = PiiEngine.from_config()
    ingest = IngestStage()
    from anonstream.records import Document

    found: dict[str, set[str]] = {}
    for doc in documents:
        registry = DocumentEntities(doc["doc_id"])
        strings = set()
        for chunk in ingest.chunks(Document.from_wire(doc)):
            for span in engine.detect(chunk.text, registry):
                is_email = "@" in span.text
                if span.type == "PERSON" and span.identifier_type != "NO_MASK" or is_email:
                    strings.add(chunk.text[span.start:span.end])
        found[doc["doc_id"]] = strings
    return found


def _without_swapped_in(chunk: dict) -> str:
    """The chunk's sanitized text with every swapped-in value blanked out (change offsets are
    offsets into the sanitized text)."""
    text = chunk["text"]
    for change in chunk["changes"]:
        if change["operator"] == "swap":
            text = text[:change["start"]] + "#" * (change["end"] - change["start"]) + text[change["end"]:]
    return text


def test_fifty_documents_through_every_service(services, service_env, documents):
    settings = _settings(service_env)
    asyncio.run(_produce(settings, documents))
    docs, dead_letters, chunks = asyncio.run(_collect(settings, N_DOCS, len(MALFORMED), services, timeout_s=420))

    by_id: dict[str, list[dict]] = {}
    for doc in docs:
        by_id.setdefault(doc["doc_id"], []).append(doc)
    assert sorted(by_id) == sorted(d["doc_id"] for d in documents)
    duplicates = {k: len(v) for k, v in by_id.items() if len(v) > 1}
    assert not duplicates, f"documents emitted more than once: {duplicates}"

    originals = {d["doc_id"]: d for d in documents}
    chunk_texts: dict[str, dict[int, str]] = {}
    for chunk in chunks:
        chunk_texts.setdefault(chunk["doc_id"], {})[chunk["chunk_index"]] = chunk["text"]
    swapped = 0
    for doc_id, (doc,) in by_id.items():
        original = originals[doc_id]["text"]
        assert doc["metadata"] == originals[doc_id]["metadata"]
        assert doc["release"]["schema"] == "release.v1"
        # chunk order: the document is its sanitized chunks, concatenated by chunk index
        parts = chunk_texts[doc_id]
        assert sorted(parts) == list(range(doc["chunk_count"]))
        assert doc["text"] == "".join(parts[i] for i in range(doc["chunk_count"]))
        # layout: the same lines, blank where the original's are blank
        assert [bool(line.strip()) for line in doc["text"].split("\n")] == \
               [bool(line.strip()) for line in original.split("\n")]
        swapped += sum(1 for c in chunks if c["doc_id"] == doc_id and any(x["operator"] == "swap" for x in c["changes"]))
    assert swapped > 0, "swapping is on: some chunks must have been swapped"

    ingest_dead = [d for d in dead_letters if d["stage"] == "ingest"]
    assert len(ingest_dead) == len(MALFORMED), dead_letters
    assert all(d["error_class"] and d["error_message"] for d in ingest_dead)
    import base64

    assert sorted(base64.b64decode(d["original_b64"]) for d in ingest_dead) == sorted(MALFORMED)
    assert not [d for d in dead_letters if d["stage"] != "ingest"], "a valid record was dead-lettered"

    # Values swapped in come from other documents (a co-accused "A" here, "BG Bank A/S" there): the
    # leak check reads only the text that came from the document itself.
    own_parts: dict[str, dict[int, str]] = {}
    for chunk in chunks:
        own_parts.setdefault(chunk["doc_id"], {})[chunk["chunk_index"]] = _without_swapped_in(chunk)
    leaks = {}
    for doc_id, strings in _detected_identifiers(documents).items():
        parts = own_parts[doc_id]
        text = "".join(parts[i] for i in sorted(parts))
        leaked = {s for s in strings if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text)}
        if leaked:
            leaks[doc_id] = len(leaked)
    assert not leaks, f"detected PERSON/e-mail strings left in the output (counts per document): {leaks}"
