"""OffsetFetch v7 with require_stable (shared/anonstream/runtime/stable_offsets.py): the request and the answer."""
from __future__ import annotations

import io

import pytest
from aiokafka import TopicPartition
from aiokafka import errors as Errors

from anonstream.runtime.stable_offsets import (UNSTABLE_OFFSET_COMMIT, OffsetFetchResponse_v7, StableOffsetFetch,
                                               parse_offsets)


def _response(partitions, error_code=0):
    """A v7 response of topic "t" as the broker encodes it: partitions (index, offset, metadata, error code)."""
    raw = OffsetFetchResponse_v7.SCHEMA.encode(
        (0, [("t", [(p, o, -1, m, c, {}) for p, o, m, c in partitions], {})], error_code, {}))
    return OffsetFetchResponse_v7.decode(io.BytesIO(raw))


def test_the_request_asks_for_stable_offsets_of_each_partition():
    request = StableOffsetFetch("group", [TopicPartition("t", 1), TopicPartition("t", 0)]).prepare({9: (0, 9)})
    assert request.API_VERSION == 7 and request.FLEXIBLE_VERSION
    assert request.encode() == b"\x06group" + b"\x02" + b"\x02t" + b"\x03" + (0).to_bytes(4, "big") + \
        (1).to_bytes(4, "big") + b"\x00" + b"\x01" + b"\x00"  # compact fields, partitions sorted, require_stable


def test_a_broker_without_v7_gets_no_stable_request():
    with pytest.raises(NotImplementedError):
        StableOffsetFetch("group", [TopicPartition("t", 0)]).prepare({9: (0, 6)})


def test_committed_offsets_and_metadata_and_never_committed_left_out():
    offsets, pending = parse_offsets(_response([(0, 42, "", 0), (1, 7, "k1", 0), (2, -1, None, 0)]))
    assert offsets == {TopicPartition("t", 0): (42, ""), TopicPartition("t", 1): (7, "k1")}
    assert not pending


def test_a_partition_with_pending_transactional_offsets_is_not_answered():
    offsets, pending = parse_offsets(_response([(0, 42, "", 0), (1, -1, None, UNSTABLE_OFFSET_COMMIT)]))
    assert pending and offsets == {TopicPartition("t", 0): (42, "")}


@pytest.mark.parametrize("code, error", [(14, Errors.GroupLoadInProgressError), (16, Errors.NotCoordinatorForGroupError)])
def test_errors_are_raised_for_the_caller_to_retry(code, error):
    with pytest.raises(error):
        parse_offsets(_response([(0, 1, "", code)]))
    with pytest.raises(error):
        parse_offsets(_response([], error_code=code))
