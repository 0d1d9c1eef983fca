"""Resident memory of each service after start, without Kafka or Redis (issue 27, item 4).

Per stage, a fresh child process imports the service shell (``anonstream.runtime.service``, what
``anonstream service <stage>`` imports), builds the stage core with ``wiring.build_stage`` on the services'
stores (``redis_stores``: a Redis client connects at its first command, so no server is needed; the pii stage,
which needs the pseudonym key for them, on in-process stores), and reports its VmRSS and VmHWM (``/proc/self/status``) and which
heavy libraries it imported. ``audit-no-du`` is the audit with ``ANONSTREAM_AUDIT_UTILITY=0`` (no re-embedding).

    .venv/bin/python benchmarks/bench_service_rss.py [stage ...]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("torch", "spacy", "sentence_transformers", "transformers", "onnxruntime", "sklearn", "scipy")
STAGES = {"ingest": {}, "pii": {}, "embed": {}, "cluster": {}, "refit": {}, "swap": {}, "sink": {},
          "audit": {}, "audit-no-du": {"ANONSTREAM_AUDIT_UTILITY": "0"}}


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
    print("| service | VmRSS MiB | VmHWM MiB | heavy imports |\n| --- | ---: | ---: | --- |")
    for stage in stages or list(STAGES):
        env = {**os.environ, **STAGES[stage]}
        done = subprocess.run([sys.executable, __file__, "--child", stage], env=env, capture_output=True,
                              text=True, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"| {stage} | {row['rss_mib']} | {row['hwm_mib']} | {', '.join(row['heavy']) or '-'} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2])))
    else:
        main(sys.argv[1:])
