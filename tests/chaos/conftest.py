"""The chaos suite's harness (issues 13 and 28): the stages as processes on a private broker, Redis and Redis
Cluster (started by tests/chaos/run.sh through deploy/infra.sh), a reader that sees every record the services
write, and the means to kill and restart stage processes, the broker, Redis and a Redis Cluster node.

Two phases, one module each: test_chaos.py, one process per stage on the single Redis (the ``pipeline`` and
``reader`` fixtures below), and test_chaos_scale.py, two processes per stage on the Redis Cluster (its own
fixture, started after the first phase's processes are stopped: 16 processes with models need the memory). Within
a phase the services start once (spaCy and torch load slowly on 2 cores); every test uses its own document ids on
the same topics. The suite runs only with ANONSTREAM_CHAOS=1 (`make test-chaos`); under `make test` it is skipped.
Its figures go to benchmarks/results/reliability.md, one part per phase (``write_results``).
"""
from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.kafka import create_topics
from anonstream.runtime.launch import is_consuming, service_env, start_service, stop_services
from anonstream.runtime.wiring import STAGE_NAMES

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "reliability.md"
SECTIONS = 5  # tests in test_chaos.py, each adds one section of figures
READY_TIMEOUT_S = 240  # a stage process from exec to "consuming" (pii and embed load their models)


def pytest_collection_modifyitems(config, items):
    if os.environ.get("ANONSTREAM_CHAOS") == "1":
        return
    skip = pytest.mark.skip(reason="chaos suite: run it with `make test-chaos` (ANONSTREAM_CHAOS=1)")
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(skip)


_PORTS_GIVEN: set[int] = set()


def _free_port() -> int:
    """A free port below the kernel's ephemeral range. The processes keep their metrics port over kills and restarts;
    a port from the ephemeral range could meanwhile become the local port of some outgoing connection (a Kafka or
    Redis client's), and the restarted process then failed to bind it ("address already in use", seen once in CI)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(max(1024, low - 8000), low)
        if port in _PORTS_GIVEN:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _PORTS_GIVEN.add(port)
        return port
    raise RuntimeError("no free port below the ephemeral range")


class Pipeline:
    """The stage processes: one per stage (``instances=1``, each named by its stage) or ``instances`` per stage
    (named ``<stage>-<i>``, started with ANONSTREAM_INSTANCE=i). Every other method takes such a name. A process
    that exits without ``kill`` is a crash: ``check`` raises."""

    def __init__(self, env: dict[str, str], log_dir: Path, instances: int = 1):
        self.env = env
        self.log_dir = log_dir
        # name -> (stage, ANONSTREAM_INSTANCE or None)
        self.members: dict[str, tuple[str, int | None]] = {
            (stage if instances == 1 else f"{stage}-{i}"): (stage, None if instances == 1 else i)
            for stage in STAGE_NAMES for i in range(instances)}
        self.ports = {name: _free_port() for name in self.members}
        self.processes: dict[str, subprocess.Popen] = {}
        self.starts = {name: 0 for name in self.members}
        self.kills: list[str] = []
        self.crashes: list[str] = []
        self.tolerate_exits = False  # True: ``check`` leaves exits to the caller (a test that restarts them)

    def instances_of(self, stage: str) -> list[str]:
        return [name for name, (s, _) in self.members.items() if s == stage]

    def log_path(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"

    def start(self, name: str) -> None:
        self.starts[name] += 1
        with self.log_path(name).open("ab") as log:
            log.write(f"---- start {self.starts[name]}\n".encode())
        stage, instance = self.members[name]
        self.processes[name] = start_service(stage, self.env, self.log_path(name), metrics_port=self.ports[name],
                                             instance=instance)

    def current_log(self, name: str) -> str:
        """The log of this start of the process only."""
        marker = f"---- start {self.starts[name]}\n"
        return self.log_path(name).read_text(errors="replace").rsplit(marker, 1)[-1]

    async def wait_ready(self, name: str, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Until this start of the process logged that it consumes (its consumer joined)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check()
            if is_consuming(self.current_log(name), self.members[name][0]):
                return
            await asyncio.sleep(0.5)
        raise AssertionError(f"{name} not consuming after {timeout_s:.0f}s:\n{self.tail(name)}")

    def kill(self, name: str) -> None:
        """SIGKILL: no shutdown, state and offsets as they are."""
        process = self.processes[name]
        self.check()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        self.kills.append(name)

    def exited(self) -> list[str]:
        """The processes that exited by themselves (not by ``kill``)."""
        return [name for name, process in self.processes.items()
                if process.poll() is not None and process.returncode != -signal.SIGKILL]

    def check(self) -> None:
        if self.tolerate_exits:
            return
        for name, process in self.processes.items():
            if process.poll() is not None and process.returncode != -signal.SIGKILL:
                self.crashes.append(name)
                raise AssertionError(f"service {name} exited with {process.returncode}:\n{self.tail(name)}")

    def tail(self, name: str, chars: int = 3000) -> str:
        return self.log_path(name).read_text(errors="replace")[-chars:]

    def scrape(self, name: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ports[name]}/metrics", timeout=10) as response:
            return response.read().decode()

    def stop(self) -> None:
        stop_services(self.processes.values())


class Infra:
    """Restarts of the suite's own broker and Redis (by the PIDs deploy/infra.sh recorded)."""

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap
        self.run_dir = Path(os.environ.get("ANONSTREAM_RUN_DIR", ROOT / ".run"))

    def restart_redis(self, down_s: float) -> None:
        script = ROOT / "deploy" / "redis-local.sh"
        subprocess.run(["bash", str(script), "stop"], check=True, capture_output=True, timeout=60)
        time.sleep(down_s)
        subprocess.run(["bash", str(script), "start"], check=True, capture_output=True, timeout=60)

    def restart_redis_cluster_node(self, port: int, down_s: float) -> None:
        """SIGTERM one node of the Redis Cluster (deploy/redis-cluster-local.sh, by its recorded PID; AOF kept),
        ``down_s`` seconds down, then the script's ``start`` brings it back (it starts only the nodes not running)
        and waits for cluster_state:ok on every node."""
        pid = int((self.run_dir / "redis-cluster" / str(port) / "redis.pid").read_text().strip())
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(down_s)
        # a master with slots that was marked failing is trusted again only 2 node timeouts after: allow for it
        subprocess.run(["bash", str(ROOT / "deploy" / "redis-cluster-local.sh"), "start"], check=True,
                       capture_output=True, timeout=120, env={**os.environ, "ANONSTREAM_REDIS_START_TIMEOUT": "60"})

    def stop_kafka(self) -> list[str]:
        """SIGTERM the broker (controlled shutdown, data kept); returns its command line for ``start_kafka``."""
        pid_file = self.run_dir / "kafka" / "node1.pid"
        pid = int(pid_file.read_text().strip())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)
        return [a.decode() for a in argv]

    def start_kafka(self, argv: list[str]) -> None:
        """The same broker again on its data dir; its PID goes back into the pid file deploy/infra.sh reads."""
        kafka_run = self.run_dir / "kafka"
        with (kafka_run / "node1.log").open("ab") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        (kafka_run / "node1.pid").write_text(f"{process.pid}\n")
        subprocess.run([sys.executable, str(ROOT / "deploy" / "wait_for_kafka.py"), self.bootstrap, "1", "120"],
                       check=True, capture_output=True, timeout=150)


@dataclass
class Seen:
    """Every record the reader has seen, per topic, in arrival order: (partition, offset, key, value). A record is one
    position in the log: fetched again at the same offset (the reader's own position reset, e.g. when a metadata
    update during a broker restart gives it a new assignment), it is kept once and counted in ``refetched``. Two
    copies of an output at different offsets are what a duplicate is."""

    records: dict[str, list[tuple[int, int, str, bytes]]] = field(default_factory=dict)
    positions: set[tuple[str, int, int]] = field(default_factory=set)
    refetched: Counter = field(default_factory=Counter)  # topic -> records fetched again at a known offset
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, topic: str, records) -> None:
        with self.lock:
            bucket = self.records.setdefault(topic, [])
            for r in records:
                if (topic, r.partition, r.offset) in self.positions:
                    self.refetched[topic] += 1
                    continue
                self.positions.add((topic, r.partition, r.offset))
                bucket.append((r.partition, r.offset, (r.key or b"").decode("utf-8", "replace"), r.value))

    def of(self, topic: str) -> list[tuple[int, int, str, bytes]]:
        with self.lock:
            return list(self.records.get(topic, ()))


class Reader:
    """A read_committed consumer (what a downstream consumer sees) on the output topics, in a thread."""

    def __init__(self, settings: Settings, wanted: list[topics.Topic]):
        self.settings = settings
        self.names = {topics.name(t, settings.topic_prefix): t for t in wanted}
        self.seen = Seen()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()

    async def _run(self) -> None:
        consumer = AIOKafkaConsumer(*self.names, bootstrap_servers=self.settings.bootstrap, group_id=None,
                                    auto_offset_reset="earliest", isolation_level="read_committed",
                                    max_partition_fetch_bytes=32 << 20, fetch_max_bytes=64 << 20)
        await consumer.start()
        try:
            while not self._stop.is_set():
                for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                    self.seen.add(tp.topic, records)
        finally:
            await consumer.stop()

    def values(self, topic: topics.Topic) -> list[dict]:
        return [orjson.loads(v) for _, _, _, v in self.seen.of(topics.name(topic, self.settings.topic_prefix))]

    def records(self, topic: topics.Topic) -> list[tuple[int, int, str, bytes]]:
        return self.seen.of(topics.name(topic, self.settings.topic_prefix))

    async def wait_for(self, done: Callable[[], bool], timeout_s: float, pipeline: Pipeline, what: str) -> float:
        """Until ``done()``; the services must stay up meanwhile. Returns the seconds waited."""
        started = time.monotonic()
        while not done():
            pipeline.check()
            if time.monotonic() - started > timeout_s:
                raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")
            await asyncio.sleep(1)
        return time.monotonic() - started

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


@asynccontextmanager
async def document_producer(settings: Settings):
    """A started producer for the documents topic: acks=all, idempotent, and patient enough (120 s per request) to
    ride out a broker restart once started (starting needs the broker)."""
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all", enable_idempotence=True,
                                max_request_size=16 << 20, compression_type="gzip", request_timeout_ms=120000)
    await producer.start()
    try:
        yield producer
    finally:
        await producer.stop()


async def produce(settings: Settings, records: list[tuple[bytes | None, bytes | None]], rate_per_s: float = 0) -> None:
    """(key, value) records onto the documents topic in order, acks=all; ``rate_per_s`` > 0 paces them."""
    async with document_producer(settings) as producer:
        name = topics.name(topics.DOCUMENTS, settings.topic_prefix)
        futures = []
        for key, value in records:
            futures.append(await producer.send(name, value, key=key))
            if rate_per_s:
                await asyncio.sleep(1 / rate_per_s)
        await asyncio.gather(*futures)


def person_pseudonyms(chunks: list[dict], mentions: dict[str, list[str]]) -> dict[str, dict[str, set[str]]]:
    """Person -> {doc_id: pseudonyms given to them}, from the pii stage's output chunks. The pii stage rewrites a
    span's text to its surrogate (no raw PII leaves it), so a mention is told by its place: ``mentions`` lists, per
    document, the person of each PERSON mention in text order. A document whose PERSON spans do not line up with
    its list (one more, one fewer) maps to the person ``"?"``, which callers treat as a failure."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    for chunk in chunks:
        if chunk["doc_id"] in mentions:
            spans.setdefault(chunk["doc_id"], []).extend(
                (chunk["chunk_index"], e["start"], e["surrogate"]) for e in chunk["entities"] or ()
                if e["type"] == "PERSON")
    out: dict[str, dict[str, set[str]]] = {}
    for doc_id, found in spans.items():
        people = mentions[doc_id]
        if len(found) != len(people) or not all(s for _, _, s in found):
            out.setdefault("?", {}).setdefault(doc_id, set()).add(f"{len(found)} spans for {len(people)} mentions")
            continue
        for person, (_, _, surrogate) in zip(people, sorted(found)):
            out.setdefault(person, {}).setdefault(doc_id, set()).add(surrogate)
    return out


@dataclass
class Figures:
    """What the suite measured, per test, for benchmarks/results/reliability.md."""

    rows: dict[str, dict[str, object]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def write(self, pipeline: Pipeline) -> None:
        lines = ["## Reliability under crashes, restarts and hostile input (issue 13)", "",
                 "Command: `make test-chaos` (tests/chaos/run.sh: its own Kafka and Redis through deploy/infra.sh, "
                 "every stage as its own process, started once; one run).", "",
                 f"Suite wall time: {time.monotonic() - self.started:.0f} s (1-minute load average at the end: "
                 f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores). Stage process starts: "
                 + ", ".join(f"{k} {v}" for k, v in pipeline.starts.items())
                 + f". Crashes (exits not caused by the test): {len(pipeline.crashes)}.", ""]
        for test, figures in self.rows.items():
            lines += [f"## {test}", "", "| figure | value |", "|---|---|"]
            lines += [f"| {k} | {v} |" for k, v in figures.items()]
            lines.append("")
        write_results("\n".join(lines), first=True)


SCALE_HEADING = "## Chaos at scale"  # the multi-instance phase's part of reliability.md starts with it


def write_results(text: str, first: bool) -> None:
    """reliability.md holds two parts: the one-instance suite's (``first``) and, from ``SCALE_HEADING`` on, the
    multi-instance phase's (test_chaos_scale.py). Each run rewrites its own part and keeps the other's."""
    old = RESULTS.read_text() if RESULTS.exists() else ""
    head, sep, tail = old.partition(SCALE_HEADING)
    if first:
        RESULTS.write_text(text.rstrip() + "\n" + (f"\n{sep}{tail}" if sep else ""))
    else:
        RESULTS.write_text((head.rstrip() + "\n\n" if head.strip() else "") + text.rstrip() + "\n")


@pytest.fixture(scope="session")
def chaos_env(kafka_bootstrap: str, redis_url: str) -> dict[str, str]:
    return service_env(kafka_bootstrap, redis_url, "chaos", {
        "ANONSTREAM_REFIT_INTERVAL_S": "10",
        "ANONSTREAM_AUDIT_UTILITY": "0",  # the audit's re-embedding is not what this suite tests
        "ANONSTREAM_LOG_LEVEL": "INFO",
    })


@pytest.fixture(scope="session")
def settings(chaos_env) -> Settings:
    return Settings(bootstrap=chaos_env["ANONSTREAM_BOOTSTRAP"], topic_prefix=chaos_env["ANONSTREAM_TOPIC_PREFIX"])


@pytest.fixture(scope="session")
def figures():
    return Figures()


@pytest.fixture(scope="module")  # stopped before the multi-instance phase (test_chaos_scale.py) starts its own
def pipeline(chaos_env, settings, tmp_path_factory, figures):
    asyncio.run(create_topics(settings))
    pipeline = Pipeline(chaos_env, tmp_path_factory.mktemp("chaos-logs"))
    for name in STAGE_NAMES:
        pipeline.start(name)

    async def all_ready():
        for name in STAGE_NAMES:
            await pipeline.wait_ready(name)

    asyncio.run(all_ready())
    yield pipeline
    pipeline.stop()
    if len(figures.rows) == SECTIONS:  # a partial run (-k, a failure) leaves the last full run's figures
        figures.write(pipeline)


@pytest.fixture(scope="module")
def reader(settings, pipeline):
    reader = Reader(settings, [topics.SANITIZED, topics.DEAD_LETTER, topics.CHUNKS_PII, topics.CHUNKS_SANITIZED])
    yield reader
    reader.close()


@pytest.fixture(scope="session")
def infra(kafka_bootstrap) -> Infra:
    return Infra(kafka_bootstrap)
