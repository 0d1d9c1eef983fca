"""The service shell: one stage core between two Kafka topics, at-least-once.

Loop, per batch (the commit order is the whole guarantee, so it is spelled out here):
  1. poll a batch of records (``getmany``); nothing is committed yet;
  2. run the stage core in a worker thread (the event loop keeps the group heartbeats going);
  3. send every output and every dead letter, then wait until the broker has acknowledged all of
     them (acks=all, idempotent producer);
  4. tell the stage its outputs are durable (``after_produced``: e.g. the sink forgets a document);
  5. commit, per partition, the offset after the last record of the batch.
While a store (Redis) is unreachable (``StoreUnavailable``), the batch is read again from its first offsets
after ``STORE_RETRY_S`` (nothing is produced or committed for it), ticks are skipped, and step 4 is retried:
valid records wait for Redis rather than becoming dead letters, and the service stays up.
A crash before 5 re-delivers the batch; outputs carry idempotency keys (document id, chunk index,
stage versions), so consumers see duplicates at worst, never a gap. A failed produce stops the
service without committing (it restarts and re-processes) rather than skipping records.

Exactly-once (``ANONSTREAM_PROCESSING_GUARANTEE=exactly-once``: every stage; with at-least-once, the stages
in ``ANONSTREAM_TRANSACTIONAL_STAGES``, by default the sink, the pipeline's exit) does 3 and 5 in Kafka
transactions, one per input partition of the batch (``runtime/transactions.py``: produce, then
``send_offsets_to_transaction``, then commit; abort on failure): outputs and input offsets commit together or
not at all, so ``read_committed`` consumers see each output once. Step 4 runs after every transaction of the
batch committed; a failed transaction stops the service (restarted, it reads the batch again). The transactional
ids name the input partition, not the instance (fencing of zombies across instances: see transactions.py).
Every service consumes with ``read_committed``, so no stage reads an aborted output of the stage before it.

A stage that is one consumer by design (``Stage.single_instance``: the audit with its attack or identification
monitor on) runs only while its instance holds a lease (``stores/lease.py``, TTL ``ANONSTREAM_AUDIT_LEASE_TTL_S``):
a second instance waits before it joins the consumer group, and an instance that loses its lease (it could not
renew it in time) stops with exit code 75 instead of consuming beside its successor.

End-to-end latency: the ingest service reads each document's Kafka timestamp (when it was appended to the
documents topic) and every service passes it on, per document id, as the ``anonstream-ingested-at`` header
(epoch ms) of the records it writes for that document; the sink observes ``now - ingested-at`` when the
sanitized document is acknowledged (``anonstream_end_to_end_seconds``). The stage cores never see it. The
shell remembers the last ``INGESTED_AT_MAX_DOCS`` documents' times in memory: documents in flight across a
restart carry no header afterwards and are not observed.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections import OrderedDict
from typing import Sequence

from aiokafka.errors import CommitFailedError

from .. import serde, topics
from ..config import Settings
from ..stages.base import Emit, InputMessage, StageDriver
from ..stores.base import StoreUnavailable
from ..stores.lease import LeaderElection, LeaseBackend
from . import kafka
from .transactions import TRANSACTION_TIMEOUT_MS, PartitionProducers, group_by_partition
from .dashboard import dashboard_routes
from .metrics import ServiceMetrics, serve
from .wiring import blas_limit, build_stage, redis_stores

log = logging.getLogger(__name__)

DEFAULT_BATCH = 100
IDLE_POLL_MS = 500
TICK_EVERY_S = 1.0
STATS_EVERY_S = 30.0
INGESTED_AT_HEADER = "anonstream-ingested-at"
INGESTED_AT_MAX_DOCS = 100_000
STORE_RETRY_S = 1.0
STORE_RETRIES = 300  # step 4 waits this many retries (about 5 min) for the store, then the service stops
LEASE_LOST_EXIT = 75  # EX_TEMPFAIL: a single-instance stage lost its lease; restarted, it waits as a standby


class StageService:
    def __init__(self, driver: StageDriver, settings: Settings, lease: LeaseBackend | None = None):
        self.driver = driver
        self.settings = settings
        self.stage = driver.stage
        self.exit_code = 0
        # the single-instance lease (``Stage.single_instance``); None: any number of instances
        self.election = None if lease is None or not self.stage.single_instance else LeaderElection(
            lease, settings.audit_lease_ttl_s, name=f"{self.stage.name}@{settings.instance}")
        self.partitioner = kafka.DocumentPartitioner()
        self.metrics = ServiceMetrics(self.stage.name, settings.instance, self.stage.metrics)
        self._committed: dict = {}  # TopicPartition -> next offset to read, as committed
        self._stopping = asyncio.Event()
        self._ingested_at: OrderedDict[str, int] = OrderedDict()  # doc_id -> epoch ms, oldest first
        self._documents_topic = topics.name(topics.DOCUMENTS, settings.topic_prefix)

    def stop(self) -> None:
        self._stopping.set()

    async def _wait_for_lease(self) -> bool:
        """A single-instance stage: wait (as a standby) until this instance holds the lease; False if stopped first."""
        loop = asyncio.get_running_loop()
        waiting = False
        while not self._stopping.is_set():
            if await loop.run_in_executor(None, self.election.step):
                self.election.start()
                log.info("service %s: holds the single-instance lease (token %d)", self.stage.name,
                         self.election.token)
                return True
            if not waiting:
                waiting = True
                log.info("service %s: another instance holds the single-instance lease; standing by",
                         self.stage.name)
            try:
                await asyncio.wait_for(self._stopping.wait(), timeout=min(1.0, self.election.retry_s))
            except asyncio.TimeoutError:
                pass
        return False

    async def run(self) -> None:
        if self.election is not None and not await self._wait_for_lease():
            return
        try:
            await self._run()
        finally:
            if self.election is not None:
                await asyncio.get_running_loop().run_in_executor(None, self.election.stop)

    async def _run(self) -> None:
        group = f"{self.settings.topic_prefix}.{self.stage.name}"
        # the ordinary idempotent producer: all outputs at-least-once, and the tick's outputs in either mode
        producer = kafka.producer(self.settings)
        transactions = None
        if self.transactional:
            self.stage.exactly_once = True  # the stage's outputs commit in transactions (Stage.exactly_once)
            consumer = kafka.consumer(self.settings, [], group)
            transactions = PartitionProducers(
                lambda txn_id: kafka.producer(self.settings, transactional_id=txn_id,
                                              transaction_timeout_ms=TRANSACTION_TIMEOUT_MS),
                self.settings.topic_prefix, self.stage.name, group)
            transactions.consumer = consumer
            consumer.subscribe(self.driver.input_topic_names(), listener=transactions)
        else:
            consumer = kafka.consumer(self.settings, self.driver.input_topic_names(), group)
        await producer.start()
        await consumer.start()
        server = None
        if self.settings.metrics_port:
            server = await serve(self.settings.metrics_host, self.settings.metrics_port,
                                 self.metrics.exposition,
                                 lambda: not self._stopping.is_set(),
                                 dashboard_routes(self.stage, self.metrics, self.settings))
        log.info("service %s@%s: consuming %s as group %s", self.stage.name, self.stage.version,
                 ",".join(self.driver.input_topic_names()), group)
        loop = asyncio.get_running_loop()
        last_tick = last_stats = 0.0
        self.stage.start()
        try:
            while not self._stopping.is_set():
                if self.election is not None and not self.election.is_leader:
                    log.error("service %s: lost the single-instance lease; stopping (exit %d)", self.stage.name,
                              LEASE_LOST_EXIT)
                    self.exit_code = LEASE_LOST_EXIT
                    break
                rebalances = transactions.rebalances if transactions is not None else 0
                batches = await self._poll_batch(consumer)
                if transactions is not None:
                    await transactions.in_flight.acquire()  # a rebalance waits for this batch to commit
                    if transactions.rebalances != rebalances:  # polled across a rebalance: read it again
                        await transactions.rewind(batches)        # from the committed offsets (transactions.py)
                        batches = {}
                try:
                    store_down = False
                    if transactions is not None and transactions.unresolved:
                        # newly owned partitions: the stage resolves what it holds for them before anything commits
                        store_down = not await self._resolve(transactions)
                        if store_down:
                            await transactions.rewind(batches)
                    if not store_down:
                        store_down = not await self._batch(consumer, producer, transactions, batches)
                finally:
                    if transactions is not None:
                        transactions.in_flight.release()
                if store_down:
                    await asyncio.sleep(STORE_RETRY_S)
                    continue
                now = time.time()
                if now - last_tick >= TICK_EVERY_S:
                    last_tick = now
                    try:
                        ticked = await loop.run_in_executor(None, self.driver.tick, now)
                    except StoreUnavailable as exc:
                        log.warning("service %s: store unavailable (%s); tick skipped", self.stage.name, exc)
                        ticked = []
                    await self._produce(producer, ticked)  # not bound to input offsets: no transaction
                    await self._produced_retrying(ticked)
                    self.metrics.observe_records(produced=len(ticked))
                    if transactions is not None:
                        async with transactions.in_flight:
                            await self._bound_tick(transactions, now)
                    await self._measure_lag(consumer)
                if now - last_stats >= STATS_EVERY_S:
                    last_stats = now
                    try:
                        stage_metrics = self.stage.metrics()  # numbers only; refit's read Redis
                    except StoreUnavailable:
                        stage_metrics = "(store unavailable)"
                    log.info("service %s: %s %s", self.stage.name, dict(self.metrics.records), stage_metrics)
        finally:
            self._stopping.set()
            await loop.run_in_executor(None, self.stage.close)
            if server is not None:
                server.close()
            await consumer.stop()
            if transactions is not None:
                await transactions.stop()
            await producer.stop()
            log.info("service %s stopped: %s", self.stage.name, dict(self.metrics.records))

    async def _batch(self, consumer, producer, transactions: PartitionProducers | None, batches: dict) -> bool:
        """Steps 2 to 5 for one polled batch. False: the store was unavailable, the batch will be read again."""
        messages = [InputMessage(m.topic, m.partition, m.offset, m.key, m.value, self._ingested_at_of(m))
                    for records in batches.values() for m in records]
        if not messages:
            return True
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            handled = await loop.run_in_executor(None, self.driver.handle, messages)
        except StoreUnavailable as exc:
            log.warning("service %s: store unavailable (%s); reading the batch again in %.0f s",
                        self.stage.name, exc, STORE_RETRY_S)
            for tp, records in batches.items():
                consumer.seek(tp, records[0].offset)
            return False
        self.metrics.observe_process(time.monotonic() - started)
        self._remember_ingested(handled.ingested_at)
        outputs = handled.emits + handled.dead_letters
        offsets = {tp: records[-1].offset + 1 for tp, records in batches.items()}
        if transactions is not None:
            # steps 3 and 5 in one transaction per input partition (transactions.py); a failure raises and stops
            # the service before step 4
            await transactions.commit(group_by_partition(handled.by_source(), offsets), offsets, self._produce)
            await self._produced_retrying(outputs)
        else:
            await self._produce(producer, outputs)
            await self._produced_retrying(outputs)
            if not await self._commit(consumer, offsets):
                offsets = {}
        self._committed.update(offsets)
        self.metrics.observe_batch(time.monotonic() - started, len(messages), len(handled.emits),
                                   len(handled.dead_letters))
        return True

    async def _resolve(self, transactions: PartitionProducers) -> bool:
        """``Stage.assigned`` for the partitions assigned since the last batch (caller holds ``in_flight``), and the
        transactions it asks for. False: the store was unavailable; they stay unresolved (nothing is processed)."""
        tps = sorted(transactions.unresolved)
        committed = {(tp.topic, tp.partition): transactions.committed[tp] for tp in tps}
        try:
            bound = await asyncio.get_running_loop().run_in_executor(None, self.driver.assigned, committed)
        except StoreUnavailable as exc:
            log.warning("service %s: store unavailable (%s) resolving assigned partitions; retrying",
                        self.stage.name, exc)
            return False
        await self._commit_bound(transactions, bound)
        transactions.unresolved.difference_update(tps)
        return True

    async def _bound_tick(self, transactions: PartitionProducers, now: float) -> None:
        """Time-driven outputs bound to owned partitions (``Stage.bound_tick``), each in a transaction of its
        partition (caller holds ``in_flight``)."""
        owned = {(tp.topic, tp.partition): offset for tp, (offset, _) in transactions.committed.items()
                 if offset is not None and tp in transactions.producers and tp not in transactions.unresolved}
        if not owned:
            return
        try:
            bound = await asyncio.get_running_loop().run_in_executor(None, self.driver.bound_tick, now, owned)
        except StoreUnavailable as exc:
            log.warning("service %s: store unavailable (%s); bound tick skipped", self.stage.name, exc)
            return
        await self._commit_bound(transactions, bound)

    async def _commit_bound(self, transactions: PartitionProducers, bound) -> None:
        from aiokafka import TopicPartition

        for (topic, partition), runs in bound.items():
            tp = TopicPartition(topic, partition)
            for emits, metadata in runs:
                await transactions.commit_bound(tp, emits, metadata, self._produce)
                await self._produced_retrying(emits)
                self.metrics.observe_records(produced=len(emits))

    def _ingested_at_of(self, record) -> int | None:
        """The record's ingest time: its header, or on the documents topic its own Kafka timestamp."""
        for name, value in record.headers or ():
            if name == INGESTED_AT_HEADER:
                try:
                    return int(value)
                except ValueError:
                    return None
        return record.timestamp if record.topic == self._documents_topic and record.timestamp else None

    def _remember_ingested(self, ingested_at: dict[str, int]) -> None:
        for doc_id, ms in ingested_at.items():
            self._ingested_at[doc_id] = ms
            self._ingested_at.move_to_end(doc_id)
        while len(self._ingested_at) > INGESTED_AT_MAX_DOCS:
            self._ingested_at.popitem(last=False)

    def _produced(self, emits: Sequence[Emit]) -> None:
        """Step 4, and the end-to-end latency of the sanitized documents just acknowledged (committed, for a
        transactional stage); their documents are done here."""
        self.stage.after_produced(emits)
        now_ms = time.time() * 1000
        for emit in emits:
            if emit.topic is topics.SANITIZED:
                ms = self._ingested_at.pop(emit.partition_key, None)
                if ms is not None:
                    self.metrics.observe_end_to_end((now_ms - ms) / 1000)

    async def _produced_retrying(self, emits: Sequence[Emit]) -> None:
        """Step 4, retried while the store is unreachable: the outputs are durable, so giving up here would
        leave the stage's state behind them (e.g. a reassembled document the sink has not forgotten)."""
        for attempt in range(STORE_RETRIES + 1):
            try:
                self._produced(emits)
                return
            except StoreUnavailable as exc:
                if attempt == STORE_RETRIES:
                    raise
                log.warning("service %s: store unavailable (%s) after produce; retrying", self.stage.name, exc)
                await asyncio.sleep(STORE_RETRY_S)

    async def _measure_lag(self, consumer) -> None:
        """Consumer lag per assigned partition: the partition's end (high watermark, as of the last fetch)
        minus the committed offset, or minus the fetch position before the first commit."""
        lag = {}
        for tp in consumer.assignment():
            end = consumer.highwater(tp)
            if end is None:
                continue
            done = self._committed.get(tp)
            if done is None:
                done = await consumer.position(tp)
            lag[(tp.topic, tp.partition)] = max(0, end - done)
        self.metrics.lag = lag

    @property
    def transactional(self) -> bool:
        return self.settings.transactional(self.stage.name)

    def _batch_policy(self) -> tuple[int, float]:
        """(max records, max wait in s) of a batch: the embed stage fills a window for its model; the pii stage
        may take fewer records, so that a long document's first chunks go on to embed while pii does the rest."""
        if self.stage.name == "embed":
            return self.settings.embed_window, self.settings.embed_max_wait_ms / 1000
        if self.stage.name == "pii":
            return self.settings.pii_max_batch, self.settings.max_wait_ms / 1000
        return DEFAULT_BATCH, self.settings.max_wait_ms / 1000

    async def _poll_batch(self, consumer) -> dict:
        """Step 1: wait up to IDLE_POLL_MS for a first record, then keep polling until the batch is
        full or its wait time is up (batching by size and by time)."""
        max_records, max_wait = self._batch_policy()
        batches = await consumer.getmany(timeout_ms=IDLE_POLL_MS, max_records=max_records)
        count = sum(map(len, batches.values()))
        deadline = time.monotonic() + max_wait
        while count and count < max_records and (remaining := deadline - time.monotonic()) > 0:
            more = await consumer.getmany(timeout_ms=int(remaining * 1000) + 1, max_records=max_records - count)
            for tp, records in more.items():
                batches.setdefault(tp, []).extend(records)
                count += len(records)
        return batches

    async def _produce(self, producer, emits: Sequence[Emit]) -> None:
        """Send all, then wait for every acknowledgement (step 3)."""
        if not emits:
            return
        futures = []
        partitions_of: dict[str, list[int]] = {}  # one metadata lookup per topic, not per record
        for emit in emits:
            name = topics.name(emit.topic, self.settings.topic_prefix)
            if name not in partitions_of:
                partitions_of[name] = sorted(await producer.partitions_for(name))
            partitions = partitions_of[name]
            ms = self._ingested_at.get(emit.partition_key)
            futures.append(await producer.send(
                name, serde.dumps(emit.value), key=emit.key.encode(),
                partition=self.partitioner(emit.partition_key, partitions),
                headers=None if ms is None else [(INGESTED_AT_HEADER, str(ms).encode())]))
        await asyncio.gather(*futures)

    async def _commit(self, consumer, offsets) -> bool:
        """Step 5. A commit refused because the group rebalanced is not an error: the records
        will be delivered again to whoever owns the partitions now (at-least-once). Returns whether
        the offsets were committed."""
        try:
            await consumer.commit(offsets)
            return True
        except CommitFailedError:
            log.warning("service %s: commit refused after a rebalance; batch will be re-delivered",
                        self.stage.name)
            return False


def run_service(name: str, settings: Settings) -> int:
    blas_limit(settings.blas_threads)
    stores = redis_stores(settings, name)
    stage = build_stage(name, settings, stores)
    service = StageService(StageDriver(stage, settings.topic_prefix), settings, lease=stores.lease)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, service.stop)
        await service.run()

    asyncio.run(main())
    return service.exit_code


def main(name: str) -> None:
    """Entry point of ``python -m anonstream_services.<name>``."""
    import sys

    logging.basicConfig(level=Settings().log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.exit(run_service(name, Settings()))
