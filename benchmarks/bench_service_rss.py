"""Resident memory of each service at start and while it processes records, on Redis, without Kafka (issue 27,
item 4).

Per stage, a fresh child process imports what ``anonstream service <stage>`` imports (its command line,
``cli.parse_args``, and the service shell, ``anonstream.runtime.service``), builds the stage core with ``wiring.build_stage`` on the services' stores
(``redis_stores``, on the Redis at ``ANONSTREAM_REDIS_URL``, under a tenant of its own), and reports its VmRSS
(``/proc/self/status``) and which heavy libraries it imported: that is the service *at start*. Then it processes
the load the way the service shell does, through the same ``StageDriver``: its input topics' records in batches of
``--batch`` (a poll), ticking after each batch, and at the end once an hour later (swap's and the sink's waits
expire) - and reports its VmRSS, VmHWM (the peak of the process's life) and heavy imports again: that is the
service *under load*. The load: the unseen TAB dev texts (``--documents``, default all 127, as
``bench_kafka.py``), through the stages one after the other in pipeline order, each stage's outputs being the next
stages' input records (refit before cluster, so the cluster assigns with a published model). ``embed-onnx``
(``ANONSTREAM_EMBED_BACKEND=onnx``) and ``audit-no-du`` (``ANONSTREAM_AUDIT_UTILITY=0``) process the same input
as ``embed`` and ``audit``; their outputs go nowhere. The Kafka client's own buffers are not part of the figures
(``bench_kafka.py`` measures the services on a broker, ``embed_saturation.md``).

``--baseline REF``: the same measurement (``embed-onnx`` aside) with the package of git ref ``REF`` (a worktree,
``PYTHONPATH``), run in the same invocation, for a before/after.

    .venv/bin/python benchmarks/bench_service_rss.py [--documents N] [--baseline REF] [stage ...]
"""
from __future__ import annotations

import json
import os
import pickle
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("torch", "spacy", "thinc", "sentence_transformers", "transformers", "onnxruntime", "sklearn", "scipy")
STAGES = {"ingest": {}, "pii": {}, "embed": {}, "embed-onnx": {"ANONSTREAM_EMBED_BACKEND": "onnx"}, "refit": {},
          "cluster": {}, "swap": {}, "sink": {}, "audit": {}, "audit-no-du": {"ANONSTREAM_AUDIT_UTILITY": "0"}}
ORDER = ("ingest", "pii", "embed", "refit", "cluster", "swap", "sink", "audit")  # refit before cluster (a model)
NO_MODEL = ("ingest", "cluster", "refit", "swap", "sink", "audit-no-du")  # the services that load no model
TARGET_MIB = 300
RUN_ENV = {"ANONSTREAM_REFIT_INTERVAL_S": "0", "ANONSTREAM_LOG_LEVEL": "WARNING"}  # a refit at every tick


def _memory() -> dict:
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    return {"rss_mib": round(int(status["VmRSS"].split()[0]) / 1024),
            "hwm_mib": round(int(status["VmHWM"].split()[0]) / 1024),
            "heavy": [m for m in HEAVY if m in sys.modules]}


def child(stage: str, work: str, batch: int) -> dict:
    """Import the service shell, build ``stage`` on Redis, measure; process its input records, measure again."""
    from anonstream import cli, serde, topics
    from anonstream.config import Settings
    from anonstream.runtime import service  # noqa: F401 - what a service process imports first

    argv = ["service", stage.split("-")[0]]  # and the command line of `anonstream service <stage>`
    cli.parse_args(argv) if hasattr(cli, "parse_args") else cli.build_parser().parse_args(argv)  # (older trees)
    from anonstream.runtime.wiring import build_stage, redis_stores
    from anonstream.stages.base import InputMessage, StageDriver

    settings = Settings()
    name = stage.split("-")[0]
    core = build_stage(name, settings, redis_stores(settings, name))
    start = _memory()
    driver = StageDriver(core, settings.topic_prefix)
    records_dir = Path(work) / "topics"
    messages = []
    for topic in driver.input_topic_names():
        path = records_dir / f"{topic}.pickle"
        records = pickle.loads(path.read_bytes()) if path.exists() else []
        messages += [InputMessage(topic, 0, i, key, value) for i, (key, value) in enumerate(records)]
    out: dict[str, list] = {}
    counts = {"in": len(messages), "out": 0, "dead": 0}

    def keep(emits) -> None:
        for e in emits:
            out.setdefault(topics.name(e.topic, settings.topic_prefix), []).append(
                (e.key.encode(), serde.dumps(e.value)))
        counts["out"] += len(emits)

    core.start()
    began = time.perf_counter()
    try:
        for i in range(0, len(messages), batch):
            handled = driver.handle(messages[i:i + batch])
            keep(handled.emits)
            counts["dead"] += len(handled.dead_letters)
            core.after_produced(handled.emits)
            ticked = driver.tick(time.time())
            core.after_produced(ticked)
            keep(ticked)
        keep(driver.tick(time.time() + 3600))  # what waits for a partner or for its document's last chunk leaves
    finally:
        core.close()
    seconds = time.perf_counter() - began
    if stage == name:  # the variants' outputs go nowhere
        for topic, records in out.items():
            path = records_dir / f"{topic}.pickle"
            previous = pickle.loads(path.read_bytes()) if path.exists() else []
            path.write_bytes(pickle.dumps(previous + records))
    return {"stage": stage, "start": start, "load": _memory(), "seconds": round(seconds, 1), **counts}


def measure(stages: list[str], documents: list[dict], batch: int, source: Path | None = None) -> dict[str, dict]:
    """Run the stages (pipeline order) in fresh children on a fresh tenant; ``source``: another package tree."""
    import common

    work = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    (work / "topics").mkdir()
    tenant = f"rss-{os.getpid()}-{int(time.time())}"
    env = {**os.environ, **RUN_ENV, "ANONSTREAM_TENANT": tenant, "ANONSTREAM_TOPIC_PREFIX": tenant}
    env.setdefault("ANONSTREAM_PSEUDONYM_KEY", secrets.token_hex(32))
    if source is not None:
        env["PYTHONPATH"] = str(source)
    prefix = env["ANONSTREAM_TOPIC_PREFIX"]
    (work / "topics" / f"{prefix}.documents.v1.pickle").write_bytes(pickle.dumps(
        [(d["doc_id"].encode(), json.dumps(d).encode()) for d in documents]))
    wanted = set(stages)
    needed = ORDER[:1 + max(ORDER.index(s.split("-")[0]) for s in wanted)]  # its inputs need the stages before it
    results = {}
    for name in needed:
        for stage in [name] + [v for v in STAGES if v.startswith(name + "-") and v in wanted]:
            done = subprocess.run([sys.executable, __file__, "--child", stage, str(work), str(batch)],
                                  env={**env, **STAGES[stage]}, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{stage}: {done.stderr[-3000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            common.log(f"{stage}{' (baseline)' if source else ''}: start {row['start']['rss_mib']} MiB, "
                       f"peak under load {row['load']['hwm_mib']} MiB, {row['in']} in, {row['out']} out, "
                       f"{row['dead']} dead letters, {row['seconds']} s; {', '.join(row['load']['heavy']) or '-'}")
            if stage in wanted:
                results[stage] = row
    return results


def main() -> None:
    import common
    from bench_kafka import dev_documents

    parser = common.arg_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, help="TAB dev documents (default all 127, quick 6)")
    parser.add_argument("--batch", type=int, default=100, help="records per poll (default %(default)s)")
    parser.add_argument("--baseline", metavar="REF", help="also measure the services at git ref REF")
    parser.add_argument("stages", nargs="*", choices=[[], *STAGES], help="default: all")
    args = parser.parse_args()
    stages = args.stages or list(STAGES)
    documents = dev_documents(args.documents or (6 if args.quick else None))
    results = common.Results("service_rss", "Resident memory of each service at start and under load", args.quick)
    rows = measure(stages, documents, args.batch)
    baseline = {}
    if args.baseline:
        with common.worktree(args.baseline, Path(tempfile.mkdtemp(prefix="bench-rss-base-")) / "tree") as tree:
            baseline = measure([s for s in stages if s != "embed-onnx"], documents, args.batch, tree / "shared")
    words = sum(len(d["text"].split()) for d in documents)
    header = ["service", "RSS at start MiB", "peak under load MiB (VmHWM)", "heavy imports at start",
              "heavy imports under load", "records in → out", f"loads no model: peak ≤ {TARGET_MIB} MiB"]
    if baseline:
        header[3:3] = [f"at `{args.baseline}`: start, peak MiB", f"at `{args.baseline}`: heavy imports under load"]
    table = []
    for stage in stages:
        row = rows[stage]
        line = [stage, row["start"]["rss_mib"], f"**{row['load']['hwm_mib']}**",
                ", ".join(row["start"]["heavy"]) or "-", ", ".join(row["load"]["heavy"]) or "-",
                f"{row['in']:,} → {row['out']:,}" + (f" ({row['dead']} dead letters)" if row["dead"] else ""),
                ("yes" if row["load"]["hwm_mib"] <= TARGET_MIB else "**no**") if stage in NO_MODEL else ""]
        if baseline:
            old = baseline.get(stage)
            line[3:3] = [f"{old['start']['rss_mib']}, {old['load']['hwm_mib']}" if old else "",
                         (", ".join(old["load"]["heavy"]) or "-") if old else ""]
        table.append(line)
    over = [s for s in NO_MODEL if s in rows and rows[s]["load"]["hwm_mib"] > TARGET_MIB]
    results.add("\n\n".join([
        common.table(header, table),
        f"Load: the {len(documents)} unseen TAB dev texts ({words:,} words), through the stages one after the other "
        "in pipeline order on one Redis, each stage a fresh process that imports what `anonstream service <stage>` "
        "imports (its command line and the service shell), builds its "
        "core on the services' stores (`wiring.build_stage`, `redis_stores`) and processes its input records "
        f"through the services' `StageDriver`, {args.batch} records a batch, ticking after each "
        "(refit interval 0: refit fits at every tick, so it fits during the load and the cluster "
        "assigns with a published model); at the end one tick an hour later releases what swap and the sink hold. "
        "*At start*: after the build, before any record. *Peak under load*: `VmHWM` at the end, the most the process "
        "ever held. Heavy imports: which of " + ", ".join(HEAVY) + " are in `sys.modules`. `audit-no-du` = "
        "`ANONSTREAM_AUDIT_UTILITY=0`, `embed-onnx` = `ANONSTREAM_EMBED_BACKEND=onnx` (the others: the default "
        "backend, static); the variants process the same records. Not included: the Kafka client's buffers "
        "(the services on a broker: `embed_saturation.md`, peak RSS per process).",
        (f"Services that load no model over {TARGET_MIB} MiB under load: {', '.join(over)}." if over else
         f"Every service that loads no model stays at or under {TARGET_MIB} MiB under load and imports neither "
         "torch nor spaCy.") + (f" Baseline `{args.baseline}` ({common.commit_line(args.baseline)}): the same "
                                "load with that commit's package." if baseline else ""),
    ]))
    results.write()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        main()
