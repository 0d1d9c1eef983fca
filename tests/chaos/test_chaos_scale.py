"""Chaos at scale: two instances of every stage on 8 partitions against the Redis Cluster, exactly-once on
(ANONSTREAM_PROCESSING_GUARANTEE=exactly-once), after the one-instance suite (test_chaos.py, whose processes are
stopped first). Under a steady stream of TAB documents and documents that name the same people:

- 10 ``kill -9``s of random running instances, each restarted at once (first one instance of every stage in
  random order, for refit its leader of the moment, then two of any stage), one restart of the Redis Cluster master that serves the refit lease and the model registry, and one
  broker restart;
- every document exactly once at a read_committed consumer of the sanitized topic (0 lost, 0 duplicates, no
  deduplication), no valid record dead-lettered;
- the same person gets the same pseudonym whichever pii instance handled the document (documents naming the same
  six people on every partition, while each pii instance owns some of them; again during the chaos);
- no swap partner claimed twice (every chunk in at most one swap pair, every pair two chunks that name each
  other);
- refit leadership: at most one instance leads at any sample, every fencing token is handed to one acquisition,
  and the lead passes to the other instance after the leader's kill.

The figures go to the "Chaos at scale" part of benchmarks/results/reliability.md (conftest.write_results).
"""
from __future__ import annotations

import asyncio
import os
import random
import re
import threading
import time
import urllib.request
import uuid
from collections import Counter, defaultdict

import orjson
import pytest
import redis
from redis.crc import key_slot

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.kafka import DocumentPartitioner, create_topics
from anonstream.runtime.launch import service_env
from anonstream.runtime.wiring import STAGE_NAMES
from anonstream.stores.redis_state import RedisModelRegistry, connect, slot_tag

from .conftest import (ROOT, SCALE_HEADING, Infra, Pipeline, Reader, document_producer, person_pseudonyms, produce,
                       write_results)

pytestmark = pytest.mark.integration

SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"
INSTANCES, PARTITIONS = 2, 8
N_KILLS = 10  # the first 8: one instance of each stage, in random order (refit's: its leader); then any instances
KILL_GAP_S = (6, 12)  # seconds between kills (random, seeded)
REDIS_AFTER_KILL, BROKER_AFTER_KILL = 3, 6  # the infrastructure restarts start right after these kills
REDIS_DOWN_S, BROKER_DOWN_S = 10, 5
EXIT_GRACE_S = 60  # a process may give up on the broker or Redis up to this long after the outage ended
LEASE_TTL_S = 6  # refit and audit leases: a takeover within TTL + TTL/3 of a leader's death
MAX_TAB_DOCS, FEED_EVERY_S = 40, 5
READY_TIMEOUT_S = 360  # 16 processes load their models on 2 cores at once
RUN = uuid.uuid4().hex[:6]
MENTIONS: dict[str, list[str]] = {}
PEOPLE = ["Henrik Vestergaard", "Agnieszka Kowalczyk", "Tomasz Wierzbicki", "Margarethe Lindqvist",
          "Oskar Brandstetter", "Ludmila Hradecka"]


def _partition(doc_id: str) -> int:
    return DocumentPartitioner()(doc_id, list(range(PARTITIONS)))


def _people_documents(prefix: str, per_partition: int = 2) -> list[dict]:
    """``per_partition`` documents on every partition, alternately naming people 0, 2, 4 and 1, 3, 5: every
    partition carries all six."""
    docs: list[dict] = []
    count = Counter()
    i = 0
    while len(docs) < PARTITIONS * per_partition:
        doc_id = f"{prefix}-{RUN}-{i}"
        i += 1
        p = _partition(doc_id)
        if count[p] == per_partition:
            continue
        names = [PEOPLE[(count[p] % 2) + 2 * k] for k in range(3)]
        count[p] += 1
        text = (f"Mr {names[0]} wrote to Ms {names[1]} about the hearing.\n"
                f"The reply of Ms {names[1]} reached Mr {names[0]} a week later, and Mr {names[2]} was told.")
        docs.append({"doc_id": doc_id, "text": text, "metadata": {"partition": p}})
        MENTIONS[doc_id] = [names[0], names[1], names[1], names[0], names[2]]  # PERSON mentions in text order
    return docs


def _gauges(port: int, names: tuple[str, ...]) -> dict[str, float] | None:
    """The named metrics of one process (first sample of each), or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            text = response.read().decode()
    except OSError:
        return None
    out: dict[str, float] = {}
    for line in text.splitlines():
        for name in names:
            if name not in out and (line.startswith(name + "{") or line.startswith(name + " ")):
                out[name] = float(line.rsplit(" ", 1)[1])
    return out


class LeaderWatch:
    """Samples, every 0.5 s in a thread, every refit instance's leadership gauges and the registry's version."""

    def __init__(self, pipeline: Pipeline, registry: RedisModelRegistry):
        self.pipeline = pipeline
        self.registry = registry
        self.samples: list[tuple[float, dict[str, tuple[float, float]], int | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            seen = {}
            for name in self.pipeline.instances_of("refit"):
                process = self.pipeline.processes.get(name)
                if process is None or process.poll() is not None:
                    continue
                g = _gauges(self.pipeline.ports[name], ("anonstream_refit_leader", "anonstream_refit_leader_token"))
                if g and "anonstream_refit_leader" in g:
                    seen[name] = (g["anonstream_refit_leader"], g.get("anonstream_refit_leader_token", 0))
            try:
                version = self.registry.current_version()
            except Exception:  # the registry's master is down
                version = None
            self.samples.append((now, seen, version))
            self._stop.wait(0.5)

    def leader(self) -> str | None:
        """The instance that led at the last sample."""
        for _, seen, _ in reversed(self.samples):
            leaders = [n for n, (lead, _) in seen.items() if lead == 1]
            if leaders:
                return leaders[0]
        return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _cluster_nodes() -> list[str]:
    return os.environ.get("ANONSTREAM_REDIS_CLUSTER_NODES", "127.0.0.1:17001").split(",")


def _node_of_slot(nodes: list[str], slot: int) -> str:
    host, port = nodes[0].rsplit(":", 1)
    client = redis.Redis(host=host, port=int(port))
    try:
        for start, end, master, *_ in client.execute_command("CLUSTER SLOTS"):
            if start <= slot <= end:
                return f"{master[0].decode() if isinstance(master[0], bytes) else master[0]}:{master[1]}"
    finally:
        client.close()
    raise AssertionError(f"slot {slot} not served")


@pytest.fixture(scope="module")
def scale(kafka_bootstrap, tmp_path_factory):
    """The multi-instance pipeline: its own topics (8 partitions) and tenant, the Redis Cluster, exactly-once."""
    nodes = _cluster_nodes()
    tenant = f"scale-{RUN}"
    lease_key = f"anonstream:{slot_tag(tenant, 'mixture')}:leader:lease"  # stores/redis_lease.py
    restart_node = _node_of_slot(nodes, key_slot(lease_key.encode()))
    url_node = next(n for n in nodes if n != restart_node)  # services and new processes start from a node that stays up
    env = service_env(kafka_bootstrap, f"redis://{url_node}/0", "scale", {
        "ANONSTREAM_TENANT": tenant,
        "ANONSTREAM_REDIS_CLUSTER": "1",
        "ANONSTREAM_PROCESSING_GUARANTEE": "exactly-once",
        "ANONSTREAM_PARTITIONS": str(PARTITIONS),
        "ANONSTREAM_REFIT_LEASE_TTL_S": str(LEASE_TTL_S),
        "ANONSTREAM_AUDIT_LEASE_TTL_S": str(LEASE_TTL_S),
        "ANONSTREAM_REFIT_INTERVAL_S": "5",
        "ANONSTREAM_AUDIT_UTILITY": "0",
        "ANONSTREAM_LOG_LEVEL": "INFO",
    })
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=env["ANONSTREAM_TOPIC_PREFIX"], partitions=PARTITIONS)
    asyncio.run(create_topics(settings))
    pipeline = Pipeline(env, tmp_path_factory.mktemp("chaos-scale-logs"), instances=INSTANCES)
    started = time.monotonic()
    for name in pipeline.members:
        pipeline.start(name)

    async def all_ready():
        for name in pipeline.members:
            await pipeline.wait_ready(name, READY_TIMEOUT_S)

    try:
        asyncio.run(all_ready())
    except BaseException:
        pipeline.stop()
        raise
    startup_s = time.monotonic() - started
    client = connect(f"redis://{url_node}/0", cluster=True)
    reader = Reader(settings, [topics.SANITIZED, topics.CHUNKS_SANITIZED, topics.CHUNKS_PII, topics.SWAP_LOG,
                               topics.DEAD_LETTER])
    try:
        yield dict(pipeline=pipeline, settings=settings, reader=reader, client=client, tenant=tenant,
                   restart_node=restart_node, url_node=url_node, startup_s=startup_s)
    finally:
        reader.close()
        pipeline.stop()
        client.close()


def _sanitized_by_doc(reader: Reader, ids: set[str]) -> Counter:
    return Counter(v["doc_id"] for v in reader.values(topics.SANITIZED) if v.get("doc_id") in ids)


def _pii_partitions(pipeline: Pipeline) -> dict[str, set[int]]:
    """The chunks-topic partitions each pii instance owns now: its last assignment line (every assignment is
    logged whole: the consumer revokes all partitions before a new assignment)."""
    out = {}
    for name in pipeline.instances_of("pii"):
        lines = [line for line in pipeline.current_log(name).splitlines() if "transactional producers for" in line]
        out[name] = {int(p) for p in re.findall(r"\.chunks\.v1\[(\d+)\]", lines[-1])} if lines else set()
    return out


def test_two_instances_per_stage_on_a_redis_cluster_exactly_once_through_kills_and_restarts(scale, kafka_bootstrap):
    pipeline: Pipeline = scale["pipeline"]
    reader: Reader = scale["reader"]
    settings: Settings = scale["settings"]
    infra = Infra(kafka_bootstrap)
    rng = random.Random(28)
    registry = RedisModelRegistry(scale["client"], scale["tenant"], keep=1000)
    watch = LeaderWatch(pipeline, registry)
    started = time.monotonic()

    # 1. the same people on every partition while the assignment is stable: both pii instances name them
    calm = _people_documents("people-a")
    calm_ids = {d["doc_id"] for d in calm}
    asyncio.run(produce(settings, [(d["doc_id"].encode(), orjson.dumps(d)) for d in calm]))
    asyncio.run(reader.wait_for(lambda: len(_sanitized_by_doc(reader, calm_ids)) == len(calm_ids), 300, pipeline,
                                "the people documents before the chaos"))
    owned = _pii_partitions(pipeline)
    assert all(owned.values()) and set().union(*owned.values()) == set(range(PARTITIONS)) and \
        sum(map(len, owned.values())) == PARTITIONS, f"pii assignment not known from the logs: {owned}"
    handled_by = {d["doc_id"]: next(n for n, ps in owned.items() if _partition(d["doc_id"]) in ps) for d in calm}

    # 2. load with kills, one Redis master restart, one broker restart
    with SAMPLE.open("rb") as handle:
        tab = [orjson.loads(line) for line in handle][:MAX_TAB_DOCS]
    stormy = _people_documents("people-b")
    sent: list[dict] = []
    victims: list[str] = []
    restart_s: list[float] = []
    outages: dict[str, float] = {}
    exits: list[tuple[str, int, bool]] = []  # (process, exit code, during an outage)

    async def chaos() -> None:
        stop_feeding = asyncio.Event()
        ready = {name: True for name in pipeline.members}

        async def feed() -> None:
            queue = list(tab)
            for j, doc in enumerate(stormy):  # a people document after every other TAB document
                queue.insert(2 * j + 1, doc)
            async with document_producer(settings) as producer:  # one producer: it rides out the broker restart
                for doc in queue:
                    if stop_feeding.is_set():
                        return
                    await producer.send_and_wait(topics.name(topics.DOCUMENTS, settings.topic_prefix),
                                                 orjson.dumps(doc), key=doc["doc_id"].encode())
                    sent.append(doc)
                    await asyncio.sleep(FEED_EVERY_S / 2 if doc["doc_id"].startswith("people") else FEED_EVERY_S)

        # A process that starts while the broker or its Redis node is down exits (its supervisor would start it
        # again): the restarts after kills wait out an outage, and an outage waits until the processes being
        # restarted consume (no kill meanwhile). Kills go on during an outage.
        infra_up = asyncio.Event()
        infra_up.set()
        outage_pending = []

        async def restart(name: str) -> None:
            await infra_up.wait()
            t0 = time.monotonic()
            pipeline.start(name)
            await pipeline.wait_ready(name, READY_TIMEOUT_S)
            restart_s.append(time.monotonic() - t0)
            ready[name] = True

        async def outage(what: str, down) -> None:
            outage_pending.append(what)
            await infra_up.wait()
            while not all(ready.values()):
                await asyncio.sleep(0.5)
            infra_up.clear()
            outage_pending.remove(what)
            t0 = time.monotonic()
            try:
                await down()
            finally:
                infra_up.set()
            outages[what] = time.monotonic() - t0
            windows.append((t0, time.monotonic() + EXIT_GRACE_S))

        async def supervise() -> None:
            """A process that exits by itself is restarted, as a supervisor would; its exit is recorded with
            whether it fell in an outage (or up to EXIT_GRACE_S after one), and one outside is a crash."""
            while True:
                for name in pipeline.exited():
                    if ready[name]:
                        now = time.monotonic()
                        in_outage = not infra_up.is_set() or any(a <= now <= b for a, b in windows)
                        exits.append((name, pipeline.processes[name].returncode, in_outage))
                        ready[name] = False
                        tasks.append(asyncio.create_task(restart(name)))
                await asyncio.sleep(1)

        async def redis_restart() -> None:
            await asyncio.to_thread(infra.restart_redis_cluster_node, int(scale["restart_node"].rsplit(":", 1)[1]),
                                    REDIS_DOWN_S)

        async def broker_restart() -> None:
            argv = await asyncio.to_thread(infra.stop_kafka)
            await asyncio.sleep(BROKER_DOWN_S)
            await asyncio.to_thread(infra.start_kafka, argv)

        feeder = asyncio.create_task(feed())
        tasks = []
        windows: list[tuple[float, float]] = []
        pipeline.tolerate_exits = True
        supervisor = asyncio.create_task(supervise())
        await asyncio.sleep(10)
        plan = rng.sample(STAGE_NAMES, len(STAGE_NAMES)) + [None] * (N_KILLS - len(STAGE_NAMES))
        for k, stage in enumerate(plan):
            while outage_pending:
                await asyncio.sleep(0.5)
            leader = watch.leader()
            running = sorted(n for n, up in ready.items() if up and (stage is None or n.startswith(stage + "-")))
            if stage == "refit" and leader is not None and ready[leader]:
                victim = leader
            else:
                victim = rng.choice(running or sorted(n for n, up in ready.items() if up))
            pipeline.kill(victim)
            ready[victim] = False
            victims.append(victim + (" (refit leader)" if victim == leader else ""))
            tasks.append(asyncio.create_task(restart(victim)))
            if k == REDIS_AFTER_KILL:
                tasks.append(asyncio.create_task(outage("redis", redis_restart)))
            if k == BROKER_AFTER_KILL:
                tasks.append(asyncio.create_task(outage("broker", broker_restart)))
            await asyncio.sleep(rng.uniform(*KILL_GAP_S))
        while not all(t.done() for t in tasks):  # the supervisor may add restarts meanwhile
            await asyncio.gather(*tasks)
        supervisor.cancel()
        pipeline.tolerate_exits = False
        stop_feeding.set()
        await feeder

    asyncio.run(chaos())
    chaos_s = time.monotonic() - started
    ids = {d["doc_id"] for d in sent} | calm_ids
    waited = asyncio.run(reader.wait_for(lambda: len(_sanitized_by_doc(reader, ids)) == len(ids), 600, pipeline,
                                         "every document sanitized after the chaos"))
    time.sleep(10)  # a late duplicate would show now
    watch.close()

    # exactly once at a read_committed consumer, no deduplication
    copies = _sanitized_by_doc(reader, ids)
    lost = ids - set(copies)
    duplicated = {k: n for k, n in copies.items() if n > 1}
    chunk_at: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)  # chunk -> (partition, offset)s
    for partition, offset, _, value in reader.records(topics.CHUNKS_SANITIZED):
        c = orjson.loads(value)
        if c["doc_id"] in ids:
            chunk_at[(c["doc_id"], c["chunk_index"])].append((partition, offset))
    chunk_copies = Counter({k: len(v) for k, v in chunk_at.items()})
    # where a duplicate first appears: records with one key at two offsets, per topic the reader follows
    keys_twice = {t.suffix: sum(n - 1 for n in Counter(key for _, _, key, _ in reader.records(t)).values() if n > 1)
                  for t in (topics.CHUNKS_PII, topics.CHUNKS_SANITIZED, topics.SWAP_LOG, topics.SANITIZED)}
    dead = [d for d in reader.values(topics.DEAD_LETTER) if d["stage"] != "ingest"]

    # pseudonyms: one per person, the same on both pii instances, before and during the chaos; distinct people
    people_ids = calm_ids | {d["doc_id"] for d in stormy if d["doc_id"] in ids}
    surrogates = person_pseudonyms(reader.values(topics.CHUNKS_PII), {d: MENTIONS[d] for d in people_ids})
    unaligned = surrogates.pop("?", {})
    per_person = {name: set().union(*docs.values()) for name, docs in surrogates.items()}
    instances_per_person = {name: {handled_by[d] for d in docs if d in handled_by} for name, docs in surrogates.items()}

    # swap: every chunk in at most one pair, every pair two chunks naming each other
    log = [r for r in reader.values(topics.SWAP_LOG) if r["doc_id"] in ids]
    distinct_log = {(r["chunk_key"], r["pair_id"], r["action"]): r for r in log}
    # a pair claimed from the pool has a pair id and a partner; "swapped" without them: values an earlier chunk's
    # swap changed, carried over through the document's memory (no claim)
    swapped = [r for r in distinct_log.values() if r["action"] == "swapped" and r["pair_id"]]
    pairs: dict[str, list[dict]] = defaultdict(list)
    for r in swapped:
        pairs[r["pair_id"]].append(r)
    releases_per_chunk = Counter(key for key, _, _ in distinct_log)
    claimed_twice = sorted(k for k, n in releases_per_chunk.items() if n > 1)
    bad_pairs = [p for p, rs in pairs.items() if len(rs) != 2 or not all(r["partner"] for r in rs) or
                 {rs[0]["partner"]["chunk_key"], rs[1]["partner"]["chunk_key"]} != {rs[0]["chunk_key"], rs[1]["chunk_key"]}]

    # refit leadership
    most_leaders = max((sum(1 for lead, _ in seen.values() if lead == 1) for _, seen, _ in watch.samples), default=0)
    acquisitions = [(name, int(m)) for name in pipeline.instances_of("refit")
                    for m in re.findall(r"leader with fencing token (\d+)",
                                        pipeline.log_path(name).read_text(errors="replace"))]
    tokens = Counter(t for _, t in acquisitions)
    leader_timeline: list[tuple[float, str, int]] = []
    for t, seen, _ in watch.samples:
        for name, (lead, token) in seen.items():
            if lead == 1 and (not leader_timeline or leader_timeline[-1][1:] != (name, int(token))):
                leader_timeline.append((t, name, int(token)))
    handovers = [(a, b) for a, b in zip(leader_timeline, leader_timeline[1:]) if a[1] != b[1]]
    leader_gaps = _leaderless_gaps(watch.samples)
    versions = [v for _, _, v in watch.samples if v is not None]
    handover_at = handovers[0][1][0] if handovers else float("inf")
    version_at_handover = max((v for t, _, v in watch.samples if v is not None and t <= handover_at), default=0)
    newest_after = max((v for t, _, v in watch.samples if v is not None and t > handover_at), default=0)

    wall = time.monotonic() - started + scale["startup_s"]
    figures = {
        "instances per stage / partitions per topic": f"{INSTANCES} / {PARTITIONS}",
        "Redis": f"Redis Cluster, 3 masters (services start from {scale['url_node']})",
        "processing guarantee": "exactly-once (every stage transactional; the reader is read_committed)",
        "startup of the 16 processes, until all consume": f"{scale['startup_s']:.0f} s",
        "documents: TAB / naming the same six people": f"{len([d for d in sent if not d['doc_id'].startswith('people')])}"
                                                        f" / {len(people_ids)}",
        "words": sum(len(d["text"].split()) for d in sent + calm),
        "kills (kill -9, restarted at once)": f"{len(victims)}: " + ", ".join(victims),
        "restart to consuming, mean / max": f"{sum(restart_s) / len(restart_s):.0f} s / {max(restart_s):.0f} s",
        "Redis master restart (SIGTERM, down, start, cluster_state:ok)":
            f"{scale['restart_node']} (serves the refit lease and the model registry), {outages.get('redis', 0):.0f} s",
        "broker restart (SIGTERM, 5 s, same data dir)": f"{outages.get('broker', 0):.0f} s",
        "sanitized documents at the read_committed consumer / distinct": f"{sum(copies.values())} / {len(copies)}",
        "lost / duplicated (no deduplication)": f"{len(lost)} / {len(duplicated)}",
        "sanitized chunks / duplicated": f"{sum(chunk_copies.values())} / "
                                         f"{sum(chunk_copies.values()) - len(chunk_copies)}",
        "records the reader fetched again at an offset it had read (its position reset; kept once)":
            sum(reader.seen.refetched.values()),
        "records whose key is at two offsets, per topic": ", ".join(f"{t} {n}" for t, n in keys_twice.items()),
        "valid records dead-lettered / crashes": f"{len(dead)} / {len(pipeline.crashes)}",
        "processes that exited by themselves during or just after an outage (restarted as a supervisor would)":
            ", ".join(f"{n} (exit {c})" for n, c, inside in exits if inside) or "none",
        "processes that exited by themselves outside an outage": sum(1 for *_, inside in exits if not inside),
        "documents whose PERSON mentions did not line up": len(unaligned),
        "people with one pseudonym in all their documents": f"{sum(1 for s in per_person.values() if len(s) == 1)}"
                                                           f" / {len(PEOPLE)}",
        "of them named in documents both pii instances handled": sum(1 for s in instances_per_person.values()
                                                                      if len(s) == INSTANCES),
        "swap pairs / chunks in two pairs or released twice / malformed pairs":
            f"{len(pairs)} / {len(claimed_twice)} / {len(bad_pairs)}",
        "swap-log records / identical copies": f"{len(log)} / {len(log) - len(distinct_log)}",
        "refit leaders at once, most in any sample (every 0.5 s)": f"{most_leaders} ({len(watch.samples)} samples)",
        "refit lease acquisitions (fencing tokens, each to one holder)":
            ", ".join(f"{n} #{t}" for n, t in sorted(acquisitions, key=lambda a: a[1])),
        "leadership handovers seen / longest time without a leader": f"{len(handovers)} / {max(leader_gaps, default=0):.0f} s",
        "mixture versions seen (first / at the first handover / last)":
            f"{min(versions, default=0)} / {version_at_handover} / {max(versions, default=0)}",
        "wall time (startup, stream with chaos, drain)": f"{wall:.0f} s ({scale['startup_s']:.0f} + "
                                                         f"{chaos_s - waited:.0f} + {waited:.0f} s)",
    }
    print("\n".join(f"{k}: {v}" for k, v in figures.items()))

    assert all(inside for *_, inside in exits), f"processes exited outside an outage: {exits}"
    assert not lost, f"documents lost: {sorted(lost)[:5]}"
    assert not duplicated, f"documents more than once at a read_committed consumer: {duplicated}"
    assert sum(chunk_copies.values()) == len(chunk_copies), \
        f"sanitized chunks more than once, at (partition, offset): {[(k, v) for k, v in chunk_at.items() if len(v) > 1][:5]}; " \
        f"keys at two offsets per topic: {keys_twice}"
    assert not dead, f"valid records dead-lettered: {Counter((d['stage'], d['error_class']) for d in dead)}"
    assert not unaligned, f"PERSON mentions not found as written: {unaligned}"
    assert set(per_person) == set(PEOPLE), f"people not found by the detector: {set(PEOPLE) - set(per_person)}"
    assert all(len(s) == 1 for s in per_person.values()), f"a person with several pseudonyms: {per_person}"
    assert len(set().union(*per_person.values())) == len(PEOPLE), "two people share a pseudonym"
    assert all(len(s) == INSTANCES for s in instances_per_person.values()), \
        f"the check needs every person on both pii instances: {instances_per_person}"
    assert not claimed_twice and not bad_pairs, f"double claims {claimed_twice[:5]}, malformed pairs {bad_pairs[:5]}"
    assert most_leaders <= 1, "two refit instances led at once"
    assert all(n == 1 for n in tokens.values()), f"a fencing token handed out twice: {acquisitions}"
    assert handovers, f"the refit lead never passed to the other instance: {leader_timeline}"
    assert newest_after > version_at_handover, \
        f"no model version published after the first handover (version {version_at_handover} then)"

    write_results("\n".join([
        f"{SCALE_HEADING}: two instances per stage, 8 partitions, Redis Cluster, exactly-once", "",
        "Command: `make test-chaos` (tests/chaos/test_chaos_scale.py, after the one-instance suite, whose processes "
        "it stops first; the same Kafka, and the 3-master Redis Cluster of deploy/infra.sh). 16 stage processes "
        f"(ANONSTREAM_INSTANCE 0 and 1 of each stage), leases of {LEASE_TTL_S} s, one run, seed 28 for the "
        f"choice of victims. 1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        "", "| figure | value |", "|---|---|", *[f"| {k} | {v} |" for k, v in figures.items()], ""]), first=False)


def _leaderless_gaps(samples) -> list[float]:
    """Lengths of the stretches of samples in which no refit instance led (after the first leader)."""
    gaps, since, led = [], None, False
    for t, seen, _ in samples:
        leading = any(lead == 1 for lead, _ in seen.values())
        if leading:
            if since is not None:
                gaps.append(t - since)
            since, led = None, True
        elif led and since is None:
            since = t
    return gaps
