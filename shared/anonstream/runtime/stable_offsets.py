"""Committed offsets as they stand once no transaction is pending: OffsetFetch v7 with ``require_stable`` (KIP-447).

A transaction's consumer offsets become the group's committed offsets only when the group coordinator has applied
the transaction's commit marker, which it does after the transaction coordinator has written it (asynchronously).
An OffsetFetch of an older version (aiokafka 0.14 sends v3 at most) answers from what the group coordinator has
applied so far: right after a transaction committed, or after a broker restart while a commit was under way, it may
still return the offset from before that transaction. The new owner of a partition would then seek back and process
the transaction's records a second time, and the stage would write their outputs twice, each copy committed.
With ``require_stable`` the coordinator answers UNSTABLE_OFFSET_COMMIT (error 88) for a partition with pending
offsets instead, and the caller asks again until the answer is stable (Kafka ≥ 2.5; older brokers get the plain
fetch). Kafka's own consumer and franz-go ask for stable offsets for the same reason.
"""
from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Any, Iterable

from aiokafka import TopicPartition
from aiokafka import errors as Errors
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Boolean, CompactArray, CompactString, Int16, Int32, Int64, Schema, TaggedFields

log = logging.getLogger(__name__)

UNSTABLE_OFFSET_COMMIT = 88  # aiokafka 0.14 has no class for it
RETRY_S = 0.1


class OffsetFetchResponse_v7(Response):
    API_KEY = 9
    API_VERSION = 7
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("topics", CompactArray(
            ("name", CompactString("utf-8")),
            ("partitions", CompactArray(
                ("partition_index", Int32), ("committed_offset", Int64), ("committed_leader_epoch", Int32),
                ("metadata", CompactString("utf-8")), ("error_code", Int16), ("tags", TaggedFields))),
            ("tags", TaggedFields))),
        ("error_code", Int16),
        ("tags", TaggedFields),
    )


class OffsetFetchRequest_v7(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 9
    API_VERSION = 7
    RESPONSE_TYPE = OffsetFetchResponse_v7
    SCHEMA = Schema(
        ("group_id", CompactString("utf-8")),
        ("topics", CompactArray(
            ("name", CompactString("utf-8")), ("partition_indexes", CompactArray(Int32)), ("tags", TaggedFields))),
        ("require_stable", Boolean),
        ("tags", TaggedFields),
    )


class StableOffsetFetch(Request[OffsetFetchRequest_v7]):
    API_KEY = 9

    def __init__(self, group_id: str, partitions: Iterable[TopicPartition]):
        by_topic: dict[str, list[int]] = defaultdict(list)
        for tp in partitions:
            by_topic[tp.topic].append(tp.partition)
        self._group_id = group_id
        self._topics = [(topic, sorted(ps), {}) for topic, ps in sorted(by_topic.items())]

    def build(self, request_struct_class: type[OffsetFetchRequest_v7]) -> OffsetFetchRequest_v7:
        return request_struct_class(self._group_id, self._topics, True, {})


def parse_offsets(response: Any) -> tuple[dict[TopicPartition, tuple[int, str]], bool]:
    """The committed (offset, metadata) per partition of a v7 response (partitions never committed left out), and
    whether some partition's offsets were still pending. Raises the error a retry may get past (the coordinator
    moved or is loading) or the one it cannot."""
    top = Errors.for_code(response.error_code)
    if top is not Errors.NoError:
        raise top()
    offsets: dict[TopicPartition, tuple[int, str]] = {}
    pending = False
    for topic, partitions, _ in response.topics:
        for partition, offset, _, metadata, code, _ in partitions:
            if code == UNSTABLE_OFFSET_COMMIT:
                pending = True
                continue
            error = Errors.for_code(code)
            if error is not Errors.NoError:
                raise error()
            if offset >= 0:
                offsets[TopicPartition(topic, partition)] = (offset, metadata or "")
    return offsets, pending


async def fetch_stable_offsets(coordinator: Any, partitions: list[TopicPartition]) -> dict[TopicPartition, tuple[int, str]]:
    """The group's committed offsets and metadata of ``partitions`` (``coordinator``: an aiokafka consumer's group
    coordinator), asked again while a transaction's offsets are pending or the coordinator is moving or loading."""
    if not partitions:
        return {}
    request = StableOffsetFetch(coordinator.group_id, partitions)
    while True:
        await coordinator.ensure_coordinator_known()
        try:
            response = await coordinator._send_req(request)
            offsets, pending = parse_offsets(response)
        except (NotImplementedError, Errors.IncompatibleBrokerVersion):  # a broker before 2.5: the plain fetch
            got = await coordinator.fetch_committed_offsets(partitions)
            return {tp: (om.offset, om.metadata or "") for tp, om in got.items()}
        except Errors.KafkaError as exc:
            if isinstance(exc, Errors.NotCoordinatorForGroupError):
                coordinator.coordinator_dead()
            if not exc.retriable:
                raise
            await asyncio.sleep(RETRY_S)
            continue
        if not pending:
            return offsets
        log.debug("offsets of %s pending a transaction's outcome; asking again", partitions)
        await asyncio.sleep(RETRY_S)
