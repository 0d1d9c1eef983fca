"""Embed stage now vs the embed stage of the commit issue 13 was filed on (its target: "≥ 2× today's
chunks/s with vectors within 0.99 cosine"), side by side on the same records.

``bench_embed.py`` compares backends of today's code in one process; this one runs each variant as the service
of its commit builds it, in its own process (``embed_stage_child.py``), so that no variant shares a process, a
thread pool or an allocator with another:

* ``baseline`` — a git worktree at ``--baseline-ref`` (default c31783b, the last commit before the first work on
  issue 13: the embed stage as the issue measured it, sentence-transformers on torch), its default settings;
* ``now-torch`` — today's code with ``ANONSTREAM_EMBED_BACKEND=torch`` (the fallback);
* ``now`` — today's code, default settings (ONNX Runtime, int8).

The same wire records for all (``bench_embed.sample_chunks``: chunks of the sample corpus as the pii stage
emits them), handed to ``StageDriver.handle`` in windows of W records. The processes are started and warmed
up once; then in each round each variant makes one timed pass over all the records while the others wait
(idle, blocked on their stdin), the order rotated round by round. Ratios are taken within a round (so they
share the machine's load of that moment) and the median over rounds is reported, by wall and by the process's
CPU time. Cosines: each variant's vectors against the baseline's, record by record.

    .venv/bin/python benchmarks/bench_embed_baseline.py [--baseline-ref REF] [--rounds N] [--threads 0,1]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import orjson

import common
from bench_embed import pii_wire_messages, sample_chunks

BASELINE_REF = "c31783b"
CHILD = common.BENCH_DIR / "embed_stage_child.py"
TARGET, COSINE_BOUND = 2.0, 0.99


class Child:
    """One embed stage process; ``run()`` makes one timed pass over the records."""

    def __init__(self, name: str, shared: Path, env: dict[str, str], records: Path, window: int):
        self.name = name
        environment = {**os.environ, **env, "PYTHONPATH": str(shared)}
        self.process = subprocess.Popen([sys.executable, str(CHILD), str(records), str(window)], cwd=shared.parent,
                                        env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ready = self._reply()

    def _reply(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: the embed stage process ended (exit {self.process.wait()})")
        return json.loads(line)

    def _ask(self, command: str) -> dict:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self._reply()

    def run(self) -> dict:
        return self._ask("run")

    def vectors(self, path: Path) -> np.ndarray:
        self._ask(f"vectors {path}")
        return np.load(path)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
            self.process.wait(timeout=60)


def write_records(path: Path, chunks: int | None) -> str:
    """The chunks-pii wire records of the comparison into ``path``; returns what they are, for the results."""
    picked, total = sample_chunks(chunks)
    messages = pii_wire_messages(picked)
    with path.open("wb") as handle:
        for m in messages:
            handle.write(orjson.dumps({"topic": m.topic, "offset": m.offset, "key": m.key.decode(),
                                       "value": m.value.decode()}) + b"\n")
    return f"{len(messages)} chunks (of the {total} that the ingest stage cuts from the sample corpus)"


def one_pass_set(label: str, threads: int, trees: dict[str, Path], records: Path, window: int, rounds: int,
                 work: Path) -> tuple[list[list], list[list]]:
    """One pass setting (threads): the three variants' processes, ``rounds`` rounds taking turns; the rows of the
    rate and cosine tables."""
    env_threads = {} if threads == 0 else {"OMP_NUM_THREADS": str(threads), "ANONSTREAM_EMBED_THREADS": str(threads)}
    envs = {"baseline": {}, "now-torch": {"ANONSTREAM_EMBED_BACKEND": "torch"}, "now": {}}
    children: dict[str, Child] = {}
    try:
        for name, env in envs.items():
            common.log(f"[{label}] starting {name}")
            children[name] = Child(name, trees[name], {**env, **env_threads}, records, window)
            common.log(f"[{label}] {name} ready: {children[name].ready}")
        runs: dict[str, list[dict]] = {name: [] for name in children}
        names = list(children)
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                runs[name].append(children[name].run())
            common.log(f"[{label}] round {r + 1}/{rounds}: "
                        + ", ".join(f"{n} {runs[n][-1]['chunks'] / runs[n][-1]['wall']:.1f}/s" for n in names))
        vectors = {name: child.vectors(work / f"{label}-{name}.npy".replace(" ", "")) for name, child in children.items()}
        ready = {name: child.ready for name, child in children.items()}
    finally:
        for child in children.values():
            child.close()
    rate_rows, cosine_rows = [], []
    for name in names:
        rate = [run["chunks"] / run["wall"] for run in runs[name]]
        wall = [a / b for a, b in zip(rate, [run["chunks"] / run["wall"] for run in runs["baseline"]])]
        cpu = [b["cpu"] / a["cpu"] for a, b in zip(runs[name], runs["baseline"])]
        rate_rows.append([label, f"`{name}`", ready[name]["backend"], ready[name]["batch"], common.spread(rate, "{:.1f}"),
                          f"**{common.median(wall):.2f}**" if name == "now" else f"{common.median(wall):.2f}",
                          common.spread(wall), common.spread(cpu)])
        cos = np.sum(vectors[name] * vectors["baseline"], axis=1)
        cosine_rows.append([label, f"`{name}`", len(cos), f"{cos.min():.4f}", f"{np.percentile(cos, 1):.4f}",
                            f"{cos.mean():.4f}"])
    return rate_rows, cosine_rows


def main() -> int:
    parser = common.arg_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline (default %(default)s)")
    parser.add_argument("--rounds", type=int, help="rounds side by side (default 5, quick 1)")
    parser.add_argument("--chunks", type=int, help="records (default 192 of the sample corpus's chunks, quick 24)")
    parser.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")], default=[0],
                        help="passes by intra-op threads, comma-separated; 0: each commit's default (default 0)")
    args = parser.parse_args()
    quick = args.quick
    rounds = args.rounds or (1 if quick else 5)
    chunks = args.chunks or (24 if quick else 192)
    window = 128
    results = common.Results("embed_baseline", "Embed stage: today vs the commit issue 13 was filed on", quick)
    with tempfile.TemporaryDirectory(prefix="bench-embed-baseline-") as tmp, \
            common.worktree(args.baseline_ref, Path(tmp) / "baseline") as baseline_tree:
        work = Path(tmp)
        records = work / "records.jsonl"
        what = write_records(records, chunks)
        trees = {"baseline": baseline_tree / "shared", "now-torch": common.REPO / "shared",
                 "now": common.REPO / "shared"}
        rate_rows, cosine_rows = [], []
        for threads in args.threads:
            label = "default threads" if threads == 0 else f"threads = {threads}"
            rates, cosines = one_pass_set(label, threads, trees, records, window, rounds, work)
            rate_rows += rates
            cosine_rows += cosines
    now = [row for row in rate_rows if row[1] == "`now`"]
    results.add(
        f"Target (issue 13): the embed stage ≥ {TARGET}× the chunks/s of the embed stage at the commit the issue was "
        f"filed on, vectors within {COSINE_BOUND} cosine. Baseline: `{args.baseline_ref}` "
        f"({common.commit_line(args.baseline_ref)[:110]}…). "
        f"Inputs: {what} as chunks-pii wire records, the same file for every variant; windows of W = {window} "
        f"records per `handle` call; each variant in its own process built by its commit's `build_stage`; "
        f"{rounds} rounds, the variants taking turns pass by pass (order rotated). Chunks/s: median (min–max) "
        f"over rounds; ratios per round against `baseline`, median and (min–max).")
    results.add(common.table(["pass", "variant", "backend", "model batch", "chunks/s", "÷ baseline (wall, median)",
                              "÷ baseline (wall, min–max)", "÷ baseline (CPU)"], rate_rows))
    results.add(f"Cosine of each variant's vectors with the baseline's, record by record (bound {COSINE_BOUND}):")
    results.add(common.table(["pass", "variant", "chunks", "min", "p1", "mean"], cosine_rows))
    verdicts = ", ".join(f"{row[0]}: {row[5].strip('*')}×" for row in now)
    results.add(f"`now` ÷ `baseline`: {verdicts} — target {TARGET}× "
                + ("**met**." if all(float(row[5].strip('*')) >= TARGET for row in now) else "**not met**."))
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
