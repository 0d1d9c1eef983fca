"""The pipeline on Kafka, every stage as its own service process, measured; Presidio and ``anonstream run``
side by side in the same run; scaling with worker processes; refit time against reservoir size and K
(issue 13, items 6 and 8).

The bench starts its own broker and Redis through ``deploy/infra.sh`` (ports and run dir from the usual
``ANONSTREAM_*`` variables; an infrastructure already up on them is reused and left running), creates the
topics, starts ``anonstream service <stage>`` for every stage (``runtime/launch.py``, as the integration
tests and the chaos suite do) and stops everything on exit, failures included.

Phases, in order, on the same service processes (every phase has its own document ids):
  * warm-up: a few documents, until the refit stage has published a model and they come out;
  * saturation: all documents produced at once; documents/s and words/s = inputs / (last sanitized
    document read at the output topic - first produce), on the 127 unseen TAB dev texts and on short
    snippets (single sentences cut from the TAB train sample);
  * latency: an open-loop producer (``kafka_model.send_schedule``) at half the saturation rate; latency =
    time the sanitized document is read (read_committed) minus its produce time. The swap stage holds
    chunks up to the wait bound for a partner; its wait is measured per document from the record
    timestamps of ``chunks.clustered`` (into swap) and ``chunks.sanitized`` (out of swap), see
    ``kafka_model.swap_wait``, and reported apart; the services run with the wait bound ``--swap-wait-s``
    (default 2 s instead of the release default 30 s, so saturation is not dominated by the last chunks'
    wait; the swap log's actions show what that costs: more fallbacks, fewer swaps);
  * scaling: a second worker process of pii and embed joins their groups; saturation again on the same texts;
  * CPU seconds (``/proc/<pid>/stat``) per service process, the broker and Redis, per phase, and peak RSS
    (``VmHWM``) per process.
Then, with the services stopped: Presidio analyze+anonymize (same spaCy model) and ``anonstream run`` (the
embedded runner, a fresh child process per run, time from models loaded to the last output) on the same
documents, taking turns; and the refit core (``stages.cluster.fit_checked``) timed directly on embeddings
read from ``chunks.embedded`` in this run, resampled to each reservoir size.

``--instances`` measures instead throughput and CPU per document with one and with two processes of every stage
(8 partitions by default here): one pipeline, warmed up, then saturation runs on the same texts under new ids in the
order 1, 2, 2, 1 instances per stage (the second instances are started once before the first 2-instance run and
stopped before the last 1-instance run); per run documents/s, and per stage the CPU-seconds per document summed
over its instances (per-core efficiency: the same work costs the same CPU or not) and the peak RSS per instance;
results in ``benchmarks/results/kafka_instances.md``.

``--backends onnx,static`` measures instead the services at saturation with each embedding backend
(``ANONSTREAM_EMBED_BACKEND``, set for every stage of a pipeline): one pipeline per backend, every stage its own
process, all up at once on the same broker and Redis under their own topic prefixes and tenants; after a warm-up
of each, the backends take turns (ABBA...) on the same documents under new ids, so the machine's load falls on
both alike. The first backend is the baseline of the ratios. Per backend: documents/s and words/s per
repetition, the ratio to the baseline per repetition (median and min-max), and per stage its CPU, the queue
in front of it (``kafka_model.queue`` on the record timestamps of its input and output topics: where the chunks
wait is the stage that limits the rate) and its peak RSS; results in ``benchmarks/results/embed_saturation.md``.
A pipeline given as ``BACKEND@PATH[:PATH]`` (e.g. ``--backends onnx,static@/opt/spacy382``) runs its services with
PATH before ``PYTHONPATH`` (another build of a library beside the venv's); each pipeline's spaCy version is recorded.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson
import yaml
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

import common
import kafka_model
from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime import launch
from anonstream.runtime.kafka import create_topics
from anonstream.runtime.wiring import STAGE_NAMES

INFRA = common.REPO / "deploy" / "infra.sh"
RELEASE_DEFAULT = common.REPO / "deploy" / "release.default.yaml"
DEV_TEXTS = common.REPO.parent / "shared" / "data" / "tab" / "dev-stopgap" / "TAB_dev_texts.json"
READY_TIMEOUT_S = 300
SCALED_STAGES = ("pii", "embed")  # the heaviest stages (benchmarks/results/profile.md)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def words(docs: list[dict]) -> int:
    return sum(len(d["text"].split()) for d in docs)


def dev_documents(limit: int | None) -> list[dict]:
    texts = json.loads(DEV_TEXTS.read_text())
    docs = [{"doc_id": k, "text": v, "metadata": {}} for k, v in sorted(texts.items())]
    return docs[:limit] if limit else docs


def snippets(n: int) -> list[dict]:
    """Single sentences (8-40 words, one line) cut from the TAB train sample, in order."""
    out = []
    for doc in common.read_documents():
        for line in doc["text"].splitlines():
            for sentence in SENTENCE_END.split(line.strip()):
                if 8 <= len(sentence.split()) <= 40:
                    out.append({"doc_id": f"{doc['doc_id']}-s{len(out)}", "text": sentence,
                                "metadata": doc.get("metadata") or {}})
                    if len(out) == n:
                        return out
    return out


def tagged(docs: list[dict], tag: str) -> list[dict]:
    """The same documents under ids of their own (every phase's ids are new to the pipeline)."""
    return [{**d, "doc_id": f"{tag}-{d['doc_id']}"} for d in docs]


# --- infrastructure and services --------------------------------------------------------------------

class Infra:
    """deploy/infra.sh up (unless already up: then reused and left running) / down."""

    def __init__(self):
        self.started = False
        self.env: dict[str, str] = {}

    def up(self) -> dict[str, str]:
        already = subprocess.run(["bash", str(INFRA), "status"], capture_output=True).returncode == 0
        out = subprocess.run(["bash", str(INFRA), "env" if already else "up"], capture_output=True, text=True,
                             check=True).stdout
        self.started = not already
        self.env = dict(re.findall(r"export (\w+)=(\S+)", out))
        common.log(f"infrastructure {'reused' if already else 'started'}: {self.env}")
        return self.env

    def pids(self) -> dict[str, int]:
        run = Path(os.environ.get("ANONSTREAM_RUN_DIR", common.REPO / ".run"))
        out = {}
        for name, pid_file in (("broker", run / "kafka" / "node1.pid"), ("redis", run / "redis" / "redis.pid")):
            try:
                out[name] = int(pid_file.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return out

    def down(self) -> None:
        if self.started:
            subprocess.run(["bash", str(INFRA), "down"], capture_output=True)
            self.started = False


@dataclass
class Services:
    env: dict[str, str]
    log_dir: Path
    processes: dict[str, object] = field(default_factory=dict)  # "pii" / "pii#1" -> Popen

    def start(self, stage: str, instance: int = 0) -> str:
        label = stage if instance == 0 else f"{stage}#{instance}"
        self.processes[label] = launch.start_service(stage, self.env, self.log_path(label),
                                                     instance=instance if instance else None)
        return label

    def log_path(self, label: str) -> Path:
        return self.log_dir / f"{label.replace('#', '-')}.log"

    def check(self) -> None:
        for label, process in self.processes.items():
            if process.poll() is not None:
                tail = self.log_path(label).read_text(errors="replace")[-2000:]
                raise RuntimeError(f"service {label} exited with {process.returncode}:\n{tail}")

    def wait_ready(self, labels: list[str]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        waiting = list(labels)
        while waiting:
            self.check()
            waiting = [l for l in waiting if not launch.is_consuming(self.log_path(l).read_text(errors="replace"),
                                                                      l.split("#")[0])]
            if time.monotonic() > deadline:
                raise RuntimeError(f"not consuming after {READY_TIMEOUT_S} s: {waiting}")
            time.sleep(0.5)

    def pids(self) -> dict[str, int]:
        return {label: p.pid for label, p in self.processes.items() if p.poll() is None}

    def stop(self) -> None:
        launch.stop_services(self.processes.values())


def _read_proc(pids: dict[str, int], name: str, parse) -> dict[str, float]:
    """``parse`` of each live process's ``/proc/<pid>/<name>``; processes gone meanwhile are left out."""
    out = {}
    for label, pid in pids.items():
        try:
            out[label] = parse(Path(f"/proc/{pid}/{name}").read_text())
        except OSError:
            pass
    return out


def cpu_snapshot(pids: dict[str, int]) -> dict[str, float]:
    return _read_proc(pids, "stat", kafka_model.cpu_seconds)


def peak_rss(pids: dict[str, int]) -> dict[str, float]:
    return _read_proc(pids, "status", kafka_model.peak_rss_mib)


HEAVY = ("torch", "spacy", "onnxruntime", "scipy", "sklearn", "tokenizers")  # packages with native libraries


def heavy_libraries(pids: dict[str, int]) -> dict[str, list[str]]:
    """Which of ``HEAVY`` each process has loaded: a native library of the package mapped (``/proc/<pid>/maps``)."""
    return _read_proc(pids, "maps", lambda maps: [h for h in HEAVY if f"/{h}/" in maps or f"/{h}.libs/" in maps])


# --- reading the topics -----------------------------------------------------------------------------

@dataclass
class Seen:
    sanitized_at: dict[str, float] = field(default_factory=dict)  # doc_id -> wall time read (first time)
    sanitized_count: Counter = field(default_factory=Counter)
    swap_in: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # doc_id -> record times
    swap_out: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    # doc_id -> stage -> largest record timestamp of its chunks on the stage's output topic (latency segments)
    last_out: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    # doc_id -> stage -> record timestamps of all its chunks on the stage's output topic (queues per stage)
    out_times: dict[str, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    actions: Counter = field(default_factory=Counter)  # (phase tag, action, reason) from the swap log
    vectors: list[list[float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Reader:
    """A read_committed consumer of the output topics and of swap's input and output, in a thread."""

    MAX_VECTORS = 4000

    def __init__(self, settings: Settings):
        self.settings = settings
        self.seen = Seen()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        if not self._ready.wait(120):
            raise RuntimeError("reader did not start")

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as exc:  # reported by check()
            self._error = exc
            self._ready.set()

    def check(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"reader failed: {self._error!r}")

    async def _run(self) -> None:
        p = self.settings.topic_prefix
        names = {topics.name(t, p): t for t in (topics.SANITIZED, topics.CHUNKS_CLUSTERED, topics.CHUNKS_SANITIZED,
                                                topics.SWAP_LOG, topics.CHUNKS_EMBEDDED, topics.CHUNKS,
                                                topics.CHUNKS_PII)}
        stage_of = {topics.CHUNKS: "ingest", topics.CHUNKS_PII: "pii", topics.CHUNKS_EMBEDDED: "embed",
                    topics.CHUNKS_CLUSTERED: "cluster", topics.CHUNKS_SANITIZED: "swap"}
        consumer = AIOKafkaConsumer(*names, bootstrap_servers=self.settings.bootstrap, group_id=None,
                                    auto_offset_reset="earliest", isolation_level="read_committed",
                                    max_partition_fetch_bytes=32 << 20, fetch_max_bytes=64 << 20)
        await consumer.start()
        self._ready.set()
        seen = self.seen
        try:
            while not self._stop.is_set():
                batches = await consumer.getmany(timeout_ms=100)
                now = time.time()
                with seen.lock:
                    for tp, records in batches.items():
                        topic = names[tp.topic]
                        for r in records:
                            value = orjson.loads(r.value)
                            if topic in stage_of:
                                marks = seen.last_out[value["doc_id"]]
                                stage = stage_of[topic]
                                marks[stage] = max(marks.get(stage, 0.0), r.timestamp / 1000)
                                seen.out_times[value["doc_id"]][stage].append(r.timestamp / 1000)
                            if topic is topics.SANITIZED:
                                seen.sanitized_at.setdefault(value["doc_id"], now)
                                seen.sanitized_count[value["doc_id"]] += 1
                            elif topic is topics.CHUNKS_CLUSTERED:
                                seen.swap_in[value["doc_id"]].append(r.timestamp / 1000)
                            elif topic is topics.CHUNKS_SANITIZED:
                                seen.swap_out[value["doc_id"]].append(r.timestamp / 1000)
                            elif topic is topics.SWAP_LOG:
                                phase = value["doc_id"].split("-", 1)[0]
                                seen.actions[(phase, value.get("action"), value.get("reason"))] += 1
                            elif (topic is topics.CHUNKS_EMBEDDED and value.get("embedding")
                                  and len(seen.vectors) < self.MAX_VECTORS):  # chunks nothing needs a vector of have none
                                seen.vectors.append(value["embedding"]["vector"])
        finally:
            await consumer.stop()

    def out_of(self, ids: list[str]) -> int:
        with self.seen.lock:
            return sum(1 for i in ids if i in self.seen.sanitized_at)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


# --- phases -----------------------------------------------------------------------------------------

@dataclass
class Phase:
    name: str
    docs: int
    words: int
    produced_at: dict[str, float]
    first_produce: float
    last_out: float | None
    out: int
    cpu: dict[str, float]  # CPU seconds per process during the phase
    wall: float
    schedule_slip_s: float = 0.0  # open loop: largest lateness of a send against its schedule
    load_at_end: float = field(default_factory=lambda: os.getloadavg()[0])  # the machine's, other sessions included

    @property
    def seconds(self) -> float:
        return (self.last_out or float("nan")) - self.first_produce

    @property
    def docs_per_s(self) -> float:
        return self.out / self.seconds

    @property
    def words_per_s(self) -> float:
        return self.words * self.out / self.docs / self.seconds


async def produce(settings: Settings, docs: list[dict], rate_per_s: float | None) -> tuple[dict[str, float], float]:
    """Send the documents (all at once, or open loop at ``rate_per_s``); returns {doc_id: send time} and the
    largest lateness against the schedule."""
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all", enable_idempotence=True,
                                max_request_size=16 << 20, linger_ms=5)
    await producer.start()
    name = topics.name(topics.DOCUMENTS, settings.topic_prefix)
    sent: dict[str, float] = {}
    slip = 0.0
    try:
        futures = []
        start = time.time()
        due = kafka_model.send_schedule(len(docs), rate_per_s, start) if rate_per_s else [start] * len(docs)
        for doc, at in zip(docs, due):
            delay = at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            now = time.time()
            slip = max(slip, now - at)
            sent[doc["doc_id"]] = now
            futures.append(await producer.send(name, orjson.dumps(doc), key=doc["doc_id"].encode()))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return sent, slip


def stop_all(reader: "Reader | None", services: "Services | None", infra: "Infra") -> None:
    """Close the reader, stop the services, then the broker and Redis (in that order: no consumer left behind)."""
    if reader is not None:
        reader.close()
    if services is not None:
        services.stop()
    infra.down()


def run_phase(name: str, docs: list[dict], settings: Settings, services: Services, reader: Reader,
              infra_pids: dict[str, int], rate_per_s: float | None = None, timeout_s: float = 600) -> Phase:
    common.log(f"phase {name}: {len(docs)} documents" + (f" at {rate_per_s:.3f}/s" if rate_per_s else " at once"))
    pids = {**services.pids(), **infra_pids}
    cpu0, t0 = cpu_snapshot(pids), time.monotonic()
    produced_at, slip = asyncio.run(produce(settings, docs, rate_per_s))
    ids = [d["doc_id"] for d in docs]
    deadline = time.monotonic() + timeout_s
    while reader.out_of(ids) < len(ids) and time.monotonic() < deadline:
        services.check()
        reader.check()
        time.sleep(0.2)
    cpu1 = cpu_snapshot(pids)
    with reader.seen.lock:
        outs = [reader.seen.sanitized_at[i] for i in ids if i in reader.seen.sanitized_at]
    phase = Phase(name, len(docs), words(docs), produced_at, min(produced_at.values()), max(outs) if outs else None,
                  len(outs), {k: cpu1[k] - cpu0[k] for k in cpu1 if k in cpu0}, time.monotonic() - t0, slip)
    common.log(f"phase {name}: {phase.out}/{phase.docs} out in {phase.seconds:.1f} s "
               f"({phase.docs_per_s:.2f} docs/s, {phase.words_per_s:.0f} words/s)")
    return phase


def latency_rows(phase: Phase, reader: Reader) -> list[list[str]]:
    e2e, wait, rest = [], [], []
    with reader.seen.lock:
        for doc_id, sent in phase.produced_at.items():
            out = reader.seen.sanitized_at.get(doc_id)
            if out is None:
                continue
            e2e.append(out - sent)
            if reader.seen.swap_in[doc_id] and reader.seen.swap_out[doc_id]:
                w = kafka_model.swap_wait(reader.seen.swap_in[doc_id], reader.seen.swap_out[doc_id])
                wait.append(w)
                rest.append(out - sent - w)
    rows = []
    for label, values in (("end to end", e2e), ("swap partner wait", wait), ("end to end minus swap wait", rest)):
        p = kafka_model.percentiles(values)
        rows.append([label, len(values)] + [f"{p[q]:.2f}" for q in kafka_model.PERCENTILES]
                    + [f"{max(values):.2f}" if values else "–"])
    return rows


def segment_rows(phase: Phase, reader: Reader, words: dict[str, int]) -> list[list[str]]:
    """Per stage segment (``kafka_model.latency_segments``): p50/p95/p99 over the phase's documents, and the
    mean over the tail (documents whose latency minus swap wait is at or above its p95); last row: words."""
    segs, rest, ids = [], [], []
    with reader.seen.lock:
        for doc_id, sent in phase.produced_at.items():
            out, marks = reader.seen.sanitized_at.get(doc_id), reader.seen.last_out.get(doc_id, {})
            if out is None or len(marks) < 5 or not reader.seen.swap_in[doc_id] or not reader.seen.swap_out[doc_id]:
                continue
            w = kafka_model.swap_wait(reader.seen.swap_in[doc_id], reader.seen.swap_out[doc_id])
            segs.append(kafka_model.latency_segments(sent, out, marks, w))
            rest.append(out - sent - w)
            ids.append(doc_id)
    if not segs:
        return []
    cut = kafka_model.percentiles(rest)[95]
    tail = [i for i, r in enumerate(rest) if r >= cut]
    rows = []
    for name in kafka_model.LATENCY_SEGMENTS + ("words",):
        values = [words[i] for i in ids] if name == "words" else [s[name] for s in segs]
        p = kafka_model.percentiles(values)
        fmt = "{:.0f}" if name == "words" else "{:.2f}"
        rows.append([phase.name, name] + [fmt.format(p[q]) for q in kafka_model.PERCENTILES]
                    + [fmt.format(float(np.mean([values[i] for i in tail])))])
    return rows


# --- side by side: Presidio and the embedded runner ------------------------------------------------

class PresidioAnonymize:
    """Presidio as usually called: ``AnalyzerEngine.analyze`` then ``AnonymizerEngine.anonymize`` (default
    operator: replace with ``<ENTITY_TYPE>``), per document, on the same spaCy model as ours."""

    def __init__(self):
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
        from presidio_anonymizer import AnonymizerEngine

        from anonstream.pii.spacy_model import resolve_model

        self.model = resolve_model()
        provider = NlpEngineProvider(nlp_configuration={
            "nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": self.model}]})
        self.analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
        self.anonymizer = AnonymizerEngine()

    def run(self, docs: list[dict]) -> int:
        changed = 0
        for doc in docs:
            results = self.analyzer.analyze(text=doc["text"], language="en")
            changed += self.anonymizer.anonymize(text=doc["text"], analyzer_results=results).text != doc["text"]
        return changed


def embedded_child(path: str) -> int:
    """``--embedded-child``: ``anonstream run`` (embedded.run) on a JSONL file; prints the report as JSON."""
    from anonstream.runtime import embedded

    with tempfile.TemporaryDirectory(prefix="anonstream-bench-kafka-") as tmp:
        report = embedded.run(Path(path), Path(tmp) / "out.jsonl", progress=False)
    print(json.dumps({"seconds": report.seconds, "documents_in": report.documents_in,
                      "documents_out": report.documents_out, "cpu_with_load": time.process_time()}))
    return 0


def run_embedded(path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("ANONSTREAM_RELEASE",)}
    env.setdefault("ANONSTREAM_PSEUDONYM_KEY", os.urandom(32).hex())
    out = subprocess.run([sys.executable, __file__, "--embedded-child", str(path)], check=True, capture_output=True,
                         text=True, cwd=common.REPO, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def side_by_side(docs: list[dict], rounds: int) -> dict:
    presidio = PresidioAnonymize()
    n_words = words(docs)
    out: dict = {"presidio": [], "presidio_cpu": [], "embedded": [], "embedded_cpu": [], "changed": 0,
                 "model": presidio.model}
    with tempfile.TemporaryDirectory(prefix="anonstream-bench-kafka-") as tmp:
        source = Path(tmp) / "docs.jsonl"
        source.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
        presidio.run(docs[:2])  # first-call costs out of the timing
        for r in range(rounds):
            order = ("presidio", "embedded") if r % 2 == 0 else ("embedded", "presidio")
            for system in order:
                if system == "presidio":
                    with common.timed() as t:
                        out["changed"] = presidio.run(docs)
                    out["presidio"].append(n_words / t.wall)
                    out["presidio_cpu"].append(n_words / t.cpu)
                else:
                    report = run_embedded(source)
                    if report["documents_out"] != len(docs):
                        raise RuntimeError(f"anonstream run: {report['documents_out']} of {len(docs)} out")
                    out["embedded"].append(n_words / report["seconds"])
                    out["embedded_cpu"].append(n_words / report["cpu_with_load"])
                common.log(f"side by side round {r + 1}: {system} {out[system][-1]:.0f} words/s")
    return out


# --- refit core -------------------------------------------------------------------------------------

def refit_grid(vectors: np.ndarray, sizes: list[int], ks: list[int]) -> list[list[str]]:
    """``fit_checked`` cold (k-means++, 4 starts) on ``vectors`` resampled with replacement to each size, plus
    a little noise so that repeats are not identical points; warm (a scheduled refit): from the cold model on a
    second, independent resample (the reservoir has moved on since the last fit)."""
    from anonstream.stages.cluster import fit_checked

    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        X, X2 = (vectors[rng.integers(0, len(vectors), n)] + rng.normal(0, 0.01, (n, vectors.shape[1])).astype(np.float32)
                 for _ in range(2))
        for k in ks:
            with common.timed() as cold_t:
                cold = fit_checked(X, "pkb", k, 1e-3, "bench")
            with common.timed() as warm_t:
                warm = fit_checked(X2, "pkb", k, 1e-3, "bench", cold)
            rows.append([f"{n:,}", k, cold.k, f"{cold_t.wall:.2f}", f"{cold_t.cpu:.2f}", cold.n_iter,
                         f"{warm_t.wall:.2f}", warm.n_iter])
            common.log(f"refit n={n} k={k}: cold {cold_t.wall:.2f} s, warm {warm_t.wall:.2f} s")
    return rows


# --- embedding backends side by side at saturation (--backends) -------------------------------------

PIPELINE = ("ingest", "pii", "embed", "cluster", "swap", "sink")  # the path of a chunk; refit and audit read beside it
NO_MODEL = ("ingest", "cluster", "refit", "swap", "sink")  # the services that load no model (bench_service_rss.py)


@dataclass
class Pipeline:
    settings: Settings
    services: Services
    reader: Reader | None = None


def stage_queues(phase: Phase, reader: Reader) -> dict[str, tuple[float, int, float]]:
    """Per stage of ``PIPELINE``: (time-averaged, largest) number of items waiting in front of it during the phase
    (``kafka_model.queue``; chunks, except ingest: documents) and when its last output of the phase came, in seconds
    after the first produce. A chunk arrives at a stage with its record on the previous stage's output topic and
    leaves with its own record on the stage's; at the sink it leaves when its document is read at the output topic."""
    arrivals: dict[str, list[float]] = {s: [] for s in PIPELINE}
    departures: dict[str, list[float]] = {s: [] for s in PIPELINE}
    with reader.seen.lock:
        for doc_id, sent in phase.produced_at.items():
            outs = reader.seen.out_times.get(doc_id, {})
            arrivals["ingest"].append(sent)
            if outs.get("ingest"):
                departures["ingest"].append(max(outs["ingest"]))
            for previous, stage in zip(PIPELINE[:4], PIPELINE[1:5]):
                arrivals[stage] += outs.get(previous, [])
                departures[stage] += outs.get(stage, [])
            arrivals["sink"] += outs.get("swap", [])
            read = reader.seen.sanitized_at.get(doc_id)
            if read is not None:
                departures["sink"] += [read] * len(outs.get("swap", []))
    end = phase.last_out or time.time()
    out = {}
    for stage in PIPELINE:
        mean, peak = kafka_model.queue(arrivals[stage], departures[stage], phase.first_produce, end)
        done = max(departures[stage]) - phase.first_produce if departures[stage] else float("nan")
        out[stage] = (mean, peak, done)
    return out


def spacy_version(environment: dict[str, str]) -> str:
    return subprocess.run([sys.executable, "-c", "import spacy; print(spacy.__version__)"], env=environment,
                          capture_output=True, text=True, check=True).stdout.strip()


def compare_backends(args, backends: list[str]) -> int:
    """``backends``: pipelines ``BACKEND`` or ``BACKEND@PATH[:PATH]`` (PATH prepended to its services' PYTHONPATH)."""
    if len(backends) < 2 or len(set(backends)) != len(backends):
        raise SystemExit(f"--backends needs two or more different pipelines, got {backends}")
    q = args.quick
    reps = args.repetitions or (2 if q else 4)
    dev = dev_documents(args.documents or (12 if q else None))
    train = common.read_documents()
    base = backends[0]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally block stops what was started
    results = common.Results("embed_saturation", "The services at saturation by embedding backend, side by side in "
                             "one run (issue 27)", q)
    machine = common.machine_info()
    infra = Infra()
    tmp = Path(tempfile.mkdtemp(prefix="anonstream-bench-kafka-"))
    pipes: dict[str, Pipeline] = {}
    ready_s: dict[str, float] = {}
    spacy: dict[str, str] = {}
    runs: dict[str, list[Phase]] = defaultdict(list)
    try:
        infra_env = infra.up()
        infra_pids = infra.pids()
        for i, backend in enumerate(backends):
            name, _, path = backend.partition("@")
            directory = tmp / str(i)
            directory.mkdir()
            overrides = {"ANONSTREAM_EMBED_BACKEND": name}
            if path:
                overrides["PYTHONPATH"] = os.pathsep.join(p for p in (path, os.environ.get("PYTHONPATH")) if p)
            environment, settings = pipeline_env(infra_env, f"sat{i}" + re.sub(r"[^a-z0-9]", "", name.lower()), args,
                                                 directory, overrides)
            spacy[backend] = spacy_version(environment)
            services, ready_s[backend] = start_services(environment, directory)
            pipes[backend] = Pipeline(settings, services)
            common.log(f"{backend}: services consuming after {ready_s[backend]:.0f} s")
        for p in pipes.values():
            p.reader = Reader(p.settings)

        def watched(backend: str) -> dict[str, int]:
            """Broker, Redis and the other pipelines' services (idle meanwhile) beside the measured one's."""
            idle = {f"idle {label}": pid for other, p in pipes.items() if other != backend
                    for label, pid in p.services.pids().items()}
            return {**infra_pids, **idle}

        warm = {b: run_phase(f"warmup {b}", tagged(train[:8], "warm"), p.settings, p.services, p.reader, watched(b))
                for b, p in pipes.items()}
        for r in range(reps):
            for b in (backends if r % 2 == 0 else backends[::-1]):
                p = pipes[b]
                runs[b].append(run_phase(f"{b} #{r + 1}", tagged(dev, f"r{r + 1}"), p.settings, p.services, p.reader,
                                         watched(b)))
        rss = {b: peak_rss(p.services.pids()) for b, p in pipes.items()}
        libraries = {b: heavy_libraries(p.services.pids()) for b, p in pipes.items()}
        infra_rss = peak_rss(infra_pids)
        queues = {b: [stage_queues(ph, pipes[b].reader) for ph in runs[b]] for b in backends}
        actions = {b: dict(p.reader.seen.actions) for b, p in pipes.items()}
        duplicates = {b: sum(c - 1 for c in p.reader.seen.sanitized_count.values() if c > 1)
                      for b, p in pipes.items()}
    finally:
        for p in pipes.values():
            if p.reader is not None:
                p.reader.close()
            p.services.stop()
        infra.down()
    common.log("services and infrastructure stopped")

    # --- report ---------------------------------------------------------------------------------
    docs_s = {b: [ph.docs_per_s for ph in runs[b]] for b in backends}
    words_s = {b: [ph.words_per_s for ph in runs[b]] for b in backends}
    ratios = {b: [x / y for x, y in zip(docs_s[b], docs_s[base])] for b in backends}
    order = "; ".join(", ".join(backends if r % 2 == 0 else backends[::-1]) for r in range(reps))
    results.add(
        f"Machine: {machine['nproc']} cores ({machine['cpu']}), {machine['ram']}; load average at start "
        f"{machine['load average at start (1/5/15 min)']}, at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(shared with other sessions: absolute rates are noisy, the ratios come from one run). Local Kafka (KRaft, "
        f"one node) and Redis via `deploy/infra.sh`; topics with {args.partitions} partitions. One pipeline per "
        f"backend ({', '.join(f'`{b}`' for b in backends)}: `ANONSTREAM_EMBED_BACKEND` for every stage; after `@`, "
        "a path put before `PYTHONPATH` for that pipeline's services; spaCy "
        + ", ".join(f"{spacy[b]} in `{b}`" for b in backends) + "), each stage "
        f"its own process ({', '.join(STAGE_NAMES)}), all {len(backends) * len(STAGE_NAMES)} processes up for the "
        "whole run under their own topic prefixes and tenants (consuming "
        + ", ".join(f"{b} {ready_s[b]:.0f} s" for b in backends) + " after start). After a warm-up of each "
        f"({', '.join(f'{b} {warm[b].seconds:.1f} s' for b in backends)} for {warm[base].docs} train documents), "
        f"{reps} saturation runs per backend taking turns ({order}): the {len(dev)} unseen TAB dev texts "
        f"({words(dev):,} words) produced at once under new ids, documents/s = documents / (last sanitized document "
        f"read - first produce). Swap wait bound T = {args.swap_wait_s:g} s (release default 30 s); refit every "
        f"10 s, K = 4. Baseline: `{base}`.")
    summary = []
    for b in backends:
        summary.append([f"`{b}`", spacy[b], ", ".join(f"{x:.2f}" for x in docs_s[b]),
                        f"**{common.spread(docs_s[b])}**",
                        common.spread(words_s[b], "{:,.0f}"),
                        "1 (baseline)" if b == base else f"**{common.spread(ratios[b])}**",
                        ", ".join(f"{x:.2f}" for x in ratios[b]) if b != base else ""])
    verdicts = []
    for b in backends[1:]:
        met = common.median(ratios[b]) >= 2.0
        verdicts.append(f"`{b}` ÷ `{base}` = {common.spread(ratios[b])} (median, min–max over the {reps} paired "
                        f"runs): target ≥ 2× **{'met' if met else 'not met'}**"
                        + (f" (every run ≥ 2: {'yes' if min(ratios[b]) >= 2.0 else 'no'})" if met else "") + ".")
    results.section("Saturation by backend", "\n\n".join([
        common.table(["backend", "spaCy", "documents/s per run", "documents/s median (min–max)",
                      "words/s median (min–max)", f"÷ {base}, median (min–max)", f"÷ {base} per run"], summary),
        " ".join(verdicts) + " The ratio of run r pairs a backend's r-th run with the baseline's, which ran in the "
        "same turn. "
        "Sanitized documents read more than once over the whole run (before deduplication by key): "
        + ", ".join(f"{b} {duplicates[b]}" for b in backends) + ".",
        common.table(["run", "backend", "out", "seconds", "documents/s", "words/s", "load average (1 min) at the end"],
                     [[i + 1, f"`{b}`", f"{ph.out}/{ph.docs}", f"{ph.seconds:.1f}", f"{ph.docs_per_s:.2f}",
                       f"{ph.words_per_s:,.0f}", f"{ph.load_at_end:.1f}"]
                      for i in range(reps) for b in (backends if i % 2 == 0 else backends[::-1])
                      for ph in [runs[b][i]]]),
    ]))
    for b in backends:
        rows = []
        out_total = sum(ph.out for ph in runs[b])
        wall = sum(ph.wall for ph in runs[b])
        mean_queue = {s: common.median([qs[s][0] for qs in queues[b]]) for s in PIPELINE}
        for label in list(STAGE_NAMES) + ["broker", "redis", "idle"]:
            if label == "idle":
                cpu = sum(v for ph in runs[b] for k, v in ph.cpu.items() if k.startswith("idle "))
            else:
                cpu = sum(ph.cpu.get(label, 0.0) for ph in runs[b])
            if label in PIPELINE:
                qrow = [f"{mean_queue[label]:.1f}", str(max(qs[label][1] for qs in queues[b])),
                        f"{common.median([qs[label][2] for qs in queues[b]]):.1f}"]
            else:
                qrow = ["", "", ""]
            memory = rss[b].get(label, infra_rss.get(label))
            rows.append([f"**{label}**" if label == "embed" else label, f"{1000 * cpu / max(out_total, 1):.0f}",
                         f"{cpu / wall:.2f}", *qrow, f"{memory:.0f}" if memory is not None else "–",
                         ", ".join(libraries[b].get(label, [])) or ("-" if label in STAGE_NAMES else "")])
        total = sum(v for ph in runs[b] for k, v in ph.cpu.items() if not k.startswith("idle "))
        rows.append(["**all but idle**", f"{1000 * total / max(out_total, 1):.0f}", f"{total / wall:.2f}", "", "", "",
                     f"{sum(rss[b].values()):.0f} (services)", ""])
        ranked = sorted((s for s in PIPELINE if s not in ("swap", "sink")), key=lambda s: -mean_queue[s])
        results.section(f"Where the time goes with `{b}`: CPU, queues and memory per process", "\n\n".join([
            common.table(["process", "CPU ms per document", "CPU cores busy", "mean items waiting in front",
                          "peak waiting", "last out at s (median)", "peak RSS MiB", "native libraries loaded"],
                         rows),
            f"Over the {reps} runs of `{b}` ({out_total} documents out). CPU = user + system seconds of the process "
            "(all threads, `/proc/<pid>/stat`), per document out and per second of the runs' wall time; *idle* = "
            "the other pipelines' services, idle meanwhile (polling, refit and audit timers). Items waiting in front "
            "of a stage (`kafka_model.queue`, median over the runs): chunks with a record on its input topic and "
            "none yet on its output topic, time-averaged over the run, and the largest count; ingest counts "
            "documents, the sink chunks until their document is read. Swap holds chunks up to T for a partner and "
            "the sink holds a document's chunks until its last one comes, by design, so their queues are partly "
            "that wait. *Last out at*: the stage's last output of the run, seconds "
            "after the first produce. Peak RSS = `VmHWM` at the end of the last run (broker and Redis: shared); native "
            f"libraries: which of {', '.join(HEAVY)} the process has mapped then (`/proc/<pid>/maps`). "
            f"Largest queue, swap and sink aside: **{ranked[0]}** ({mean_queue[ranked[0]]:.1f} waiting on average), then "
            f"{ranked[1]} ({mean_queue[ranked[1]]:.1f}). The services that load no model ({', '.join(NO_MODEL)}) "
            f"peak at {', '.join(f'{s} {rss[b][s]:.0f}' for s in NO_MODEL if s in rss[b])} MiB (target ≤ 300 each).",
        ]))
    action_rows = []
    for b in backends:
        counted = Counter()
        for (phase, action, reason), n in actions[b].items():
            if phase.startswith("r"):
                counted[(action, reason)] += n
        action_rows += [[f"`{b}`", a, r, n] for (a, r), n in sorted(counted.items(), key=lambda x: -x[1])]
    results.section("What the swap stage did (swap log, the saturation runs)", "\n\n".join([
        common.table(["backend", "action", "reason", "chunks"], action_rows),
        f"With T = {args.swap_wait_s:g} s a chunk that finds no partner in time leaves with the fallback (reason "
        "`timeout`); a faster pipeline brings more partners within T.",
    ]))
    results.write()
    return 0


def compare_instances(args) -> int:
    """Saturation with one and with two service processes of every stage (``--instances``)."""
    q = args.quick
    partitions = args.partitions if args.partitions != 4 else 8  # room for two consumers of every stage
    args.partitions = partitions
    n_docs = args.documents or (12 if q else 60)
    results = common.Results("kafka_instances", "The pipeline on Kafka with one and two processes of every stage", q)
    machine = common.machine_info()
    dev = dev_documents(n_docs)
    train = common.read_documents()
    infra = Infra()
    tmp = Path(tempfile.mkdtemp(prefix="anonstream-bench-instances-"))
    services = reader = None
    runs: list[tuple[int, Phase]] = []
    try:
        environment, settings = pipeline_env(infra.up(), "inst", args, tmp)
        services, ready_s = start_services(environment, tmp)
        reader = Reader(settings)
        infra_pids = infra.pids()
        warm = run_phase("warmup", tagged(train[:8], "warm"), settings, services, reader, infra_pids)
        rss = {1: {}, 2: {}}
        second: list[str] = []
        for r, n in enumerate((1, 2, 2, 1)):
            if n == 2 and not second:
                second = [services.start(stage, instance=1) for stage in STAGE_NAMES]
                services.wait_ready(second)
                time.sleep(10)  # the groups' rebalances after the joins
            if n == 1 and second:
                rss[2] = peak_rss(services.pids())
                launch.stop_services([services.processes.pop(label) for label in second])
                second = []
                time.sleep(10)
            runs.append((n, run_phase(f"{n}-instance #{r + 1}", tagged(dev, f"i{r + 1}"), settings, services, reader,
                                      infra_pids)))
        rss[1] = peak_rss(services.pids())
        duplicates = sum(c - 1 for c in reader.seen.sanitized_count.values() if c > 1)
    finally:
        stop_all(reader, services, infra)
    common.log("services and infrastructure stopped")

    by = {n: [ph for m, ph in runs if m == n] for n in (1, 2)}
    rate = {n: [ph.docs_per_s for ph in by[n]] for n in (1, 2)}
    ratio = statistics.fmean(rate[2]) / statistics.fmean(rate[1])

    def cpu_per_doc(n: int, stage: str) -> float:
        cpu = sum(v for ph in by[n] for k, v in ph.cpu.items() if k.split("#")[0] == stage)
        return 1000 * cpu / max(sum(ph.out for ph in by[n]), 1)

    def busy(n: int) -> float:
        return statistics.fmean([sum(v for k, v in ph.cpu.items()) / ph.seconds for ph in by[n]])

    results.add(
        f"Machine: {machine['nproc']} cores ({machine['cpu']}), {machine['ram']}; load average at start "
        f"{machine['load average at start (1/5/15 min)']}, at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(shared with other sessions: absolute rates are noisy). Local Kafka (KRaft, one node) and Redis via "
        f"`deploy/infra.sh`; topics with {partitions} partitions; at-least-once (the default). One pipeline, every "
        f"stage its own process (consuming {ready_s:.0f} s after start), warmed up ({warm.docs} train documents, "
        f"{warm.seconds:.1f} s); then saturation runs, each the {len(dev)} unseen TAB dev texts ({words(dev):,} "
        "words) produced at once under new ids, documents/s = documents / (last sanitized document read - first "
        "produce), in the order 1, 2, 2, 1 processes of every stage (`ANONSTREAM_INSTANCE` 1 of each stage joins "
        "its consumer group before the first 2-instance run and is stopped before the last 1-instance run). "
        f"Swap wait bound T = {args.swap_wait_s:g} s; refit every 10 s, K = 4.")
    results.section("Throughput", "\n\n".join([
        common.table(["run", "processes per stage", "out", "seconds", "documents/s", "words/s",
                      "cores busy (all processes, broker, Redis)", "load average (1 min) at the end"],
                     [[i + 1, n, f"{ph.out}/{ph.docs}", f"{ph.seconds:.1f}", f"{ph.docs_per_s:.2f}",
                       f"{ph.words_per_s:,.0f}", f"{sum(ph.cpu.values()) / ph.seconds:.2f}", f"{ph.load_at_end:.1f}"]
                      for i, (n, ph) in enumerate(runs)]),
        f"Two processes per stage ÷ one, mean documents/s: **{ratio:.2f}** ({statistics.fmean(rate[2]):.2f} ÷ "
        f"{statistics.fmean(rate[1]):.2f}); the processes, broker and Redis kept {busy(1):.2f} cores busy with one "
        f"process per stage and {busy(2):.2f} with two, of {machine['nproc']}, beside the other sessions' load "
        "(last column): on cores that are shared or busy a second process per stage cannot show speed-up; what it "
        "can show is whether the same work costs more CPU when spread over twice the processes (below). Sanitized "
        f"documents read more than once: {duplicates}.",
    ]))
    rows = []
    for stage in [*STAGE_NAMES, "broker", "redis"]:
        one, two = cpu_per_doc(1, stage), cpu_per_doc(2, stage)
        mem1 = rss[1].get(stage)
        mem2 = [v for k, v in rss[2].items() if k.split("#")[0] == stage]
        rows.append([stage, f"{one:.0f}", f"{two:.0f}", f"{one / two:.2f}" if two else "–",
                     f"{mem1:.0f}" if mem1 is not None else "–",
                     " / ".join(f"{v:.0f}" for v in mem2) if stage in STAGE_NAMES else "–"])
    total1 = sum(cpu_per_doc(1, s) for s in [*STAGE_NAMES, "broker", "redis"])
    total2 = sum(cpu_per_doc(2, s) for s in [*STAGE_NAMES, "broker", "redis"])
    rows.append(["**all**", f"{total1:.0f}", f"{total2:.0f}", f"{total1 / total2:.2f}", "", ""])
    results.section("Per-core efficiency: CPU per document with one and two processes per stage", "\n\n".join([
        common.table(["process", "CPU ms per document, 1 per stage", "CPU ms per document, 2 per stage (summed)",
                      "efficiency (1 ÷ 2)", "peak RSS MiB, 1 per stage", "peak RSS MiB per instance, 2 per stage"],
                     rows),
        "CPU = user + system seconds of the processes (all threads, `/proc/<pid>/stat`) during the runs of each "
        "kind, divided by their documents out; with two per stage, the two instances' CPU summed. Efficiency 1 = "
        "the same work costs the same CPU spread over two processes; below 1, the second process adds overhead "
        "(polling, heartbeats, smaller batches, its share of the refit and audit timers). Peak RSS = `VmHWM` at the "
        "end of the 2-instance runs and of the last run.",
    ]))
    results.write()
    return 0


# --- main -------------------------------------------------------------------------------------------

def release_with_wait(wait_s: float, directory: Path) -> Path:
    release = yaml.safe_load(RELEASE_DEFAULT.read_text())
    release["pool"]["max_wait_seconds"] = wait_s
    path = directory / "release.yaml"
    path.write_text(yaml.safe_dump(release, sort_keys=False))
    return path


def pipeline_env(infra_env: dict[str, str], tag: str, args, directory: Path,
                 overrides: dict[str, str] | None = None) -> tuple[dict[str, str], Settings]:
    """The environment of one pipeline's services (``launch.service_env``: its own topic prefix, tenant and
    pseudonym key) with the bench's settings, and its topics created."""
    environment = launch.service_env(infra_env["ANONSTREAM_BOOTSTRAP"], infra_env["ANONSTREAM_REDIS_URL"], tag, {
        "ANONSTREAM_PARTITIONS": str(args.partitions),
        "ANONSTREAM_REFIT_INTERVAL_S": "10",
        "ANONSTREAM_RELEASE": str(release_with_wait(args.swap_wait_s, directory)),
        "ANONSTREAM_LOG_LEVEL": "INFO",
        **(overrides or {}),
    })
    settings = Settings(bootstrap=environment["ANONSTREAM_BOOTSTRAP"],
                        topic_prefix=environment["ANONSTREAM_TOPIC_PREFIX"], partitions=args.partitions)
    asyncio.run(create_topics(settings))
    return environment, settings


def start_services(environment: dict[str, str], directory: Path) -> tuple[Services, float]:
    """Every stage as its own process with ``environment``; returns them and the seconds until all consume."""
    services = Services(environment, directory)
    started = time.monotonic()
    try:
        for stage in STAGE_NAMES:
            services.start(stage)
        services.wait_ready(list(STAGE_NAMES))
    except BaseException:  # not yet the caller's to stop (a SIGTERM meanwhile would leave them running)
        services.stop()
        raise
    return services, time.monotonic() - started


def service_table(phases: list[Phase], rss: dict[str, float]) -> str:
    labels = sorted({k for p in phases for k in p.cpu}, key=lambda l: (l in ("broker", "redis"), l))
    header = ["process"] + [f"CPU s, {p.name}" for p in phases] + [f"CPU ms/doc, {p.name}" for p in phases] \
        + ["peak RSS MiB"]
    rows = []
    for label in labels:
        rows.append([label] + [f"{p.cpu.get(label, 0):.1f}" for p in phases]
                    + [f"{1000 * p.cpu.get(label, 0) / max(p.out, 1):.0f}" for p in phases]
                    + [f"{rss[label]:.0f}" if label in rss else "–"])
    rows.append(["**all** (RSS: sum of peaks)"] + [f"{sum(p.cpu.values()):.1f}" for p in phases]
                + [f"{1000 * sum(p.cpu.values()) / max(p.out, 1):.0f}" for p in phases]
                + [f"{sum(rss.values()):.0f}"])
    return common.table(header, rows)


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="TAB dev documents (default all 127, quick 12)")
    parser.add_argument("--snippets", type=int, help="snippets (default 600, quick 60)")
    parser.add_argument("--latency-s", type=float, help="open-loop phase length (default 45 s, quick 20 s)")
    parser.add_argument("--swap-wait-s", type=float, default=2.0, help="swap wait bound T of the services")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="side-by-side rounds (each system once per round)")
    parser.add_argument("--backends", help="comma-separated embedding backends (e.g. onnx,static; the first is "
                        "the baseline): only the saturation phase, one pipeline per backend, the backends taking "
                        "turns; BACKEND@PATH[:PATH] puts PATH before that pipeline's PYTHONPATH; writes "
                        "embed_saturation.md")
    parser.add_argument("--repetitions", type=int, help="with --backends: saturation runs per backend (default 4, "
                        "quick 2)")
    parser.add_argument("--instances", action="store_true", help="only saturation with 1 and 2 processes of "
                        "every stage (order 1, 2, 2, 1); writes kafka_instances.md")
    parser.add_argument("--embedded-child", help=__import__("argparse").SUPPRESS)
    args = parser.parse_args()
    if args.embedded_child:
        return embedded_child(args.embedded_child)
    q = args.quick
    if args.backends:
        return compare_backends(args, [b.strip() for b in args.backends.split(",") if b.strip()])
    if args.instances:
        return compare_instances(args)
    n_docs = args.documents or (12 if q else None)
    n_snippets = args.snippets or (60 if q else 600)
    latency_s = args.latency_s or (20 if q else 45)
    rounds = args.rounds
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally blocks stop what was started

    results = common.Results("kafka", "The pipeline on Kafka: every stage a service process (issue 13, items 6 and 8)",
                             q)
    machine = common.machine_info()
    dev = dev_documents(n_docs)
    snips = snippets(n_snippets)
    train = common.read_documents()
    infra = Infra()
    tmp = Path(tempfile.mkdtemp(prefix="anonstream-bench-kafka-"))
    services = reader = None
    try:
        environment, settings = pipeline_env(infra.up(), "bench", args, tmp)
        services, ready_s = start_services(environment, tmp)
        common.log(f"services consuming after {ready_s:.0f} s")
        reader = Reader(settings)
        infra_pids = infra.pids()

        warm = run_phase("warmup", tagged(train[:8], "warm"), settings, services, reader, infra_pids)
        sat_docs = run_phase("docs", tagged(dev, "docs"), settings, services, reader, infra_pids)
        sat_snips = run_phase("snippets", tagged(snips, "snip"), settings, services, reader, infra_pids)
        lat, lat_words = [], {}
        for label, sat, pool in (("docs", sat_docs, train), ("snippets", sat_snips, snips)):
            rate = sat.docs_per_s / 2
            n = max(5, int(rate * latency_s))
            pick = [pool[i % len(pool)] for i in range(n)]
            pick = [{**d, "doc_id": f"{d['doc_id']}-{i}"} for i, d in enumerate(pick)]
            pick = tagged(pick, f"lat{label[0]}")
            lat_words.update((d["doc_id"], len(d["text"].split())) for d in pick)
            lat.append(run_phase(f"latency-{label}", pick, settings, services, reader, infra_pids, rate_per_s=rate))
        rss_one = peak_rss({**services.pids(), **infra_pids})
        scaled = [services.start(stage, instance=1) for stage in SCALED_STAGES]
        services.wait_ready(scaled)
        time.sleep(5)  # the group rebalance after the join
        sat_two = run_phase("docs-2-workers", tagged(dev, "two"), settings, services, reader, infra_pids)
        rss = peak_rss({**services.pids(), **infra_pids})
        duplicates = sum(c - 1 for c in reader.seen.sanitized_count.values() if c > 1)
        actions = dict(reader.seen.actions)
        vectors = np.asarray(reader.seen.vectors, dtype=np.float32)
    finally:
        stop_all(reader, services, infra)
    common.log("services and infrastructure stopped")

    sbs = side_by_side(dev, rounds)
    refit_rows = refit_grid(vectors, [500, 2000] if q else [1000, 5000, 20000], [4, 8] if q else [4, 8, 16])

    # --- report ---------------------------------------------------------------------------------
    presidio_wps, embedded_wps = common.median(sbs["presidio"]), common.median(sbs["embedded"])
    ratios = [e / p for e, p in zip(sbs["embedded"], sbs["presidio"])]
    results.add(
        f"Machine: {machine['nproc']} cores ({machine['cpu']}), {machine['ram']}; load average at start "
        f"{machine['load average at start (1/5/15 min)']}, at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(the machine is shared with other sessions, so absolute rates are noisy; the ratios come from one run). "
        f"Broker: local Kafka (KRaft, one node) and Redis via `deploy/infra.sh`; topics with {args.partitions} "
        f"partitions; one process per stage ({', '.join(STAGE_NAMES)}), consuming {ready_s:.0f} s after start. "
        f"Swap wait bound T = {args.swap_wait_s:g} s (release default 30 s); refit every 10 s, K = 4; "
        f"embedding backend {Settings().embed_backend} (`ANONSTREAM_EMBED_BACKEND`; `--backends` compares them).")
    results.section("Saturation (everything produced at once; time to the last sanitized document)", "\n\n".join([
        common.table(["workload", "documents", "words", "out", "seconds", "**documents/s**", "**words/s**",
                      "load average (1 min) at the end"], [
            [p.name, p.docs, f"{p.words:,}", p.out, f"{p.seconds:.1f}", f"**{p.docs_per_s:.2f}**",
             f"**{p.words_per_s:,.0f}**", f"{p.load_at_end:.1f}"] for p in (sat_docs, sat_snips)]),
        f"`docs`: the {len(dev)} unseen TAB dev texts (`{common.rel(DEV_TEXTS)}`); `snippets`: {len(snips)} single "
        f"sentences (8-40 words) cut from `data/sample/tab-train-100.jsonl`. Warm-up before them: "
        f"{warm.docs} train documents, {warm.seconds:.1f} s. Sanitized documents read more than once "
        f"(before deduplication by key) over the whole run: {duplicates}.",
    ]))
    lat_rows = []
    for p in lat:
        for row in latency_rows(p, reader):
            lat_rows.append([p.name, f"{p.docs / (max(p.produced_at.values()) - p.first_produce + 1e-9):.2f}",
                             p.out] + row[:1] + row[2:])
    results.section("End-to-end latency at half the saturation rate (open-loop producer)", "\n\n".join([
        common.table(["phase", "offered documents/s", "out", "measure", "p50 s", "p95 s", "p99 s", "max s"],
                     lat_rows),
        "Latency = wall time the sanitized document is read at the output topic (read_committed, so after the "
        "sink's transaction commits) minus the time its send was issued. *swap partner wait* per document = "
        "(timestamp of its last chunk on `chunks.sanitized`) - (timestamp of its last chunk on `chunks.clustered`), "
        "at least 0: how long swap held the document beyond the arrival of its last chunk "
        "(`kafka_model.swap_wait`); *end to end minus swap wait* is the latency the issue's target (p99 <= 2 s, "
        "swap wait excluded) is about. Largest lateness of a send against the open-loop schedule: "
        + ", ".join(f"{p.name} {p.schedule_slip_s:.2f} s" for p in lat) + ".",
    ]))
    results.section("Where the latency goes: per stage segments of the latency minus swap wait", "\n\n".join([
        common.table(["phase", "segment", "p50 s", "p95 s", "p99 s", "mean in the tail s"],
                     [row for p in lat for row in segment_rows(p, reader, lat_words)]),
        "Per document, the latency minus the swap partner wait cut at the times its last chunk left each stage "
        "(record timestamps on `chunks`, `chunks.pii`, `chunks.embedded`, `chunks.clustered`, `chunks.sanitized`; "
        "`kafka_model.latency_segments`): a segment is the time from the previous stage's last chunk out to this "
        "stage's (queueing, batching, work); *sink and read* ends when the reader sees the sanitized document. "
        "*Tail*: the documents whose latency minus swap wait is at or above its p95; *words*: their sizes.",
    ]))
    action_rows = sorted(((ph, a, r, n) for (ph, a, r), n in actions.items()), key=lambda x: (x[0], -x[3]))
    results.section("What the swap stage did (swap log, per phase)", "\n\n".join([
        common.table(["phase id prefix", "action", "reason", "chunks"], action_rows),
        f"With T = {args.swap_wait_s:g} s a chunk that finds no partner within T leaves with the fallback "
        "(`reason` timeout: generalized or suppressed) instead of being swapped: privacy is kept (its S values "
        "change either way), utility differs (a generalized value instead of a plausible swapped one).",
    ]))
    phases = [sat_docs, sat_snips, *lat, sat_two]
    results.section("CPU and memory per service process", "\n\n".join([
        service_table(phases, rss),
        "CPU = user + system seconds of the process (all threads, `/proc/<pid>/stat`) during each phase; "
        "ms/doc divides by the phase's documents out. `pii#1`, `embed#1`: the second worker processes of the "
        f"scaling phase. Peak RSS = `VmHWM` at the end (before the scaling phase: "
        + ", ".join(f"{k} {v:.0f}" for k, v in rss_one.items() if k in SCALED_STAGES) + " MiB).",
    ]))

    # scaling: measured and modelled
    stage_cost = {s: sat_docs.cpu.get(s, 0) / sat_docs.out for s in STAGE_NAMES}
    infra_cost = (sat_docs.cpu.get("broker", 0) + sat_docs.cpu.get("redis", 0)) / sat_docs.out
    model = kafka_model.ScalingModel(stage_cost, infra_cost)
    cores = len(os.sched_getaffinity(0))
    predicted_1 = model.throughput(cores, args.partitions)
    predicted_2 = model.throughput(cores, args.partitions, {s: 2 for s in SCALED_STAGES})
    efficiency = sat_docs.docs_per_s / predicted_1
    cores_bound = model.throughput(cores, 10**6, default_workers=10**6)
    stage_bound = model.throughput(10**6, args.partitions)
    busy_share = sum(sat_docs.cpu.values()) / sat_docs.seconds / cores
    scale_rows = [
        [f"{args.partitions} x 1", f"{sat_docs.docs_per_s:.3f}", f"{sat_docs.words_per_s:,.0f}", f"{predicted_1:.3f}",
         f"{sum(sat_docs.cpu.values()) / sat_docs.seconds:.2f}"],
        [f"{args.partitions} x 2 (pii, embed)", f"{sat_two.docs_per_s:.3f}", f"{sat_two.words_per_s:,.0f}",
         f"{predicted_2:.3f}", f"{sum(sat_two.cpu.values()) / sat_two.seconds:.2f}"],
    ]
    model_rows = []
    for c in (2, 4, 8, 16, 32):
        w = model.workers_for(c)
        x = model.throughput(c, max(c, args.partitions), w)
        model_rows.append([c, max(c, args.partitions), ", ".join(f"{s} {n}" for s, n in w.items() if n > 1) or "1 each",
                           f"{x:.2f}", f"{x * efficiency:.2f}", f"{x * efficiency * sat_docs.words / sat_docs.docs:,.0f}",
                           model.bottleneck(max(c, args.partitions), w)])
    results.section("Scaling with worker processes (item 8): measured on this machine, modelled beyond it",
                    "\n\n".join([
        common.table(["partitions x workers", "documents/s", "words/s", "model documents/s", "CPU cores busy"],
                     scale_rows),
        f"Both rows: the same {sat_docs.docs} TAB dev texts under new ids, everything produced at once. "
        f"With one worker per stage the pipeline's processes (services, broker, Redis) used {busy_share:.0%} of "
        f"the {cores} cores on average, while the machine's 1-minute load average (other sessions included) was "
        f"{sat_docs.load_at_end:.1f} at the end of the phase; a second pii and embed process gave "
        f"{sat_two.docs_per_s / sat_docs.docs_per_s:.2f}x the rate (load {sat_two.load_at_end:.1f}). More worker "
        "processes only help while a stage's workers, not the cores, are the limit: on this 2-core machine "
        + (f"the cores are (the model's cores bound, {cores_bound:.2f} documents/s, is below the busiest stage's "
           f"one-worker bound, {stage_bound:.2f})" if cores_bound <= stage_bound else
           f"the busiest stage's one-worker bound ({stage_bound:.2f} documents/s) is below the cores bound "
           f"({cores_bound:.2f}), so a second worker of it should help where the cores are free")
        + ", and item 8's 4-worker rows are modelled, not run. A group uses at most as many consumers as there are partitions, so with 1 "
        "partition a second worker would sit idle (not run here: Kafka's group assignment, modelled as min(w, P)).",
        "Model (`kafka_model.ScalingModel`, unit-tested): X(c, P, w) = min(c / (C_infra + sum_s C_s), "
        "min_s min(w_s, P) / C_s) documents/s, with C_s = CPU seconds per document of stage s measured in the "
        "`docs` phase (below) and C_infra the broker's and Redis'. Each worker process is assumed to use at most "
        "one core and nothing else to contend; the measured rate over the model's on this machine, "
        f"efficiency = {efficiency:.2f}, is applied to the predictions in the second column (queueing, the "
        "shared machine, serialization between services are in it).",
        common.table(["stage", "C_s CPU ms per document"],
                     [[s, f"{1000 * c:.0f}"] for s, c in sorted(stage_cost.items(), key=lambda x: -x[1])]
                     + [["broker + Redis", f"{1000 * infra_cost:.0f}"]]),
        common.table(["cores", "partitions", "workers (beyond 1)", "model documents/s", "x efficiency",
                      "words/s (x efficiency)", "busiest stage per worker"], model_rows),
        "The workers per stage are in proportion to each stage's cost (`ScalingModel.workers_for`); the "
        "partitions must be at least the largest stage's workers. The model is linear in cores because the "
        "stages are independent consumers of partitioned topics; what it leaves out is Redis (one thread: its "
        f"{1000 * sat_docs.cpu.get('redis', 0) / sat_docs.out:.0f} ms/doc caps it near "
        f"{sat_docs.out / max(sat_docs.cpu.get('redis', 0), 1e-9):,.0f} documents/s) and the refit stage, a "
        "single process by design (it owns the reservoir).",
    ]))
    results.section("Side by side in this run: `anonstream run` and Presidio analyze+anonymize", "\n\n".join([
        common.table(["system", "words/s per round", "median words/s"], [
            ["Presidio analyze + anonymize (per document, default recognizers and operator)",
             ", ".join(f"{x:,.0f}" for x in sbs["presidio"]), f"{presidio_wps:,.0f}"],
            ["`anonstream run` (embedded runner, models loaded)", ", ".join(f"{x:,.0f}" for x in sbs["embedded"]),
             f"{embedded_wps:,.0f}"],
            ["the services (saturation, `docs` phase above)", "", f"{sat_docs.words_per_s:,.0f}"],
        ]),
        f"**anonstream run / Presidio = {common.spread(ratios)}x** (per round; issue target >= 1.0x) while doing "
        f"embedding, clustering, swapping and audit too; services / Presidio = {sat_docs.words_per_s / presidio_wps:.2f}x "
        f"(different phases of the run). Same {len(dev)} TAB dev texts ({words(dev):,} words), same spaCy model "
        f"`{sbs['model']}`; the two take turns round by round; Presidio changed {sbs['changed']} of {len(dev)} "
        f"texts; its words per CPU-second: {', '.join(f'{x:,.0f}' for x in sbs['presidio_cpu'])}. `anonstream run` "
        "runs in a fresh child process per round; its time is from models loaded to the last output "
        "(`RunReport.seconds`); its words per CPU-second *including model loading* (the child's whole CPU time, "
        f"so a lower bound): {', '.join(f'{x:,.0f}' for x in sbs['embedded_cpu'])}. Neither is pinned to a core: "
        "Presidio runs on one thread, `anonstream run` on several (ONNX Runtime, numpy), so on a machine "
        "loaded by other sessions the wall-clock ratio is lower than on an idle one.",
    ]))
    results.section("Refit time against reservoir size and K (the refit core timed directly)", "\n\n".join([
        common.table(["reservoir n", "K asked", "K fitted", "cold fit s", "cold CPU s", "cold EM iterations",
                      "warm refit s", "warm EM iterations"], refit_rows),
        f"`stages.cluster.fit_checked` (pkb family, min weight 1e-3) on {len(vectors):,} real embeddings read from "
        "`chunks.embedded` in this run, resampled with replacement to n plus N(0, 0.01) noise per coordinate. Cold: "
        "k-means++ with 4 starts (a refit after drift); warm: from the cold model on a second, independent "
        "resample of the same size (a scheduled refit after the reservoir moved on). The refit "
        "stage runs this every `ANONSTREAM_REFIT_INTERVAL_S` on its reservoir (default 20,000) in its own process; "
        "cluster keeps assigning with the current model meanwhile.",
    ]))
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
