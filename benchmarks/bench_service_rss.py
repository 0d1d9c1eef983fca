"""Resident memory of each service after start, without Kafka or Redis (issue 27, item 4).

Per stage, a fresh child process imports the service shell (``anonstream.runtime.service``, what
``anonstream service <stage>`` imports), builds the stage core with ``wiring.build_stage`` on the services'
stores (``redis_stores``: a Redis client connects at its first command, so no server is needed; the pii stage,
which needs the pseudonym key for them, on in-process stores), and reports its VmRSS and VmHWM (``/proc/self/status``) and which
heavy libraries it imported. ``audit-no-du`` is the audit with ``ANONSTREAM_AUDIT_UTILITY=0`` (no re-embedding);
``embed-onnx`` the embed stage with ``ANONSTREAM_EMBED_BACKEND=onnx``. This is memory after start, before the first
record: what a stage imports when it processes records (the services under load, on a broker) is in
``benchmarks/results/embed_saturation.md`` (``bench_kafka.py --backends``).

    .venv/bin/python benchmarks/bench_service_rss.py [stage ...]     # writes benchmarks/results/service_rss.md
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("torch", "spacy", "sentence_transformers", "transformers", "onnxruntime", "sklearn", "scipy")
STAGES = {"ingest": {}, "pii": {}, "embed": {}, "embed-onnx": {"ANONSTREAM_EMBED_BACKEND": "onnx"}, "cluster": {},
          "refit": {}, "swap": {}, "sink": {}, "audit": {}, "audit-no-du": {"ANONSTREAM_AUDIT_UTILITY": "0"}}
NO_MODEL = ("ingest", "cluster", "refit", "swap", "sink", "audit-no-du")  # the services that load no model
TARGET_MIB = 300


def child(stage: str) -> dict:
    """Import the service shell, build ``stage``, return its memory and heavy imports."""
    from anonstream.config import Settings
    from anonstream.runtime import service  # noqa: F401 - what a service process imports first
    from anonstream.runtime.wiring import build_stage, in_memory_stores, redis_stores

    settings = Settings()
    name = stage.split("-")[0]
    build_stage(name, settings, in_memory_stores(settings) if name == "pii" else redis_stores(settings, name))
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    return {"stage": stage, "rss_mib": round(int(status["VmRSS"].split()[0]) / 1024),
            "hwm_mib": round(int(status["VmHWM"].split()[0]) / 1024),
            "heavy": [m for m in HEAVY if m in sys.modules]}


def main(stages: list[str]) -> None:
    import common

    results = common.Results("service_rss", "Resident memory of each service after start (issue 27, item 4)")
    rows = []
    for stage in stages or list(STAGES):
        env = {**os.environ, **STAGES[stage]}
        done = subprocess.run([sys.executable, __file__, "--child", stage], env=env, capture_output=True,
                              text=True, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        target = (("yes" if row["hwm_mib"] <= TARGET_MIB else "**no**") if stage in NO_MODEL else "")
        rows.append([stage, row["rss_mib"], row["hwm_mib"], ", ".join(row["heavy"]) or "-", target])
        common.log(f"{stage}: VmRSS {row['rss_mib']} MiB, VmHWM {row['hwm_mib']} MiB")
    results.add("\n\n".join([
        common.table(["service", "VmRSS MiB", "VmHWM MiB", "heavy imports", f"loads no model: ≤ {TARGET_MIB} MiB"],
                     rows),
        "Each row: a fresh process that imports the service shell and builds the stage core "
        "(`wiring.build_stage`), before any record; `audit-no-du` = `ANONSTREAM_AUDIT_UTILITY=0`, `embed-onnx` = "
        "`ANONSTREAM_EMBED_BACKEND=onnx` (the others: the default backend, static). The memory of the same services "
        "while they process records, with what they import then, is in `embed_saturation.md` (peak RSS per "
        "process under load).",
    ]))
    results.write()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2])))
    else:
        main(sys.argv[1:])
