"""The chaos suite's harness (issue 13): every stage as its own process on a private broker and Redis
(started by tests/chaos/run.sh through deploy/infra.sh), a reader that sees every record the services
write, and the means to kill and restart stages, the broker and Redis.

The services start once for the whole suite (spaCy and torch load slowly on 2 cores); every test uses
its own document ids on the same topics. The suite runs only with ANONSTREAM_CHAOS=1 (`make test-chaos`);
under `make test` it is skipped. Its figures go to benchmarks/results/reliability.md at the end.
"""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pipeline:
    """The eight stage processes. A process that exits without ``kill`` is a crash: ``check`` raises."""

    def __init__(self, env: dict[str, str], log_dir: Path):
        self.env = env
        self.log_dir = log_dir
        self.ports = {name: _free_port() for name in STAGE_NAMES}
        self.processes: dict[str, subprocess.Popen] = {}
        self.starts = {name: 0 for name in STAGE_NAMES}
        self.kills: list[str] = []
        self.crashes: list[str] = []

    def log_path(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"

    def start(self, name: str) -> None:
        self.starts[name] += 1
        with self.log_path(name).open("ab") as log:
            log.write(f"---- start {self.starts[name]}\n".encode())
        self.processes[name] = start_service(name, self.env, self.log_path(name), metrics_port=self.ports[name])

    async def wait_ready(self, name: str, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Until this start of the stage logged that it consumes (its consumer joined)."""
        marker = f"---- start {self.starts[name]}\n"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check()
            text = self.log_path(name).read_text(errors="replace")
            if is_consuming(text.rsplit(marker, 1)[-1], name):
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

    def check(self) -> None:
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
    """Every record the reader has seen, per topic, in arrival order: (partition, offset, key, value)."""

    records: dict[str, list[tuple[int, int, str, bytes]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

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
                    with self.seen.lock:
                        bucket = self.seen.records.setdefault(tp.topic, [])
                        bucket.extend((r.partition, r.offset, (r.key or b"").decode("utf-8", "replace"), r.value)
                                      for r in records)
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


async def produce(settings: Settings, records: list[tuple[bytes | None, bytes | None]], rate_per_s: float = 0) -> None:
    """(key, value) records onto the documents topic in order, acks=all; ``rate_per_s`` > 0 paces them."""
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all", enable_idempotence=True,
                                max_request_size=16 << 20, compression_type="gzip", request_timeout_ms=120000)
    await producer.start()
    try:
        name = topics.name(topics.DOCUMENTS, settings.topic_prefix)
        futures = []
        for key, value in records:
            futures.append(await producer.send(name, value, key=key))
            if rate_per_s:
                await asyncio.sleep(1 / rate_per_s)
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


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
        RESULTS.write_text("\n".join(lines))


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


@pytest.fixture(scope="session")
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


@pytest.fixture(scope="session")
def reader(settings, pipeline):
    reader = Reader(settings, [topics.SANITIZED, topics.DEAD_LETTER, topics.CHUNKS_PII, topics.CHUNKS_SANITIZED])
    yield reader
    reader.close()


@pytest.fixture(scope="session")
def infra(kafka_bootstrap) -> Infra:
    return Infra(kafka_bootstrap)
