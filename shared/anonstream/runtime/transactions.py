"""Exactly-once output of a stage service: Kafka transactions, one transactional producer per input partition.

The commit order of one batch (``PartitionProducers.commit``; the shell calls it with the stage core's outputs
already computed, nothing produced yet), per input partition of the batch, the partitions concurrently:
  1. begin a transaction on the partition's producer;
  2. send every output (and dead letter) of that partition's input records, wait for their acknowledgements;
  3. ``send_offsets_to_transaction``: the partition's next offset to read, for the stage's consumer group;
  4. commit the transaction: outputs and input offset become visible together (to ``read_committed``
     consumers) or, on any failure in 1-4, the transaction is aborted and neither is.
Only when every partition's transaction has committed does the shell tell the stage core its outputs are durable
(``Stage.after_produced``). A failure raises: the shell stops without that call, and the restarted service reads
the uncommitted records again from the committed offsets (its core's ``after_produced`` state never ran ahead of
a committed output). A crash between 2 and 4 leaves an open transaction that the broker aborts when the partition's
next producer initializes (below) or after ``TRANSACTION_TIMEOUT_MS``: ``read_committed`` consumers never see it.

Why one producer per input partition, and not one per instance: aiokafka (0.14) sends the consumed offsets with
TxnOffsetCommit version 0, which carries the group id but not the group generation or member id (KIP-447's
fencing by consumer-group metadata; aio-libs/aiokafka#844). The broker therefore cannot refuse offsets from an
instance that lost the partition in a rebalance. Fencing comes from the transactional id instead, as in Kafka
Streams' first exactly-once mode: the id names the input partition (``transactional_id``), so it is the same
whichever instance owns the partition, and the owner's ``init_transactions`` (``AIOKafkaProducer.start``) bumps the
producer epoch: a zombie (a paused instance whose session expired, still holding a producer for the partition) is
fenced (``ProducerFenced`` on its next transaction) and its open transaction is aborted or completed before the new
owner reads the committed offset.

Rebalances (``ConsumerRebalanceListener``): ``on_partitions_revoked`` waits for the batch in flight to commit (the
shell holds ``in_flight`` from poll to commit), then stops the revoked partitions' producers.
``on_partitions_assigned`` starts a producer per assigned partition (fencing the previous owner), then re-reads each
partition's committed offset and seeks to it: aiokafka fetches committed offsets as soon as the assignment arrives,
possibly before the previous owner's last transaction was resolved, and a position from before a transaction that
then commits would process its records twice. Every read of a committed offset asks for stable offsets
(``stable_offsets.py``, KIP-447's ``require_stable``): even after the fencing, the group coordinator may not yet
have applied the last transaction's offsets, and an older fetch would answer with the offset from before it. A batch polled while a rebalance ran (``rebalances``, counted when a
callback has done its seeks, changed between the poll's start and the shell taking ``in_flight``) is dropped whole and its partitions still owned are sought back
to their committed offsets (``rewind``): its records may lie before the position the assignment sought (processed,
they would be read again from there: a duplicate), or after it (dropped without a seek, they would be lost: both
seen in the first test runs). The records are read again from the committed offsets, by this instance or the
partition's new owner.

Every commit carries a metadata string with the offset (``""`` for a batch). A stage that keeps outputs outside
Kafka until they are committed (the swap stage's outbox) resolves them by it: ``committed`` holds each owned
partition's committed offset and metadata as read after fencing (``on_partitions_assigned``) and as committed since;
``unresolved`` the newly assigned partitions the shell still has to hand to ``Stage.assigned`` before it commits
anything for them; ``commit_bound`` runs a transaction of one partition without input (its committed offset again,
with the stage's metadata: time-driven outputs bound to a partition, ``Stage.bound_tick``). Other time-driven outputs
(``Stage.tick``: dead letters of incomplete documents, snapshots) are not bound to input offsets; they go through
the shell's ordinary idempotent producer (not transactional records are visible to ``read_committed`` consumers at
once).

A transaction that fails on a timeout or a lost connection (a broker restart) is not fatal: the partition's producer
is replaced by a new one with the same transactional id (its initialization aborts or completes the open
transaction), the committed offset is read again, and if it is not the one the transaction was committing (with its
metadata), the same outputs and offset are sent in a new transaction; for up to ``TRANSACTION_RETRY_S``. A fenced
producer (another instance owns the partition now) is fatal: the service stops.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Awaitable, Callable, Mapping, Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import InvalidProducerEpoch, KafkaError, KafkaTimeoutError, ProducerFenced

from ..stages.base import Emit
from .stable_offsets import fetch_stable_offsets

log = logging.getLogger(__name__)

TRANSACTION_TIMEOUT_MS = 60_000  # the broker aborts a transaction left open this long (a crashed owner)
# Test hook: the service exits (os._exit, like kill -9) in its Nth transactional batch after the outputs were sent
# and the offsets added to the transaction, before the commit (tests/integration/test_exactly_once.py).
CRASH_BEFORE_COMMIT_ENV = "ANONSTREAM_TEST_CRASH_BEFORE_COMMIT"
# Test hook: the service exits (os._exit) after its Nth transactional batch committed, before the stage core is told
# (``after_produced``): e.g. the swap stage's outbox entries of that batch are still there.
CRASH_AFTER_COMMIT_ENV = "ANONSTREAM_TEST_CRASH_AFTER_COMMIT"
TRANSACTION_RETRY_S = 180.0  # a failed transaction is retried this long (a broker restart), then the service stops
TRANSACTION_ATTEMPT_S = 90.0  # one attempt (produce, offsets, commit or abort) taking longer counts as failed

Produce = Callable[[AIOKafkaProducer, Sequence[Emit]], Awaitable[None]]


def transactional_id(prefix: str, stage: str, topic: str, partition: int) -> str:
    """The transactional id of one input partition of one stage: stable across instances and restarts."""
    return f"{prefix}.{stage}.eos.{topic}.{partition}"


def group_by_partition(by_source: Mapping[tuple[str, int], Sequence[Emit]],
                       offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, list[Emit]]:
    """Every input partition of the batch with its outputs (possibly none: its offset is committed all the same)."""
    grouped = {tp: [] for tp in offsets}
    for (topic, partition), emits in by_source.items():
        tp = TopicPartition(topic, partition)
        if tp not in grouped:
            raise ValueError(f"outputs of {topic}[{partition}], which is not in the batch")
        grouped[tp].extend(emits)
    return grouped


class PartitionProducers(ConsumerRebalanceListener):
    """The transactional producers of the input partitions this instance owns, kept in step with the assignment."""

    def __init__(self, make_producer: Callable[[str], AIOKafkaProducer], prefix: str, stage: str, group: str):
        self._make = make_producer
        self._prefix = prefix
        self._stage = stage
        self.group = group
        self.consumer: AIOKafkaConsumer | None = None  # set before the consumer starts
        self.producers: dict[TopicPartition, AIOKafkaProducer] = {}
        self.in_flight = asyncio.Lock()  # held by the shell from a batch's poll to its commit
        self.transactions = 0
        self.rebalances = 0  # revocations and assignments so far
        crash = os.environ.get(CRASH_BEFORE_COMMIT_ENV)
        self._crash_at = int(crash) if crash else 0
        crash = os.environ.get(CRASH_AFTER_COMMIT_ENV)
        self._crash_after = int(crash) if crash else 0
        self._batches = 0
        self.committed: dict[TopicPartition, tuple[int | None, str]] = {}  # owned: committed offset, metadata
        self.unresolved: set[TopicPartition] = set()  # assigned, not yet handed to Stage.assigned
        self.retries = 0

    async def on_partitions_revoked(self, revoked) -> None:
        async with self.in_flight:  # the batch in flight commits first
            await self._stop([tp for tp in revoked if tp in self.producers])
            self.rebalances += 1

    async def on_partitions_assigned(self, assigned) -> None:
        async with self.in_flight:
            await self._stop([tp for tp in self.producers if tp not in assigned])
            new = [tp for tp in assigned if tp not in self.producers]
            started = {tp: self._make(transactional_id(self._prefix, self._stage, tp.topic, tp.partition))
                       for tp in new}
            await asyncio.gather(*(producer.start() for producer in started.values()))  # fences the previous owners
            self.producers.update(started)
            for tp in new:  # the committed offsets as they are now that the previous owners' transactions are over
                committed, metadata = await self.fetch_committed(tp)
                self.committed[tp] = (committed, metadata)
                self.unresolved.add(tp)
                if committed is not None:
                    self.consumer.seek(tp, committed)
            # counted last, after the seeks: a batch whose poll began before this point may hold records fetched
            # before a seek (returned to the shell, they are not discarded by it), so the shell drops it
            self.rebalances += 1
            if new:
                log.info("stage %s: transactional producers for %s", self._stage,
                         ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(new)))

    async def rewind(self, tps) -> None:
        """The partitions of a dropped batch that this instance owns: back to their committed offsets (the earliest
        offset before any commit)."""
        for tp in tps:
            if tp not in self.producers:
                continue  # revoked: its new owner reads from the committed offset
            committed, _ = await self.fetch_committed(tp)
            if committed is None:
                await self.consumer.seek_to_beginning(tp)
            else:
                self.consumer.seek(tp, committed)

    async def fetch_committed(self, tp: TopicPartition) -> tuple[int | None, str]:
        """The partition's committed offset (None: never committed) and its metadata, from the group coordinator,
        once no transaction's offsets for it are pending (``stable_offsets``: an older fetch may return the offset
        from before a transaction that has just committed, and the records it covered would be processed twice)."""
        coordinator = getattr(self.consumer, "_coordinator", None)
        if coordinator is None:  # a consumer without aiokafka's coordinator (tests): no metadata
            return await self.consumer.committed(tp), ""
        return (await fetch_stable_offsets(coordinator, [tp])).get(tp, (None, ""))

    async def _stop(self, tps: Sequence[TopicPartition]) -> None:
        for tp in tps:
            self.committed.pop(tp, None)
            self.unresolved.discard(tp)
        producers = [self.producers.pop(tp) for tp in tps]
        results = await asyncio.gather(*(p.stop() for p in producers), return_exceptions=True)
        for result in results:
            if isinstance(result, Exception):
                log.warning("stage %s: stopping a transactional producer: %r", self._stage, result)

    async def stop(self) -> None:
        await self._stop(list(self.producers))

    async def commit(self, outputs: Mapping[TopicPartition, Sequence[Emit]], offsets: Mapping[TopicPartition, int],
                     produce: Produce) -> None:
        """One transaction per input partition (outputs, then offsets, then commit; see the module's docstring),
        the partitions concurrently. Raises the first failure after every transaction has ended (committed or
        aborted); the caller must then stop rather than go on."""
        self._batches += 1
        crash = self._crash_at and self._batches == self._crash_at
        results = await asyncio.gather(*(self._commit_one(tp, outputs.get(tp, ()), offset, "", produce, crash)
                                         for tp, offset in offsets.items()), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        self.transactions += len(offsets)
        if self._crash_after and self._batches == self._crash_after:
            log.error("stage %s: %s set, exiting after the commit", self._stage, CRASH_AFTER_COMMIT_ENV)
            os._exit(137)

    async def commit_bound(self, tp: TopicPartition, emits: Sequence[Emit], metadata: str, produce: Produce) -> None:
        """A transaction of an owned partition without input: ``emits`` and the partition's committed offset again,
        with ``metadata`` (the stage's handle on this transaction's outcome). Raises like ``commit``."""
        offset, _ = self.committed[tp]
        if offset is None:
            raise ValueError(f"{tp.topic}[{tp.partition}] has no committed offset to bind outputs to")
        await self._commit_one(tp, emits, offset, metadata, produce, False)
        self.transactions += 1

    async def _commit_one(self, tp: TopicPartition, emits: Sequence[Emit], offset: int, metadata: str,
                          produce: Produce, crash: bool) -> None:
        deadline = time.monotonic() + TRANSACTION_RETRY_S
        while True:
            try:
                await asyncio.wait_for(self._attempt(tp, emits, offset, metadata, produce, crash),
                                       TRANSACTION_ATTEMPT_S)
                break
            except Exception as exc:  # noqa: BLE001 - sorted below
                if not _retriable(exc) or time.monotonic() > deadline:
                    raise
                self.retries += 1
                log.warning("stage %s: transaction of %s[%d] failed (%r); renewing its producer and retrying",
                            self._stage, tp.topic, tp.partition, exc)
                if await self._renew(tp, deadline) == (offset, metadata):
                    log.info("stage %s: the transaction of %s[%d] had committed", self._stage, tp.topic, tp.partition)
                    break
        self.committed[tp] = (offset, metadata)

    async def _attempt(self, tp: TopicPartition, emits: Sequence[Emit], offset: int, metadata: str,
                       produce: Produce, crash: bool) -> None:
        producer = self.producers[tp]
        async with producer.transaction():  # commit on leaving; abort if anything in it raised
            await produce(producer, emits)
            await producer.send_offsets_to_transaction({tp: (offset, metadata)}, self.group)
            if crash:
                log.error("stage %s: %s set, exiting before the commit", self._stage, CRASH_BEFORE_COMMIT_ENV)
                os._exit(137)

    async def _renew(self, tp: TopicPartition, deadline: float) -> tuple[int | None, str]:
        """Replace the partition's producer by a new one with the same transactional id (its initialization ends
        the open transaction: aborted, or completed if its commit had begun); returns the committed offset and
        metadata as they are then. Retries while the broker is unreachable, until ``deadline``."""
        old = self.producers[tp]
        try:
            await asyncio.wait_for(old.stop(), 10)
        except Exception as exc:  # noqa: BLE001 - the old producer is given up either way
            log.warning("stage %s: stopping a failed transactional producer: %r", self._stage, exc)
        while True:
            producer = self._make(transactional_id(self._prefix, self._stage, tp.topic, tp.partition))
            try:
                await asyncio.wait_for(producer.start(), TRANSACTION_ATTEMPT_S)
                self.producers[tp] = producer
                return await self.fetch_committed(tp)
            except Exception as exc:  # noqa: BLE001
                try:
                    await asyncio.wait_for(producer.stop(), 10)
                except Exception:  # noqa: BLE001
                    pass
                if not _retriable(exc) or time.monotonic() > deadline:
                    raise
                log.warning("stage %s: a transactional producer for %s[%d] could not start (%r); retrying",
                            self._stage, tp.topic, tp.partition, exc)
                await asyncio.sleep(2)


def _retriable(exc: BaseException) -> bool:
    """A failure a new attempt may get past (a broker restart); never a fenced producer."""
    if isinstance(exc, (ProducerFenced, InvalidProducerEpoch)):
        return False
    if isinstance(exc, (asyncio.TimeoutError, KafkaTimeoutError, ConnectionError)):
        return True
    return isinstance(exc, KafkaError) and bool(getattr(exc, "retriable", False))
