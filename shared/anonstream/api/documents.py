"""``/v1/documents``: submit a document to the input topic, read its sanitized version back.

The sink writes sanitized documents to ``<prefix>.sanitized.v1`` only (stages/sink.py); it keeps no copy.
So the API server indexes that topic itself: a background consumer (group ``<prefix>.api``,
``read_committed``, so only the sink's committed transactions) stores each sanitized document in Redis
under ``anonstream:{tenant}:api-results:{doc_id}`` (``ANONSTREAM_API_RESULT_TTL_S``) and commits its
offsets after the write; ``GET /v1/documents/{id}`` reads that key. Several API replicas share the group
and the keys. A document re-emitted by the sink (same doc_id) overwrites the stored one.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import Any, Iterable, Protocol

from .. import contracts, serde, topics
from ..config import Settings
from ..stores.base import DocumentStateStore, StoreUnavailable

log = logging.getLogger(__name__)

RESULTS_AREA = "api-results"


class BrokerUnavailable(RuntimeError):
    """The broker did not acknowledge the document (the client may retry)."""


class DocumentsBackend(Protocol):
    async def submit(self, document: dict[str, Any]) -> None: ...

    async def result(self, doc_id: str) -> dict[str, Any] | None: ...


def prepare_document(body: dict[str, Any]) -> dict[str, Any]:
    """The record for the input topic: ``doc_id`` generated when absent, then validated against
    ``document.v1.json`` (``contracts.RecordInvalid`` names the rule, not the value)."""
    document = {"doc_id": body.get("doc_id") or uuid.uuid4().hex, "text": body.get("text"),
                "metadata": body.get("metadata") or {}}
    contracts.validate(topics.DOCUMENTS.schema, document)
    return document


def index_sanitized(store: DocumentStateStore, values: Iterable[bytes]) -> int:
    """Store each valid sanitized document under its doc_id; returns how many were stored. A record that
    is not a sanitized document is skipped (counted in the log, never printed)."""
    stored = skipped = 0
    for value in values:
        try:
            document = serde.loads(value)
            contracts.validate(topics.SANITIZED.schema, document)
        except (ValueError, contracts.RecordInvalid):
            skipped += 1
            continue
        store.put(document["doc_id"], document)
        stored += 1
    if skipped:
        log.warning("api indexer: %d records on the sanitized topic are not sanitized documents; skipped", skipped)
    return stored


class KafkaDocuments:
    """The service's backend: aiokafka producer (acks=all, idempotent) to the input topic, and the
    indexer of the sanitized topic into Redis."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._producer = None
        self._consumer = None
        self._store: DocumentStateStore | None = None
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        from aiokafka.errors import KafkaConnectionError

        from ..runtime.kafka import consumer, producer
        from ..stores.redis_state import RedisDocumentState, connect_settings

        s = self.settings
        self._store = RedisDocumentState(connect_settings(s), s.tenant, RESULTS_AREA, s.api_result_ttl_s)
        self._producer = producer(s)
        try:
            await self._producer.start()
        except KafkaConnectionError:
            raise RuntimeError(f"Kafka is not reachable at {s.bootstrap} (ANONSTREAM_BOOTSTRAP); start it (make up) "
                               "or serve /analyze and /anonymize only with --no-documents") from None
        self._consumer = consumer(s, [topics.name(topics.SANITIZED, s.topic_prefix)], f"{s.topic_prefix}.api",
                                  isolation_level="read_committed")
        await self._consumer.start()
        self._task = asyncio.create_task(self._index())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for client in (self._consumer, self._producer):
            if client is not None:
                await client.stop()

    async def _index(self) -> None:
        while True:
            batch = await self._consumer.getmany(timeout_ms=1000, max_records=500)
            if not batch:
                continue
            values = [record.value for records in batch.values() for record in records]
            try:
                await asyncio.to_thread(index_sanitized, self._store, values)
            except StoreUnavailable as exc:  # read the batch again once Redis is back; nothing committed
                log.warning("api indexer: %s; retrying in 1 s", exc)
                for tp, records in batch.items():
                    self._consumer.seek(tp, records[0].offset)
                await asyncio.sleep(1.0)
                continue
            await self._consumer.commit()

    async def submit(self, document: dict[str, Any]) -> None:
        from aiokafka.errors import KafkaError

        try:
            await self._producer.send_and_wait(topics.name(topics.DOCUMENTS, self.settings.topic_prefix),
                                               serde.dumps(document), key=document["doc_id"].encode())
        except KafkaError as exc:
            raise BrokerUnavailable(type(exc).__name__) from exc

    async def result(self, doc_id: str) -> dict[str, Any] | None:
        return await asyncio.to_thread(self._store.get, doc_id)
