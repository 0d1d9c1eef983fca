"""Exactly-once in the service shell (runtime/transactions.py), without a broker: transactional ids per input
partition, outputs grouped by the input partition they came from, the commit order of a transaction (produce,
offsets, commit; abort on failure), and the rebalance listener (fence-then-seek on assignment, revocation waits for
the batch in flight)."""
import asyncio

import orjson
import pytest
from aiokafka import TopicPartition

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.transactions import PartitionProducers, group_by_partition, transactional_id
from anonstream.stages.base import Emit, InputMessage, StageDriver
from anonstream.stages.ingest import IngestStage


def test_transactional_id_names_the_input_partition_not_the_instance():
    a = transactional_id("p", "pii", "p.chunks.v1", 3)
    assert a == transactional_id("p", "pii", "p.chunks.v1", 3)  # same on every instance and after a restart
    assert a != transactional_id("p", "pii", "p.chunks.v1", 2)
    assert a != transactional_id("p", "embed", "p.chunks.v1", 3)
    assert a != transactional_id("q", "pii", "p.chunks.v1", 3)


def test_settings_choose_the_transactional_stages():
    eos = Settings(processing_guarantee="exactly-once", transactional_stages=("sink",))
    assert all(eos.transactional(s) for s in ("ingest", "pii", "swap", "sink", "audit"))
    alo = Settings(processing_guarantee="at-least-once", transactional_stages=("sink",))
    assert alo.transactional("sink") and not alo.transactional("pii")
    with pytest.raises(ValueError, match="PROCESSING_GUARANTEE"):
        Settings(processing_guarantee="exactly_once").transactional("pii")


def _document(doc_id: str) -> bytes:
    return orjson.dumps({"doc_id": doc_id, "text": "One sentence. Two sentences.", "metadata": {}})


def test_driver_attributes_outputs_and_dead_letters_to_their_input_partition():
    driver = StageDriver(IngestStage(), "t")
    handled = driver.handle([InputMessage("t.documents.v1", 0, 5, b"a", _document("a")),
                             InputMessage("t.documents.v1", 1, 9, b"x", b"{not json"),
                             InputMessage("t.documents.v1", 1, 10, b"b", _document("b"))])
    grouped = handled.by_source()
    assert {e.value["doc_id"] for e in grouped[("t.documents.v1", 0)]} == {"a"}
    partition_1 = grouped[("t.documents.v1", 1)]
    assert [e.topic for e in partition_1].count(topics.DEAD_LETTER) == 1
    assert {e.value["doc_id"] for e in partition_1 if e.topic is not topics.DEAD_LETTER} == {"b"}
    assert sum(map(len, grouped.values())) == len(handled.emits) + len(handled.dead_letters)


def _emit(key: str) -> Emit:
    return Emit(topics.CHUNKS, key, key, {})


def test_group_by_partition_keeps_partitions_without_outputs_and_refuses_strangers():
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    grouped = group_by_partition({("t", 1): [_emit("a"), _emit("b")]}, {t0: 4, t1: 8})
    assert grouped == {t0: [], t1: [_emit("a"), _emit("b")]}  # t0's offset is committed with no output
    with pytest.raises(ValueError):
        group_by_partition({("t", 2): [_emit("c")]}, {t0: 4})


class FakeTxnProducer:
    """Records what happens in which order; ``fail_on`` names the step that raises."""

    def __init__(self, txn_id: str, log: list, fail_on: str | None = None):
        self.txn_id, self.log, self.fail_on = txn_id, log, fail_on

    async def start(self):
        self.log.append(("init", self.txn_id))

    async def stop(self):
        self.log.append(("stop", self.txn_id))

    def _step(self, name, *args):
        self.log.append((name, self.txn_id, *args))
        if name == self.fail_on:
            raise RuntimeError(name)

    def transaction(self):
        producer = self

        class Context:
            async def __aenter__(self):
                producer._step("begin")

            async def __aexit__(self, exc_type, exc, tb):
                producer._step("abort" if exc_type else "commit")
                return False

        return Context()

    async def send_offsets_to_transaction(self, offsets, group):
        self._step("offsets", {tp.partition: o for tp, o in offsets.items()}, group)


class FakeConsumer:
    def __init__(self, committed):
        self._committed, self.seeks = committed, []

    async def committed(self, tp):
        return self._committed.get(tp)

    def seek(self, tp, offset):
        self.seeks.append((tp.partition, offset))


def _producers(log, fail_on=None):
    listener = PartitionProducers(lambda txn_id: FakeTxnProducer(txn_id, log, fail_on), "p", "pii", "p.pii")
    listener.consumer = FakeConsumer({TopicPartition("t", 0): 17})
    return listener


async def _produce(producer, emits):
    producer._step("send", [e.key for e in emits])


def test_assignment_fences_first_then_seeks_to_the_committed_offset():
    log = []
    listener = _producers(log)
    asyncio.run(listener.on_partitions_assigned({TopicPartition("t", 0), TopicPartition("t", 1)}))
    assert sorted(log) == [("init", "p.pii.eos.t.0"), ("init", "p.pii.eos.t.1")]
    assert listener.consumer.seeks == [(0, 17)]  # partition 1 has no commit yet: auto_offset_reset decides
    assert set(listener.producers) == {TopicPartition("t", 0), TopicPartition("t", 1)}
    assert listener.rebalances == 1  # a batch polled across it is dropped by the shell


def test_commit_is_produce_then_offsets_then_commit_per_partition():
    log = []
    listener = _producers(log)
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)

    async def run():
        await listener.on_partitions_assigned({t0, t1})
        log.clear()
        await listener.commit({t0: [_emit("a")], t1: []}, {t0: 18, t1: 3}, _produce)

    asyncio.run(run())
    for partition, keys, offset in ((0, ["a"], 18), (1, [], 3)):
        txn = f"p.pii.eos.t.{partition}"
        assert [e for e in log if e[1] == txn] == [("begin", txn), ("send", txn, keys),
                                                   ("offsets", txn, {partition: (offset, "")}, "p.pii"),
                                                   ("commit", txn)]
    assert listener.transactions == 2


@pytest.mark.parametrize("step", ["send", "offsets"])
def test_a_failure_before_the_commit_aborts_and_raises(step):
    log = []
    listener = _producers(log, fail_on=step)
    t0 = TopicPartition("t", 0)

    async def run():
        await listener.on_partitions_assigned({t0})
        await listener.commit({t0: [_emit("a")]}, {t0: 18}, _produce)

    with pytest.raises(RuntimeError, match=step):
        asyncio.run(run())
    assert log[-1] == ("abort", "p.pii.eos.t.0")
    assert ("commit", "p.pii.eos.t.0") not in log
    assert listener.transactions == 0


def test_revocation_waits_for_the_batch_in_flight():
    log = []
    listener = _producers(log)
    t0 = TopicPartition("t", 0)

    async def run():
        await listener.on_partitions_assigned({t0})
        await listener.in_flight.acquire()  # the shell is in the middle of a batch
        revoking = asyncio.create_task(listener.on_partitions_revoked({t0}))
        await asyncio.sleep(0.05)
        assert not revoking.done() and t0 in listener.producers
        await listener.commit({t0: [_emit("a")]}, {t0: 18}, _produce)
        listener.in_flight.release()
        await revoking
        assert t0 not in listener.producers

    asyncio.run(run())
    assert log.index(("commit", "p.pii.eos.t.0")) < log.index(("stop", "p.pii.eos.t.0"))


def test_rewind_seeks_owned_partitions_back_to_their_committed_offsets():
    log = []
    listener = _producers(log)
    t0, t1, t2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
    beginnings = []

    async def seek_to_beginning(tp):
        beginnings.append(tp.partition)

    listener.consumer.seek_to_beginning = seek_to_beginning

    async def run():
        await listener.on_partitions_assigned({t0, t1})
        listener.consumer.seeks.clear()
        await listener.rewind([t0, t1, t2])  # t2: not ours (revoked), left to its owner

    asyncio.run(run())
    assert listener.consumer.seeks == [(0, 17)] and beginnings == [1]


class FlakyTxnProducer(FakeTxnProducer):
    """Its first transaction times out in the send (a broker restarting); later producers work."""

    made = 0

    def __init__(self, txn_id, log, committed_by_first=None):
        super().__init__(txn_id, log)
        FlakyTxnProducer.made += 1
        self.first = FlakyTxnProducer.made == 1
        self.committed_by_first = committed_by_first

    def _step(self, name, *args):
        self.log.append((name, self.txn_id, *args))
        if name == "send" and self.first:
            from aiokafka.errors import KafkaTimeoutError
            raise KafkaTimeoutError()


@pytest.mark.parametrize("had_committed", [False, True])
def test_a_transaction_timing_out_is_retried_with_a_new_producer_unless_it_had_committed(had_committed):
    log = []
    FlakyTxnProducer.made = 0
    listener = PartitionProducers(lambda txn_id: FlakyTxnProducer(txn_id, log), "p", "pii", "p.pii")
    t0 = TopicPartition("t", 0)
    listener.consumer = FakeConsumer({t0: 17})

    async def run():
        await listener.on_partitions_assigned({t0})
        if had_committed:  # the renewed producer finds the offset committed (the EndTxn's answer was lost)
            listener.consumer._committed[t0] = 18
        log.clear()
        await listener.commit({t0: [_emit("a")]}, {t0: 18}, _produce)

    asyncio.run(run())
    txn = "p.pii.eos.t.0"
    assert log[:3] == [("begin", txn), ("send", txn, ["a"]), ("abort", txn)]
    assert ("stop", txn) in log and log.count(("init", txn)) == 1  # a new producer with the same id: fences
    if had_committed:
        assert ("commit", txn) not in log  # not sent twice
    else:
        assert log[-4:] == [("begin", txn), ("send", txn, ["a"]), ("offsets", txn, {0: (18, "")}, "p.pii"),
                            ("commit", txn)]
    assert listener.retries == 1 and listener.committed[t0] == (18, "") and listener.transactions == 1
