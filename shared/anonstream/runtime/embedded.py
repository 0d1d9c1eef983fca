"""The embedded runner: every stage in one process, no broker, no Redis.

Records move between stages as the same bytes the services exchange on Kafka and pass through the
same ``StageDriver`` (decode, validate, process, validate outputs, dead-letter), so the embedded
run and the service set share one code path; only the transport and the stores differ
(in-process stores here, Redis in the services). A record one stage emitted was validated against its
topic's schema on the way out; the stages that consume it here skip the same schema walk on the way in
(``InputMessage.validated``), input documents are validated as in the services.

``background``: one stage (``anonstream run``: embed) handles its batches on a worker thread, one batch in
flight, so that it overlaps the stages before it on the next batch and the stages after it on the previous
one, as the services overlap in their processes. Its outputs flow on when its next batch arrives, or at
``flush``/``finish``; every stage still sees its input batches in the same order. ``anonstream run`` turns it
on by default (``ANONSTREAM_RUN_OVERLAP``): since ONNX Runtime's idle threads sleep instead of spinning and
numpy's BLAS runs on one thread, the overlap is faster by wall time than one stage at a time on 2 cores, at
more CPU time per document (benchmarks/results/profile.md).
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from .. import serde, topics
from ..config import Settings
from ..stages.base import Emit, InputMessage, Stage, StageDriver
from ..swap.summary import summarize
from ..topics import Topic
from .wiring import blas_limit, build_stages, in_memory_stores

log = logging.getLogger(__name__)


@dataclass
class RunReport:
    documents_in: int = 0
    documents_out: int = 0
    dead_letters_by_stage: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    model_updates: list[dict[str, Any]] = field(default_factory=list)
    swap_log: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    audit: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "documents_in": self.documents_in,
            "documents_out": self.documents_out,
            "dead_letters_by_stage": dict(self.dead_letters_by_stage),
            "model_updates": self.model_updates,
            "seconds": round(self.seconds, 3),
            "documents_per_second": round(self.documents_in / self.seconds, 3) if self.seconds else None,
            "swap": summarize(self.swap_log),
            "audit": self.audit,
        }


class EmbeddedPipeline:
    """Routes each stage's outputs to the stages that consume that topic, batch by batch."""

    def __init__(self, stages: list[Stage], prefix: str, background: str | None = None):
        """``background``: the name of the stage whose batches run on a worker thread (see the module)."""
        self.prefix = prefix
        self.drivers = [StageDriver(stage, prefix) for stage in stages]
        self.consumers: dict[str, list[StageDriver]] = defaultdict(list)
        for driver in self.drivers:
            for name in driver.input_topic_names():
                self.consumers[name].append(driver)
        self._offsets: dict[str, int] = defaultdict(int)
        self._background = next((d for d in self.drivers if d.stage.name == background), None)
        if background is not None and self._background is None:
            raise ValueError(f"no stage {background!r} to run in the background")
        self._worker = ThreadPoolExecutor(1, thread_name_prefix=f"anonstream-{background}") if background else None
        self._in_flight: Future | None = None

    def close(self) -> None:
        """Stop the background worker (after ``finish``, which flushes it)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)

    def _collect(self) -> list[Emit]:
        """Wait for the background stage's batch in flight; its outputs (none when nothing is in flight)."""
        if self._in_flight is None:
            return []
        handled, self._in_flight = self._in_flight.result(), None
        outputs = handled.emits + handled.dead_letters
        self._background.stage.after_produced(outputs)
        return outputs

    def flush(self) -> list[Emit]:
        """Finish the background stage's batch in flight and flow its outputs through the later stages."""
        outputs = self._collect()
        return outputs + self._flow(self._as_messages(outputs)) if outputs else []

    def _message(self, topic: Topic, key: str, value: bytes, validated: bool = False) -> InputMessage:
        name = topics.name(topic, self.prefix)
        offset = self._offsets[name]
        self._offsets[name] += 1
        return InputMessage(name, 0, offset, key.encode(), value, validated=validated)

    def run_batch(self, raw_documents: list[tuple[str, bytes]]) -> list[Emit]:
        """Push raw input records (key, bytes) through every stage; return every emit made."""
        pending: dict[str, list[InputMessage]] = defaultdict(list)
        pending[topics.name(topics.DOCUMENTS, self.prefix)] = [
            self._message(topics.DOCUMENTS, key, value) for key, value in raw_documents
        ]
        return self._flow(pending)

    def run_records(self, emits: Iterable[Emit]) -> list[Emit]:
        """Push records another pipeline emitted (e.g. clustered chunks kept from an earlier run, replayed
        into a swap/sink/audit pipeline by the release planner) through the stages consuming their topics."""
        emitted = self._flow(self._as_messages(emits, ours=False))
        return emitted + self.flush()

    def finish(self) -> list[Emit]:
        """End of input: drain held records stage by stage (in pipeline order), flowing them on."""
        emitted: list[Emit] = self.flush()
        for driver in self.drivers:
            drained = driver.drain()
            driver.stage.after_produced(drained)
            emitted.extend(drained)
            emitted.extend(self._flow(self._as_messages(drained)))
            emitted.extend(self.flush())
        return emitted

    def tick(self, now: float) -> list[Emit]:
        emitted: list[Emit] = []
        for driver in self.drivers:
            ticked = driver.tick(now)
            driver.stage.after_produced(ticked)
            emitted.extend(ticked)
            emitted.extend(self._flow(self._as_messages(ticked)))
        return emitted

    def _as_messages(self, emits: Iterable[Emit], ours: bool = True) -> dict[str, list[InputMessage]]:
        """``ours``: the emits come from this pipeline's drivers, which validated every one of them against its
        topic's schema except dead letters (``StageDriver.handle``, ``_checked``)."""
        pending: dict[str, list[InputMessage]] = defaultdict(list)
        for emit in emits:
            name = topics.name(emit.topic, self.prefix)
            if name in self.consumers:
                validated = ours and emit.topic is not topics.DEAD_LETTER
                pending[name].append(self._message(emit.topic, emit.key, serde.dumps(emit.value), validated))
        return pending

    def _flow(self, pending: dict[str, list[InputMessage]]) -> list[Emit]:
        """Run the drivers in pipeline order until no driver has input waiting. Every consumer
        of a topic gets every message of it (like separate consumer groups)."""
        queues: dict[int, list[InputMessage]] = defaultdict(list)

        def enqueue(by_topic: dict[str, list[InputMessage]]) -> None:
            for name, messages in by_topic.items():
                for driver in self.consumers.get(name, []):
                    queues[id(driver)].extend(messages)

        enqueue(pending)
        emitted: list[Emit] = []
        while any(queues.values()):
            for driver in self.drivers:
                batch, queues[id(driver)] = queues[id(driver)], []
                if not batch:
                    continue
                if driver is self._background:  # the previous batch's outputs flow on, this one starts
                    outputs = self._collect()
                    self._in_flight = self._worker.submit(driver.handle, batch)
                else:
                    handled = driver.handle(batch)
                    outputs = handled.emits + handled.dead_letters
                    driver.stage.after_produced(outputs)
                emitted.extend(outputs)
                enqueue(self._as_messages(outputs))
        return emitted


def read_lines(handle: IO[bytes]) -> Iterator[tuple[str, bytes]]:
    """Input lines as (key, raw bytes); the key is the line number (the document id is not
    trusted before validation)."""
    for number, line in enumerate(handle, start=1):
        line = line.rstrip(b"\r\n")
        if line.strip():
            yield f"line-{number}", line


def run(input_path: Path, output_path: Path, report_path: Path | None = None,
        dead_letter_path: Path | None = None, settings: Settings | None = None,
        batch_documents: int = 16, progress: bool = True, swap_log_path: Path | None = None) -> RunReport:
    """Run the whole pipeline on a JSONL file of documents; write sanitized documents as JSONL and, with
    ``swap_log_path``, the swap log (old and new values: as restricted as the input) as JSONL."""
    settings = settings or Settings()
    blas_limit(settings.blas_threads)
    stores = in_memory_stores(settings)
    stages = build_stages(settings, stores)
    pipeline = EmbeddedPipeline(stages, settings.topic_prefix, background="embed" if settings.run_overlap else None)
    dead_letter_path = dead_letter_path or output_path.with_suffix(".dead-letter.jsonl")
    report = RunReport()
    started = time.perf_counter()
    total = sum(1 for line in input_path.open("rb") if line.strip())
    with input_path.open("rb") as source, output_path.open("wb") as out, dead_letter_path.open("wb") as dlq:
        bar = _progress(total, progress)

        def write(emits: list[Emit]) -> None:
            for emit in emits:
                if emit.topic is topics.SANITIZED:
                    out.write(serde.dumps(emit.value) + b"\n")
                    report.documents_out += 1
                elif emit.topic is topics.DEAD_LETTER:
                    dlq.write(serde.dumps(emit.value) + b"\n")
                    report.dead_letters_by_stage[emit.value["stage"]] += 1
                elif emit.topic is topics.MODEL_UPDATES:
                    report.model_updates.append(emit.value)
                elif emit.topic is topics.SWAP_LOG:
                    report.swap_log.append(emit.value)

        batch: list[tuple[str, bytes]] = []
        for record in read_lines(source):
            batch.append(record)
            if len(batch) == batch_documents:
                write(pipeline.run_batch(batch) + pipeline.tick(time.time()))
                report.documents_in += len(batch)
                bar.update(len(batch))
                batch = []
        if batch:
            write(pipeline.run_batch(batch))
            report.documents_in += len(batch)
            bar.update(len(batch))
        write(pipeline.finish())
        pipeline.close()
        bar.close()
    report.seconds = time.perf_counter() - started
    if swap_log_path is not None:
        swap_log_path.write_bytes(b"".join(serde.dumps(record) + b"\n" for record in report.swap_log))
    report.audit = next(s for s in stages if s.name == "audit").report()
    if report_path is not None:
        report_path.write_bytes(serde.dumps(report.as_dict()))
    return report


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", disable=not enabled or total < 20, desc="anonstream")
