"""Issue 13, reliability items 1-4, on the real services (one process per stage, started once by the
session fixtures in conftest.py). The tests run in file order and share the pipeline:

1. hostile input: 10,000 seeded generated records of ten kinds around 200 good documents;
2. crash under load: a steady stream of TAB documents while a stage process is SIGKILLed and restarted
   10 times;
3. Redis restart mid-stream (AOF persistence, deploy/redis-local.sh); cluster assignment on its cached model
   while Redis is down; pseudonyms the same before and after;
4. broker restart mid-stream;
5. leakage: the detector re-run on the sanitized TAB documents of test 2, the share of TAB's gold DIRECT
   mentions that survive, and every captured log line and metric label scanned for input text.
Each test bounds its waits and records its figures for benchmarks/results/reliability.md.
"""
from __future__ import annotations

import asyncio
import base64
import random
import re
import time
import uuid
from collections import Counter
from pathlib import Path

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from anonstream import topics
from anonstream.evaluation.release import evaluate_release
from anonstream.evaluation.tab import load_tab
from anonstream.records import Document
from anonstream.runtime.kafka import DocumentPartitioner
from anonstream.runtime.wiring import STAGE_NAMES

from .conftest import ROOT, person_pseudonyms, produce

pytestmark = pytest.mark.integration

SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"
GOLD = ROOT.parent / "shared" / "data" / "tab" / "echr_train_first100.json"
N_HOSTILE, N_GOOD = 10_000, 200
N_KILLS, MAX_TAB_DOCS, FEED_EVERY_S = 10, 40, 8  # the stream lasts while the kills go on (up to 320 s)
PARTITIONS = list(range(4))
RUN = uuid.uuid4().hex[:6]
NEUTRAL = [
    "The meeting was held in the large room and went on for a while.",
    "Nothing else was said on that point, and the discussion moved on.",
    "The hearing was adjourned after a short debate about the schedule.",
    "Copies of the file were sent to each of the parties by post.",
    "The report was read aloud and no one asked any further questions.",
]
# Names for the Redis test: the same person before and after the restart must get the same pseudonym.
PEOPLE = ["Henrik Vestergaard", "Agnieszka Kowalczyk", "Tomasz Wierzbicki", "Margarethe Lindqvist",
          "Oskar Brandstetter", "Ludmila Hradecka"]
shared: dict[str, object] = {}  # test 2's documents, for test 5


def _good_document(i: int, prefix: str) -> dict:
    rng = random.Random(i)
    return {"doc_id": f"{prefix}-{RUN}-{i}", "text": "\n".join(rng.sample(NEUTRAL, 2)), "metadata": {"i": i}}


def _nested(depth: int, leaf: object) -> object:
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


def _hostile(rng: random.Random) -> list[tuple[str, bytes | None]]:
    """N_HOSTILE records of ten kinds, in a seeded shuffled order: (kind, value)."""
    good = orjson.dumps(_good_document(0, "template"))
    makers = {
        "invalid JSON": lambda: good[:rng.randrange(1, len(good) - 1)] if rng.random() < 0.5
        else b"{" + bytes(rng.choice(b"abc:,[]{}\"' ") for _ in range(rng.randrange(1, 60))),
        "wrong schema": lambda: rng.choice([
            orjson.dumps({"doc_id": f"x{rng.random()}"}),
            orjson.dumps({"doc_id": "x", "text": "t", "extra": 1}),
            orjson.dumps({"doc_id": "has space", "text": "t"}),
            orjson.dumps({"doc_id": "x" * 300, "text": "t"}),
            orjson.dumps(["doc_id", "text"]),
            orjson.dumps(rng.random()),
        ]),
        "wrong types": lambda: orjson.dumps(rng.choice([
            {"doc_id": "x", "text": rng.randrange(10**6)},
            {"doc_id": "x", "text": ["a", "list"]},
            {"doc_id": "x", "text": None},
            {"doc_id": 17, "text": "a number as id"},
            {"doc_id": "x", "text": "t", "metadata": "not an object"},
            {"doc_id": "x", "text": True},
        ])),
        "empty": lambda: rng.choice([b"", b"{}", b"null", orjson.dumps({"doc_id": "x", "text": ""}), None]),
        "10 MB text": lambda: orjson.dumps({"doc_id": "huge", "text": "word " * (2 << 20)}),
        "deeply nested": lambda: rng.choice([
            b"[" * 5000 + b"]" * 5000,
            orjson.dumps({"doc_id": "deep", "text": "t", "metadata": _nested(100, 1)}),
            orjson.dumps({"doc_id": "deep", "text": _nested(200, "t")}),
        ]) if rng.random() < 0.9 else b'{"doc_id":"deep","text":"t","metadata":' + b'{"a":' * 600 + b"1" + b"}" * 601,
        "invalid UTF-8": lambda: b'{"doc_id": "utf", "text": "caf\xc3 ' + bytes([rng.randrange(0x80, 0x100)]) + b'\xff"}',
        "control characters": lambda: b'{"doc_id": "ctl", "text": "a' + bytes([rng.randrange(0, 32)]) + b'b"}',
        "binary": lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))),
        "lone surrogate": lambda: b'{"doc_id": "sur", "text": "\\ud800 alone"}',
    }
    kinds = list(makers)
    plan = [kinds[i % len(kinds)] for i in range(N_HOSTILE)]
    # 10 MB records are few (they are about size, not count); their slots go to binary records
    plan = ["binary" if k == "10 MB text" and i >= 3 * len(kinds) else k for i, k in enumerate(plan)]
    rng.shuffle(plan)
    return [(kind, makers[kind]()) for kind in plan]


def _by_doc(values: list[dict], ids: set[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for v in values:
        if v.get("doc_id") in ids:
            out.setdefault(v["doc_id"], []).append(v)
    return out


def _partition(doc_id: str) -> int:
    return DocumentPartitioner()(doc_id, PARTITIONS)


def test_hostile_input_goes_to_dead_letters_and_good_records_pass_unchanged_in_order(pipeline, reader, settings,
                                                                                    figures):
    rng = random.Random(13)
    hostile = _hostile(rng)
    good = [_good_document(i, "good") for i in range(N_GOOD)]
    stream: list[tuple[bytes | None, bytes | None]] = []
    kinds_by_key: dict[str, str] = {}
    every = N_HOSTILE // N_GOOD
    for i, (kind, value) in enumerate(hostile):
        key = f"bad-{RUN}-{i}"
        kinds_by_key[key] = kind
        stream.append((key.encode(), value))
        if i % every == every - 1:
            doc = good[i // every]
            stream.append((doc["doc_id"].encode(), orjson.dumps(doc)))
    started = time.monotonic()
    asyncio.run(produce(settings, stream))
    produced_s = time.monotonic() - started
    good_ids = {d["doc_id"] for d in good}

    def dead_keys() -> Counter:
        return Counter(base64.b64decode(d["source"]["key_b64"]).decode() for d in reader.values(topics.DEAD_LETTER)
                       if d["stage"] == "ingest" and d["source"]["key_b64"])

    def done() -> bool:
        return len(set(dead_keys()) & set(kinds_by_key)) == N_HOSTILE and \
            len(_by_doc(reader.values(topics.SANITIZED), good_ids)) == N_GOOD

    waited = asyncio.run(reader.wait_for(done, 600, pipeline, "hostile records dead-lettered, good ones sanitized"))
    time.sleep(3)  # a late duplicate would show now

    dead = [d for d in reader.values(topics.DEAD_LETTER) if d["source"]["key_b64"]
            and base64.b64decode(d["source"]["key_b64"]).decode() in kinds_by_key]
    assert all(d["error_class"] and d["error_message"] for d in dead), "a dead letter without a reason"
    assert not [d for d in reader.values(topics.DEAD_LETTER) if d["stage"] != "ingest"], \
        "a record got past ingest and failed later"
    counts = dead_keys()
    assert {k for k in kinds_by_key if counts[k] != 1} == set(), "hostile records not dead-lettered exactly once"

    # good records: unchanged, once each, and per partition in the order they were produced
    outputs = [(p, o, orjson.loads(v)) for p, o, _, v in reader.records(topics.SANITIZED)]
    outputs = [(p, o, v) for p, o, v in outputs if v["doc_id"] in good_ids]
    assert len(outputs) == N_GOOD
    originals = {d["doc_id"]: d for d in good}
    changed = [v["doc_id"] for _, _, v in outputs if v["text"] != originals[v["doc_id"]]["text"]
               or v["metadata"] != originals[v["doc_id"]]["metadata"]]
    assert not changed, f"good records changed: {changed[:5]}"
    for partition in PARTITIONS:
        sent = [d["doc_id"] for d in good if _partition(d["doc_id"]) == partition]
        seen = [v["doc_id"] for p, o, v in sorted(outputs, key=lambda x: x[1]) if p == partition]
        assert seen == sent, f"partition {partition}: good records out of order"

    by_kind = Counter(kinds_by_key.values())
    reasons = Counter(d["error_class"] for d in dead)
    figures.rows["Hostile input"] = {
        "hostile records (seeded generator, seed 13)": N_HOSTILE,
        "by kind": ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())),
        "good records around them": N_GOOD,
        "hostile records dead-lettered with a reason": f"{len(set(counts) & set(kinds_by_key))} / {N_HOSTILE}",
        "dead-letter reasons (error class)": ", ".join(f"{k} {n}" for k, n in reasons.most_common()),
        "good records out unchanged, in partition order": f"{len(outputs)} / {N_GOOD}",
        "good records lost / duplicated / crashes": f"{N_GOOD - len({v['doc_id'] for _, _, v in outputs})} / "
                                                    f"{len(outputs) - len({v['doc_id'] for _, _, v in outputs})} / "
                                                    f"{len(pipeline.crashes)}",
        "produce time, then time until all were out": f"{produced_s:.0f} s, {waited:.0f} s",
    }


def test_crash_under_load_loses_nothing_and_duplicates_nothing_after_key_dedup(pipeline, reader, settings, figures):
    rng = random.Random(2026)
    with SAMPLE.open("rb") as handle:
        tab = [orjson.loads(line) for line in handle][:MAX_TAB_DOCS]
    # every stage on the document path once, in random order, then random stages for the rest
    path = ["ingest", "pii", "embed", "cluster", "swap", "sink"]
    victims = rng.sample(path, len(path)) + [rng.choice(STAGE_NAMES) for _ in range(N_KILLS - len(path))]
    sent: list[dict] = []
    restart_s: list[float] = []
    started = time.monotonic()

    async def chaos() -> None:
        stop_feeding = asyncio.Event()

        async def feed() -> None:
            for doc in tab:
                if stop_feeding.is_set():
                    return
                await produce(settings, [(doc["doc_id"].encode(), orjson.dumps(doc))])
                sent.append(doc)
                await asyncio.sleep(FEED_EVERY_S)

        feeder = asyncio.create_task(feed())
        await asyncio.sleep(10)
        for victim in victims:
            pipeline.kill(victim)
            t0 = time.monotonic()
            pipeline.start(victim)
            await pipeline.wait_ready(victim)
            restart_s.append(time.monotonic() - t0)
            await asyncio.sleep(rng.uniform(2, 8))
        stop_feeding.set()
        await feeder

    asyncio.run(chaos())
    ids = {d["doc_id"] for d in sent}
    waited = asyncio.run(reader.wait_for(lambda: len(_by_doc(reader.values(topics.SANITIZED), ids)) == len(ids),
                                         900, pipeline, "every TAB document sanitized after the kills"))
    time.sleep(5)
    out = _by_doc(reader.values(topics.SANITIZED), ids)
    raw = sum(map(len, out.values()))
    chunk_copies = Counter((c["doc_id"], c["chunk_index"]) for c in reader.values(topics.CHUNKS_SANITIZED)
                           if c["doc_id"] in ids)
    lost = ids - set(out)
    assert not lost
    differing = sum(1 for copies in out.values() if len({orjson.dumps(v) for v in copies}) > 1)
    dead = [d for d in reader.values(topics.DEAD_LETTER) if d["stage"] != "ingest"]
    assert not dead, f"valid records dead-lettered during the kills: {Counter(d['error_class'] for d in dead)}"
    shared["tab_sent"] = sent
    shared["tab_out"] = {k: v[0] for k, v in out.items()}
    figures.rows["Crash under load (SIGKILL + restart)"] = {
        f"TAB documents streamed (one every {FEED_EVERY_S} s until the last restart)": len(sent),
        "words": sum(len(d["text"].split()) for d in sent),
        "kills (stage, in order)": f"{len(victims)}: " + ", ".join(victims),
        "restart to consuming, mean / max": f"{sum(restart_s) / len(restart_s):.0f} s / {max(restart_s):.0f} s",
        "sanitized documents on the topic before dedup (read_committed)": raw,
        "duplicates before dedup: sanitized documents": raw - len(out),
        "duplicates before dedup: sanitized chunks (at-least-once topic)":
            sum(chunk_copies.values()) - len(chunk_copies),
        "documents whose copies differ (a consumer keeps the first)": differing,
        "lost after key dedup": len(lost),
        "crashes": len(pipeline.crashes),
        "wall time (stream + kills, then drain)": f"{time.monotonic() - started - waited:.0f} s + {waited:.0f} s",
    }


def _person_pseudonyms(reader, docs: list[dict]) -> dict[str, set[str]]:
    """Person -> pseudonyms given to them in these documents (of ``_people_document``), from the pii stage's output."""
    mentions = {d["doc_id"]: [d["names"][0], d["names"][1], d["names"][1], d["names"][0]] for d in docs}
    found = person_pseudonyms(reader.values(topics.CHUNKS_PII), mentions)
    assert "?" not in found and len({d for by_doc in found.values() for d in by_doc}) == len(docs), \
        f"PERSON mentions not found as written: {found.get('?')}"
    return {person: set().union(*by_doc.values()) for person, by_doc in found.items()}


def _people_document(i: int, prefix: str, names: list[str]) -> dict:
    text = (f"Mr {names[0]} wrote to Ms {names[1]} about the hearing.\n"
            f"The reply of Ms {names[1]} reached Mr {names[0]} a week later.")
    return {"doc_id": f"{prefix}-{RUN}-{i}", "text": text, "metadata": {"i": i}, "names": names}


def _wire(doc: dict) -> dict:
    return {k: doc[k] for k in ("doc_id", "text", "metadata")}


def _cluster_metric(pipeline, name: str) -> float:
    for family in text_string_to_metric_families(pipeline.scrape("cluster")):
        for sample in family.samples:
            if sample.name.endswith(name):
                return sample.value
    raise AssertionError(f"cluster exposes no {name}")


def test_redis_restart_mid_stream_keeps_pseudonyms_and_cluster_runs_on_cached_model(pipeline, reader, settings,
                                                                                    infra, figures):
    before = [_people_document(i, "redis-a", [PEOPLE[i % 3], PEOPLE[(i + 1) % 3]]) for i in range(6)]
    after = [_people_document(i, "redis-b", [PEOPLE[i % 3], PEOPLE[3 + i % 3]]) for i in range(6)]
    asyncio.run(produce(settings, [(d["doc_id"].encode(), orjson.dumps(_wire(d))) for d in before]))
    ids_a = {d["doc_id"] for d in before}
    asyncio.run(reader.wait_for(lambda: len(_by_doc(reader.values(topics.SANITIZED), ids_a)) == len(ids_a),
                                300, pipeline, "documents before the Redis restart"))
    pseudonyms_a = _person_pseudonyms(reader, before)
    # chunks of these documents, replayed under new ids straight to the cluster stage while Redis is down
    embedded = [c for c in reader.values(topics.CHUNKS_PII) if c["doc_id"] in ids_a]
    assert embedded
    unavailable_before = _cluster_metric(pipeline, "registry_unavailable")
    started = time.monotonic()

    async def restart_mid_stream() -> tuple[float, float]:
        feeder = asyncio.create_task(produce(settings, [(d["doc_id"].encode(), orjson.dumps(_wire(d))) for d in after],
                                             rate_per_s=0.5))
        await asyncio.sleep(3)
        down_at = time.monotonic()
        restart = asyncio.create_task(asyncio.to_thread(infra.restart_redis, 15))
        await asyncio.sleep(3)
        await _replay_to_cluster(settings, embedded[:4], "cached")
        unavailable_during = _cluster_metric(pipeline, "registry_unavailable")
        await restart
        await feeder
        return unavailable_during, time.monotonic() - down_at

    unavailable_during, outage_s = asyncio.run(restart_mid_stream())
    ids_b = {d["doc_id"] for d in after}
    waited = asyncio.run(reader.wait_for(lambda: len(_by_doc(reader.values(topics.SANITIZED), ids_b)) == len(ids_b),
                                         300, pipeline, "documents after the Redis restart"))
    out = _by_doc(reader.values(topics.SANITIZED), ids_b)
    assert len(out) == len(ids_b)
    assert not [d for d in reader.values(topics.DEAD_LETTER) if d["stage"] != "ingest"]
    assert unavailable_during > unavailable_before, "cluster did not assign while the registry was unreachable"
    pseudonyms_b = _person_pseudonyms(reader, after)
    same = {name: (pseudonyms_a[name], pseudonyms_b.get(name)) for name in pseudonyms_a}
    assert all(len(a) == 1 and a == b for a, b in same.values()), f"pseudonyms changed: {same}"
    new = {s for name, ss in pseudonyms_b.items() if name not in pseudonyms_a for s in ss}
    old = {s for ss in pseudonyms_a.values() for s in ss}
    assert new and not new & old, "a new person got a pseudonym already in use"
    figures.rows["Redis restart mid-stream (AOF, appendfsync everysec)"] = {
        "documents before / during and after": f"{len(before)} / {len(after)}",
        "Redis down (stop, 15 s, start)": f"{outage_s:.0f} s",
        "cluster batches on the cached model while Redis was down": int(unavailable_during - unavailable_before),
        "persons seen before the restart, same pseudonym after": f"{sum(1 for a, b in same.values() if a == b)} / "
                                                                 f"{len(same)}",
        "new persons after the restart, fresh pseudonyms": len(new),
        "lost / dead-lettered / crashes": f"{len(ids_b) - len(out)} / 0 / {len(pipeline.crashes)}",
        "time until all were out after the restart": f"{waited:.0f} s",
        "wall time": f"{time.monotonic() - started:.0f} s",
    }


async def _replay_to_cluster(settings, chunks: list[dict], prefix: str) -> None:
    """Chunks of the pii topic under new ids, with unit vectors as their embedding, straight onto the cluster
    stage's input topic (nothing before the cluster stage gets past a Redis outage: the pii stage needs it)."""
    from aiokafka import AIOKafkaProducer

    from anonstream.embedding import space_name
    from anonstream.embedding.static import DIMS

    space = space_name(settings.embed_model, settings.embed_backend)  # the space the embed stage writes
    dim = DIMS if settings.embed_backend == "static" else 384
    vectors = [[random.Random(i).gauss(0, 1) for _ in range(dim)] for i in range(len(chunks))]
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        for i, (chunk, vector) in enumerate(zip(chunks, vectors)):
            norm = sum(v * v for v in vector) ** 0.5
            record = {**chunk, "doc_id": f"{prefix}-{RUN}-{i}",
                      "embedding": {"model": space, "dim": dim, "vector": [v / norm for v in vector]},
                      "lineage": {**chunk["lineage"], "embed": "1"}}
            await producer.send_and_wait(topics.name(topics.CHUNKS_EMBEDDED, settings.topic_prefix),
                                         orjson.dumps(record), key=record["doc_id"].encode())
    finally:
        await producer.stop()
    await asyncio.sleep(5)


def test_broker_restart_mid_stream_loses_nothing(pipeline, reader, settings, infra, figures):
    docs = [_good_document(i, "broker") for i in range(30)]
    started = time.monotonic()

    async def restart_mid_stream() -> float:
        feeder = asyncio.create_task(produce(settings, [(d["doc_id"].encode(), orjson.dumps(d)) for d in docs],
                                             rate_per_s=1))
        await asyncio.sleep(8)
        t0 = time.monotonic()
        argv = await asyncio.to_thread(infra.stop_kafka)
        await asyncio.sleep(5)
        await asyncio.to_thread(infra.start_kafka, argv)
        outage = time.monotonic() - t0
        await feeder
        return outage

    outage_s = asyncio.run(restart_mid_stream())
    ids = {d["doc_id"] for d in docs}
    waited = asyncio.run(reader.wait_for(lambda: len(_by_doc(reader.values(topics.SANITIZED), ids)) == len(ids),
                                         300, pipeline, "documents after the broker restart"))
    time.sleep(3)
    out = _by_doc(reader.values(topics.SANITIZED), ids)
    originals = {d["doc_id"]: d["text"] for d in docs}
    assert all(copies[0]["text"] == originals[k] for k, copies in out.items())
    raw = sum(map(len, out.values()))
    figures.rows["Broker restart mid-stream (SIGTERM, 5 s, same data dir)"] = {
        "documents (one per second)": len(docs),
        "broker unreachable": f"{outage_s:.0f} s",
        "sanitized documents before dedup / duplicates": f"{raw} / {raw - len(out)}",
        "lost after key dedup / crashes": f"{len(ids) - len(out)} / {len(pipeline.crashes)}",
        "time until all were out after the restart": f"{waited:.0f} s",
        "wall time": f"{time.monotonic() - started:.0f} s",
    }


def _detected(engine, texts: list[str], doc_id: str) -> list:
    from anonstream.pii.engine import DocumentEntities

    registry = DocumentEntities(doc_id)
    return [span for text in texts for span in engine.detect(text, registry)]


def test_no_direct_identifier_leaks_into_output_logs_or_metrics(pipeline, reader, figures):
    from anonstream.pii.engine import PiiEngine
    from anonstream.stages.ingest import IngestStage

    sent: list[dict] = shared.get("tab_sent", [])
    out: dict[str, dict] = shared.get("tab_out", {})
    assert sent and len(out) == len(sent), "needs the crash test's documents"
    engine, ingest = PiiEngine.from_config(), IngestStage()
    leaks: dict[str, list[str]] = {}
    direct_inputs = 0
    for doc in sent:
        chunks = ingest.chunks(Document.from_wire(doc))
        direct = {span.text for span in _detected(engine, [c.text for c in chunks], doc["doc_id"])
                  if span.identifier_type == "DIRECT"}
        direct_inputs += len(direct)
        found = {span.text for span in _detected(engine, [out[doc["doc_id"]]["text"]], doc["doc_id"])}
        if found & direct:
            leaks[doc["doc_id"]] = sorted(found & direct)
    assert not leaks, f"DIRECT identifiers of the input found again in the output (count per document): " \
                      f"{ {k: len(v) for k, v in leaks.items()} }"

    gold = [d for d in load_tab(GOLD) if d.doc_id in out]
    scores = evaluate_release(gold, {k: v["text"] for k, v in out.items()}, tagger=lambda lines: [[] for _ in lines])
    direct_share = scores.headline["direct_surviving_share"]
    assert scores.n_scored_documents == len(gold) and direct_share <= 0.005

    # every captured log line and every metric label, against the input texts
    inputs = [d["text"] for d in sent] + [d["text"] for d in map(lambda i: _good_document(i, "good"), range(5))]
    needles = _needles(inputs, [m.span_text for d in gold for ms in d.annotations.values() for m in ms] + PEOPLE)
    lines = [line for name in STAGE_NAMES for line in pipeline.log_path(name).read_text(errors="replace").splitlines()]
    labels = [value for name in STAGE_NAMES for family in text_string_to_metric_families(pipeline.scrape(name))
              for sample in family.samples for value in sample.labels.values()]
    assert _carries_input(sent[0]["text"][:300], needles), "the scan must see input text where there is some"
    hits = [line[:80] for line in lines + labels if _carries_input(line, needles)]
    assert not hits, f"input text in logs or metric labels: {len(hits)} lines"
    figures.rows["Leakage"] = {
        "TAB documents checked (from the crash test)": len(sent),
        "DIRECT identifiers the detector finds in the inputs": direct_inputs,
        "of them found again by the detector in the outputs": sum(map(len, leaks.values())),
        "gold DIRECT mentions surviving (TAB, first annotator)": f"{direct_share:.2%} (target <= 0.5 %)",
        "log lines / metric label values scanned": f"{len(lines)} / {len(labels)}",
        "of them carrying input text": len(hits),
    }


def _carries_input(line: str, needles: dict[str, set]) -> bool:
    return bool(_words(line) & needles["1"] or _ngrams(line) & needles["n"])


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))


def _ngrams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text)
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _needles(texts: list[str], mentions: list[str]) -> dict[str, set]:
    """Input text to look for: every 4-word run of the inputs, and every mention word of 6+ letters
    that is not an ordinary lower-case word."""
    runs = set().union(*(_ngrams(t) for t in texts))
    words = {w for m in mentions for w in re.findall(r"\w+", m) if len(w) >= 6 and not w.islower()}
    return {"n": runs, "1": words}
