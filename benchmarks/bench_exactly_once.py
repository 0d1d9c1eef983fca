"""What exactly-once costs (issue 28 item 3): the same stage services at-least-once and exactly-once
(``ANONSTREAM_PROCESSING_GUARANTEE``, runtime/transactions.py), taking turns in one run on one broker.

Two measurements, each a fresh topic prefix per run, the modes alternating run by run (``--rounds``):
  * the pipeline's head, ingest and pii as two services (pii, spaCy + the recognizers, is the pipeline's most
    expensive stage per record, so this is what the stage a deployment scales by pays): the TAB train documents
    produced first, then both services started; throughput = documents / (last - first ``chunks-pii`` record's
    broker timestamp), read with ``read_committed``;
  * ingest alone on many small batches' worth of documents (the TAB documents repeated under new ids): a stage
    whose own work is small, so the transactions' fixed cost per batch is most visible - the worst case.
In exactly-once mode every batch is one transaction per input partition (begin, produce, send offsets, commit) and
every consumer reads ``read_committed`` (in both modes: the services always do).

    .venv/bin/python benchmarks/bench_exactly_once.py [--documents 100] [--ingest-documents 3000] [--rounds 3]

Uses the broker and Redis at ANONSTREAM_BOOTSTRAP / ANONSTREAM_REDIS_URL (``deploy/infra.sh up``); writes
benchmarks/results/exactly_once.md.
"""
from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

import common
from anonstream import topics
from anonstream.config import Settings
from anonstream.records import Document
from anonstream.runtime import launch
from anonstream.runtime.kafka import create_topics
from anonstream.stages.ingest import IngestStage

MODES = ("at-least-once", "exactly-once")
OUT = common.RESULTS_DIR / "exactly_once.md"


def chunk_count(docs: list[dict]) -> int:
    stage = IngestStage()
    return sum(len(stage.chunks(Document.from_wire(d))) for d in docs)


async def produce(settings: Settings, docs: list[dict]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all", linger_ms=5)
    await producer.start()
    try:
        name = topics.name(topics.DOCUMENTS, settings.topic_prefix)
        for doc in docs:
            await producer.send(name, orjson.dumps(doc), key=doc["doc_id"].encode())
        await producer.flush()
    finally:
        await producer.stop()


async def read_timestamps(settings: Settings, topic: topics.Topic, until: int, timeout_s: float) -> list[int]:
    """Broker timestamps (ms) of the first ``until`` records of ``topic``, read_committed."""
    consumer = AIOKafkaConsumer(topics.name(topic, settings.topic_prefix),
                                bootstrap_servers=settings.bootstrap, group_id=None, auto_offset_reset="earliest",
                                isolation_level="read_committed", max_partition_fetch_bytes=8 << 20)
    await consumer.start()
    stamps: list[int] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(stamps) < until and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                stamps.extend(r.timestamp for r in records)
    finally:
        await consumer.stop()
    if len(stamps) < until:
        raise RuntimeError(f"{len(stamps)} of {until} records on {topic.suffix} after {timeout_s:.0f} s")
    return sorted(stamps)


def run_once(mode: str, stages: list[str], docs: list[dict], output: topics.Topic, expected: int,
             env_base: dict[str, str], logs: Path, timeout_s: float) -> float:
    """Documents/s of one run: the services of ``stages`` in ``mode`` over ``docs`` produced up front."""
    env = launch.service_env(env_base["ANONSTREAM_BOOTSTRAP"], env_base["ANONSTREAM_REDIS_URL"], "eosbench",
                             {"ANONSTREAM_PROCESSING_GUARANTEE": mode})
    settings = Settings(bootstrap=env["ANONSTREAM_BOOTSTRAP"], topic_prefix=env["ANONSTREAM_TOPIC_PREFIX"])
    asyncio.run(create_topics(settings))
    asyncio.run(produce(settings, docs))
    processes = [launch.start_service(s, env, logs / f"{env['ANONSTREAM_TOPIC_PREFIX']}-{s}.log") for s in stages]
    try:
        stamps = asyncio.run(read_timestamps(settings, output, expected, timeout_s))
        for p in processes:
            if p.poll() is not None:
                raise RuntimeError(f"a service stopped (exit {p.returncode}); logs in {logs}")
    finally:
        launch.stop_services(processes)
    return len(docs) / max((stamps[-1] - stamps[0]) / 1000, 1e-3)


def measure(name: str, stages: list[str], docs: list[dict], output: topics.Topic, expected: int, rounds: int,
            env: dict[str, str], logs: Path, timeout_s: float) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {m: [] for m in MODES}
    for r in range(rounds):
        order = MODES if r % 2 == 0 else MODES[::-1]  # alternate who goes first
        for mode in order:
            rate = run_once(mode, stages, docs, output, expected, env, logs, timeout_s)
            rates[mode].append(rate)
            common.log(f"{name} round {r + 1}/{rounds} {mode}: {rate:.1f} documents/s")
    return rates


def main() -> int:
    parser = common.arg_parser(__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, help="TAB train documents through ingest + pii (default 100, quick 6)")
    parser.add_argument("--ingest-documents", type=int, help="documents through ingest alone (default 3000, quick 600)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n_pii = args.documents or (6 if args.quick else 100)
    n_ingest = args.ingest_documents or (600 if args.quick else 3000)
    env = {"ANONSTREAM_BOOTSTRAP": os.environ.get("ANONSTREAM_BOOTSTRAP", "127.0.0.1:19092"),
           "ANONSTREAM_REDIS_URL": os.environ.get("ANONSTREAM_REDIS_URL", "redis://127.0.0.1:16379/0")}
    sample = common.read_documents()
    pii_docs = [{**d, "doc_id": f"p{i}-{d['doc_id']}"} for i, d in enumerate(sample[:n_pii])]
    ingest_docs = [{**sample[i % len(sample)], "doc_id": f"i{i}"} for i in range(n_ingest)]
    machine = common.machine_info()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-eos-") as tmp:
        logs = Path(tmp)
        pipeline = measure("ingest+pii", ["ingest", "pii"], pii_docs, topics.CHUNKS_PII, chunk_count(pii_docs),
                           args.rounds, env, logs, timeout_s=900)
        ingest = measure("ingest", ["ingest"], ingest_docs, topics.CHUNKS, chunk_count(ingest_docs),
                         args.rounds, env, logs, timeout_s=600)
    elapsed = time.monotonic() - started
    words_pii = sum(len(d["text"].split()) for d in pii_docs)

    def row(name: str, rates: dict[str, list[float]], docs: int) -> list[str]:
        alo, eos = rates["at-least-once"], rates["exactly-once"]
        ratio = [e / a for e, a in zip(eos, alo)]
        return [name, str(docs), common.spread(alo, "{:.1f}"), common.spread(eos, "{:.1f}"),
                common.spread(ratio, "{:.2f}")]

    rows = [row("ingest + pii (the pipeline's head; pii bounds it)", pipeline, n_pii),
            row("ingest alone (little work per record)", ingest, n_ingest)]
    lines = [
        "# Exactly-once vs at-least-once (issue 28 item 3)",
        "",
        f"`{common.command_line()}` — {common.now_utc()}, {elapsed / 60:.1f} min; {common.git_state()}",
        "",
        "Same services, same broker, one run: the modes take turns run by run (a fresh topic prefix each run, the "
        "documents produced before the services start). Throughput = documents / (last - first output record's "
        "broker timestamp), read with `read_committed`. Exactly-once: one Kafka transaction per input partition "
        "and batch (`runtime/transactions.py`); at-least-once: produce, wait for acks, commit offsets. "
        f"ingest + pii: the first {n_pii} TAB train documents ({words_pii:,} words); ingest alone: the 100 TAB "
        f"train documents repeated to {n_ingest}. Median (min–max) of {args.rounds} rounds.",
        "",
        "| services | documents | at-least-once, documents/s | exactly-once, documents/s "
        "| exactly-once / at-least-once |",
        "| --- | ---: | ---: | ---: | ---: |",
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
        "The ratio is per round (the two modes of one round ran next to each other); on a shared machine compare "
        "the spread between rounds before reading a difference.",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in machine.items()) + ".",
        "",
    ]
    OUT.write_text("\n".join(lines))
    common.log(f"wrote {common.rel(OUT)}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
