"""Kafka plumbing for the services: clients, topic creation, partitioning by document."""
from __future__ import annotations

import logging

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.partitioner import DefaultPartitioner

from .. import topics
from ..config import Settings

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # documents up to the schema's 2M characters fit


def producer(settings: Settings, **overrides) -> AIOKafkaProducer:
    """acks=all + idempotence: a retried send is written once per partition."""
    options = dict(bootstrap_servers=settings.bootstrap, acks="all", enable_idempotence=True,
                   linger_ms=5, max_request_size=MAX_MESSAGE_BYTES, compression_type="gzip")
    options.update(overrides)
    return AIOKafkaProducer(**options)


def consumer(settings: Settings, topic_names: list[str], group_id: str, **overrides) -> AIOKafkaConsumer:
    """Manual commits only: the service commits after its produces are acknowledged."""
    options = dict(bootstrap_servers=settings.bootstrap, group_id=group_id, enable_auto_commit=False,
                   auto_offset_reset="earliest", max_partition_fetch_bytes=MAX_MESSAGE_BYTES,
                   fetch_max_bytes=4 * MAX_MESSAGE_BYTES, session_timeout_ms=30000,
                   heartbeat_interval_ms=3000, max_poll_interval_ms=600000)
    options.update(overrides)
    return AIOKafkaConsumer(*topic_names, **options)


class DocumentPartitioner:
    """Picks the partition from the document id (Kafka's murmur2 default partitioner), so every
    record of a document lands on one partition, in order, whatever its record key."""

    def __init__(self) -> None:
        self._default = DefaultPartitioner()

    def __call__(self, partition_key: str, partitions: list[int]) -> int:
        return self._default(partition_key.encode(), partitions, partitions)


async def create_topics(settings: Settings) -> list[str]:
    """Create every pipeline topic that does not exist yet (``anonstream topics create``)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [topics.name(t, settings.topic_prefix) for t in topics.ALL]
        new = [NewTopic(name, num_partitions=settings.partitions, replication_factor=settings.replication,
                        topic_configs={"max.message.bytes": str(MAX_MESSAGE_BYTES)})
               for name in wanted if name not in existing]
        if new:
            try:
                await admin.create_topics(new)
            except TopicAlreadyExistsError:
                pass
        log.info("topics: %d created, %d already there", len(new), len(wanted) - len(new))
        return [t.name for t in new]
    finally:
        await admin.close()
