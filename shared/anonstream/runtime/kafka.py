"""Kafka plumbing for the services: clients, topic creation, partitioning by document.

Every client gets its connection security from ``security_options`` (TLS and SASL/SCRAM from the
environment, see config.py); the SASL password is read from ANONSTREAM_KAFKA_SASL_PASSWORD only.
"""
from __future__ import annotations

import logging
import os

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.helpers import create_ssl_context
from aiokafka.partitioner import DefaultPartitioner

from .. import topics
from ..config import Settings

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # documents up to the schema's 2M characters fit
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")


def security_options(settings: Settings) -> dict[str, object]:
    """aiokafka's connection-security arguments: a TLS context that verifies the brokers against
    ANONSTREAM_KAFKA_SSL_CAFILE (or the system CAs) and their host names, and the SASL user and
    password. A ``ValueError`` names what is missing or wrong (never the password)."""
    protocol = settings.kafka_security_protocol.upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise ValueError(f"ANONSTREAM_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol!r}: "
                         f"one of {', '.join(SECURITY_PROTOCOLS)}")
    options: dict[str, object] = {"security_protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        options["ssl_context"] = create_ssl_context(cafile=settings.kafka_ssl_cafile)
    if protocol.startswith("SASL_"):
        mechanism = settings.kafka_sasl_mechanism.upper()
        if mechanism not in SASL_MECHANISMS:
            raise ValueError(f"ANONSTREAM_KAFKA_SASL_MECHANISM={settings.kafka_sasl_mechanism!r}: "
                             f"one of {', '.join(SASL_MECHANISMS)}")
        password = os.environ.get("ANONSTREAM_KAFKA_SASL_PASSWORD")
        if not settings.kafka_sasl_username or not password:
            raise ValueError(f"{protocol} needs ANONSTREAM_KAFKA_SASL_USERNAME and ANONSTREAM_KAFKA_SASL_PASSWORD")
        options.update(sasl_mechanism=mechanism, sasl_plain_username=settings.kafka_sasl_username,
                       sasl_plain_password=password)
    return options


def producer(settings: Settings, **overrides) -> AIOKafkaProducer:
    """acks=all + idempotence: a retried send is written once per partition."""
    options = dict(bootstrap_servers=settings.bootstrap, acks="all", enable_idempotence=True,
                   linger_ms=5, max_request_size=MAX_MESSAGE_BYTES, compression_type="gzip",
                   **security_options(settings))
    options.update(overrides)
    return AIOKafkaProducer(**options)


def consumer(settings: Settings, topic_names: list[str], group_id: str, **overrides) -> AIOKafkaConsumer:
    """Manual commits only: the service commits after its produces are acknowledged. ``read_committed``: records of
    aborted transactions are never read, and those of open ones only once committed (non-transactional records
    at once)."""
    options = dict(bootstrap_servers=settings.bootstrap, group_id=group_id, enable_auto_commit=False,
                   isolation_level="read_committed",
                   auto_offset_reset="earliest", max_partition_fetch_bytes=MAX_MESSAGE_BYTES,
                   fetch_max_bytes=4 * MAX_MESSAGE_BYTES, session_timeout_ms=30000,
                   heartbeat_interval_ms=3000, max_poll_interval_ms=600000, **security_options(settings))
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
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap, **security_options(settings))
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
