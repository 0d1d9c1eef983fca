"""One embed stage in its own process, for ``bench_embed_baseline.py``: the stage as the embed service of the
``anonstream`` on ``PYTHONPATH`` builds it (``runtime.wiring.build_stage("embed", Settings(), ...)``, that
commit's defaults and environment), driven through ``StageDriver.handle`` in windows of W records, as the
service hands them over. Only names that both the baseline commit and today's code have are used.

    PYTHONPATH=<tree>/shared python benchmarks/embed_stage_child.py RECORDS.jsonl WINDOW

Protocol, one JSON object per line: after one warm-up pass it prints ``{"ready": ...}``; then on stdin
``run`` (one timed pass over every record: wall and process CPU seconds), ``vectors PATH`` (the last pass's
vectors saved as .npy, in record order) and ``quit``.
"""
from __future__ import annotations

import json
import sys
import time

import anonstream
import numpy as np
import orjson

from anonstream.config import Settings
from anonstream.runtime.wiring import build_stage, in_memory_stores
from anonstream.stages.base import InputMessage, StageDriver


def read_messages(path: str) -> list[InputMessage]:
    with open(path, "rb") as handle:
        rows = [orjson.loads(line) for line in handle if line.strip()]
    return [InputMessage(r["topic"], 0, r["offset"], r["key"].encode(), r["value"].encode()) for r in rows]


def one_pass(driver: StageDriver, messages: list[InputMessage], window: int) -> list[list[float]]:
    vectors = []
    for start in range(0, len(messages), window):
        handled = driver.handle(messages[start:start + window])
        if handled.dead_letters or len(handled.emits) != len(messages[start:start + window]):
            raise RuntimeError(f"{len(handled.dead_letters)} dead letters, {len(handled.emits)} outputs")
        for emit in handled.emits:
            orjson.dumps(emit.value)  # the service serializes every output before producing it
            vectors.append(emit.value["embedding"]["vector"])
    return vectors


def main() -> None:
    path, window = sys.argv[1], int(sys.argv[2])
    messages = read_messages(path)
    settings = Settings()
    started = time.perf_counter()
    stage = build_stage("embed", settings, in_memory_stores(settings))
    driver = StageDriver(stage, settings.topic_prefix)
    load_s = time.perf_counter() - started
    one_pass(driver, messages, window)
    embedder = stage.embedder
    print(json.dumps({"ready": True, "load_s": load_s, "backend": getattr(embedder, "backend", "torch"),
                      "batch": embedder.batch_size, "package": anonstream.__file__}), flush=True)
    vectors: list[list[float]] = []
    for line in sys.stdin:
        command = line.split()
        if command[0] == "run":
            wall, cpu = time.perf_counter(), time.process_time()
            vectors = one_pass(driver, messages, window)
            print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                              "chunks": len(vectors)}), flush=True)
        elif command[0] == "vectors":
            np.save(command[1], np.asarray(vectors, dtype=np.float32))
            print(json.dumps({"saved": command[1]}), flush=True)
        elif command[0] == "quit":
            return


if __name__ == "__main__":
    main()
