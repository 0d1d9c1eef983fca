"""The stage contract and the driver that both shells (Kafka service, embedded runner) call.

A stage core is a plain class: records in, records out, no Kafka, no Redis (stateful stages get
their state through small store interfaces). ``StageDriver.handle`` is the one code path from raw
input bytes to validated output records and dead letters; the Kafka service and the embedded runner
differ only in where the bytes come from and where the results go.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence

from .. import contracts, serde, topics
from ..records import Chunk
from ..stores.base import StoreUnavailable
from ..topics import Topic

log = logging.getLogger(__name__)

DEAD_LETTER_MAX_ORIGINAL = 1 << 20  # bytes of the original kept on a dead letter (base64: 1.4 MB)


@dataclass(slots=True)
class Emit:
    """One output record: where it goes, its idempotency key, the key that picks its partition
    (the document id, so all records of a document stay in order on one partition), its value."""

    topic: Topic
    key: str
    partition_key: str
    value: dict[str, Any]


@dataclass(slots=True)
class InputMessage:
    """A raw input record. ``ingested_at_ms``: when its document entered the pipeline (epoch ms), as the
    service shell knows it from the record's headers (``runtime/service.py``); None in the embedded runner.
    ``validated``: the bytes are those of a value a driver in this process emitted and validated against this
    topic's schema (the embedded runner's records between stages), so the schema is not walked again; records
    from a broker or a file never are."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    ingested_at_ms: int | None = None
    validated: bool = False


@dataclass(slots=True)
class Handled:
    emits: list[Emit] = field(default_factory=list)
    dead_letters: list[Emit] = field(default_factory=list)
    # doc_id -> ingested_at_ms of the accepted inputs that carried one (for the end-to-end latency)
    ingested_at: dict[str, int] = field(default_factory=dict)
    # (topic, partition) of the input record each output came from, in the order of ``emits`` and of
    # ``dead_letters``: the service shell commits each input partition's outputs with that partition's offset
    emit_sources: list[tuple[str, int]] = field(default_factory=list)
    dead_letter_sources: list[tuple[str, int]] = field(default_factory=list)

    def by_source(self) -> dict[tuple[str, int], list[Emit]]:
        """Outputs and dead letters per input (topic, partition), each in its order of production."""
        grouped: dict[tuple[str, int], list[Emit]] = {}
        for emit, source in zip(self.emits, self.emit_sources):
            grouped.setdefault(source, []).append(emit)
        for emit, source in zip(self.dead_letters, self.dead_letter_sources):
            grouped.setdefault(source, []).append(emit)
        return grouped


class Stage(ABC):
    """A stage core. ``process`` returns, per input record, its outputs or the exception that
    rejected it (one bad record never takes its batch down)."""

    name: str
    version: str
    inputs: tuple[Topic, ...]
    # One consumer by design (the audit with an in-memory monitor on): the service shell holds a lease while it
    # consumes, a second instance waits as a standby until the lease is free, and an instance that loses its lease
    # stops (runtime/service.py).
    single_instance: bool = False
    # Set by the service shell when it commits this stage's outputs in Kafka transactions (runtime/transactions.py):
    # it then also calls ``process_sourced`` with sources, ``assigned`` and ``bound_tick``.
    exactly_once: bool = False

    def decode(self, topic: Topic, obj: dict[str, Any]) -> Any:
        """Turn a validated wire dict into the core's input type (default: the dict itself)."""
        return obj

    @abstractmethod
    def process(self, items: Sequence[tuple[Topic, Any]]) -> list[list[Emit] | Exception]:
        """Process a batch; one entry per input item, in order."""

    def process_sourced(self, items: Sequence[tuple[Topic, Any]],
                        sources: Sequence[tuple[str, int, int]] | None) -> list[list[Emit] | Exception]:
        """``process`` with the (topic, partition, offset) of each item's input record. Default: ``process``."""
        return self.process(items)

    def tick(self, now: float) -> list[Emit]:
        """Time-driven outputs (expired waits, periodic snapshots). Default: none."""
        return []

    def bound_tick(self, now: float, owned: dict[tuple[str, int], int]) -> dict[tuple[str, int], list[tuple[list[Emit], str]]]:
        """Exactly-once: time-driven outputs bound to a transaction of an owned input partition ((topic, partition)
        → its committed offset): per partition, a list of (outputs, metadata), each committed in one transaction
        with the partition's committed offset unchanged and that metadata (runtime/transactions.py). Default: none."""
        return {}

    def assigned(self, committed: dict[tuple[str, int], tuple[int | None, str]]
                 ) -> dict[tuple[str, int], list[tuple[list[Emit], str]]]:
        """Exactly-once: input partitions just assigned ((topic, partition) → committed offset and its metadata,
        read after the previous owner was fenced), before this instance commits anything for them; returns
        outputs to commit as ``bound_tick`` does. Default: none."""
        return {}

    def drain(self) -> list[Emit]:
        """End of input (embedded runner): release whatever is still held. Default: none."""
        return []

    def metrics(self) -> dict[str, Any]:
        """Counters and gauges for the service's metrics (numbers only, never text)."""
        return {}

    def start(self) -> None:
        """The service loop is about to start (e.g. refit joins its leader election). Default: nothing."""

    def close(self) -> None:
        """The service is stopping (e.g. refit releases its lease). Default: nothing."""

    def after_produced(self, emits: Sequence[Emit]) -> None:
        """Called by the shell once ``emits`` are acknowledged by the broker and before the input
        offsets are committed: the place for state changes that must not precede the produce
        (e.g. forgetting a reassembled document). Default: nothing."""


class ChunkStage(Stage):
    """A stage whose inputs are chunk records."""

    def decode(self, topic: Topic, obj: dict[str, Any]) -> Chunk:
        return Chunk.from_wire(obj)


def dead_letter(stage: Stage, message: InputMessage, error: BaseException) -> Emit:
    """A dead-letter record: original bytes plus where they came from and why they failed.

    Only the exception class and message are kept; messages of our own errors never quote input
    (contracts.RecordInvalid names places, not values); foreign exception messages are cut short.
    An original longer than ``DEAD_LETTER_MAX_ORIGINAL`` bytes keeps only its head, with the whole
    record's size and SHA-256 beside it: a 10 MB record (gzip lets the broker take it) would otherwise
    make a dead letter the producer refuses, and the service would stop on it.
    """
    text = str(error)
    if not isinstance(error, contracts.RecordInvalid):
        text = text[:300]
    original = message.value or b""
    value = {
        "stage": stage.name,
        "stage_version": stage.version,
        "error_class": type(error).__name__,
        "error_message": text,
        "source": {
            "topic": message.topic,
            "partition": message.partition,
            "offset": message.offset,
            "key_b64": None if message.key is None else base64.b64encode(message.key).decode(),
        },
        "original_b64": base64.b64encode(original[:DEAD_LETTER_MAX_ORIGINAL]).decode(),
        "failed_at": time.time(),
    }
    if len(original) > DEAD_LETTER_MAX_ORIGINAL:
        value["original_size"] = len(original)
        value["original_sha256"] = hashlib.sha256(original).hexdigest()
    key = f"{message.topic}|{message.partition}|{message.offset}|{stage.name}@{stage.version}"
    return Emit(topics.DEAD_LETTER, key, key, value)


class StageDriver:
    """Decode → validate → process → validate outputs, for a batch of raw messages."""

    def __init__(self, stage: Stage, topic_prefix: str):
        self.stage = stage
        self._by_name = {topics.name(t, topic_prefix): t for t in stage.inputs}

    def input_topic_names(self) -> list[str]:
        return list(self._by_name)

    def handle(self, messages: Sequence[InputMessage]) -> Handled:
        """Raises ``StoreUnavailable`` (the batch is not the records' fault: the shell reads it again
        later) instead of dead-lettering valid records while Redis is down."""
        out = Handled()
        accepted: list[tuple[InputMessage, Topic, Any]] = []
        for message in messages:
            try:
                topic = self._by_name[message.topic]
                if message.value is None:
                    raise contracts.RecordInvalid("record has no value (tombstone)")
                try:
                    obj = serde.loads(message.value)
                except ValueError as exc:  # orjson.JSONDecodeError is a ValueError
                    raise contracts.RecordInvalid(f"not JSON: {exc.__class__.__name__}") from None
                contracts.check_depth(obj)
                if not message.validated:
                    contracts.validate(topic.schema, obj)
                accepted.append((message, topic, self.stage.decode(topic, obj)))
                if message.ingested_at_ms is not None and isinstance(obj.get("doc_id"), str):
                    out.ingested_at[obj["doc_id"]] = message.ingested_at_ms
            except Exception as exc:  # noqa: BLE001 - every failure becomes a dead letter
                out.dead_letters.append(self._reject(message, exc))
                out.dead_letter_sources.append((message.topic, message.partition))
        if not accepted:
            return out
        results = self._process(accepted)
        for (message, _, _), result in zip(accepted, results):
            if isinstance(result, StoreUnavailable):
                raise result
            if isinstance(result, Exception):
                out.dead_letters.append(self._reject(message, result))
                out.dead_letter_sources.append((message.topic, message.partition))
                continue
            try:
                for emit in result:
                    contracts.validate(emit.topic.schema, emit.value)
            except contracts.RecordInvalid as exc:
                out.dead_letters.append(self._reject(message, exc))
                out.dead_letter_sources.append((message.topic, message.partition))
                continue
            out.emits.extend(result)
            out.emit_sources.extend([(message.topic, message.partition)] * len(result))
        return out

    def tick(self, now: float) -> list[Emit]:
        return self._checked(self.stage.tick(now))

    def bound_tick(self, now: float, owned: dict[tuple[str, int], int]):
        return self._checked_bound(self.stage.bound_tick(now, owned))

    def assigned(self, committed: dict[tuple[str, int], tuple[int | None, str]]):
        return self._checked_bound(self.stage.assigned(committed))

    @classmethod
    def _checked_bound(cls, bound: dict[tuple[str, int], list[tuple[list[Emit], str]]]):
        for transactions in bound.values():
            for emits, _ in transactions:
                cls._checked(emits)
        return bound

    def drain(self) -> list[Emit]:
        return self._checked(self.stage.drain())

    @staticmethod
    def _checked(emits: list[Emit]) -> list[Emit]:
        """Outputs not tied to an input record: an invalid one is a bug, so it raises."""
        for emit in emits:
            contracts.validate(emit.topic.schema, emit.value)
        return emits

    def _process(self, accepted: list[tuple[InputMessage, Topic, Any]]) -> list[list[Emit] | Exception]:
        items = [(topic, item) for _, topic, item in accepted]
        sources = [(m.topic, m.partition, m.offset) for m, _, _ in accepted]
        try:
            return self.stage.process_sourced(items, sources)
        except StoreUnavailable:
            raise
        except Exception:  # noqa: BLE001 - isolate the record that broke the batch
            log.warning("stage %s: batch of %d failed, retrying one by one", self.stage.name, len(items))
            results: list[list[Emit] | Exception] = []
            for item, source in zip(items, sources):
                try:
                    results.extend(self.stage.process_sourced([item], [source]))
                except StoreUnavailable:
                    raise
                except Exception as exc:  # noqa: BLE001
                    results.append(exc)
            return results

    def _reject(self, message: InputMessage, error: Exception) -> Emit:
        log.warning(
            "stage %s: dead-lettered %s[%d]@%d: %s",
            self.stage.name, message.topic, message.partition, message.offset, type(error).__name__,
        )
        return dead_letter(self.stage, message, error)
