"""The embedded runner end to end on the demo corpus: documents/s, words/s, time per stage, model
load time, peak RSS.

``anonstream.runtime.embedded.run`` runs unchanged; this process only wraps, from outside, the
functions a profiler would look at: ``wiring.build_stage`` (construction of each stage, i.e. model
loading), ``StageDriver.handle``/``tick``/``drain`` (the time each stage spends on its records),
and ``contracts.validate`` (schema validation, charged to the stage that called it).
"""
from __future__ import annotations

import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import orjson

import common
from anonstream import contracts
from anonstream.runtime import embedded, wiring
from anonstream.stages.base import StageDriver


@dataclass
class StageClock:
    calls: int = 0
    records_in: int = 0
    records_out: int = 0
    dead_letters: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    tick_drain_wall: float = 0.0
    validate_wall: float = 0.0
    load_wall: float = 0.0


class Instruments:
    """Wraps the runner's stage calls; ``install`` / ``uninstall`` around the run."""

    def __init__(self) -> None:
        self.clocks: dict[str, StageClock] = defaultdict(StageClock)
        # per thread, the stage whose call is running (validation is charged to it); anonstream run embeds on a
        # worker thread while the other stages run on the main one
        self._running = threading.local()
        self.build_wall = 0.0
        self.build_cpu = 0.0  # process CPU time (all threads) of building the stages
        self.rss_after_load = 0.0
        self._saved: list[tuple[object, str, object]] = []

    def _patch(self, owner: object, attr: str, replacement) -> None:
        self._saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, replacement)

    def install(self) -> None:
        clocks = self.clocks
        build_stage, build_stages = wiring.build_stage, embedded.build_stages
        handle, tick, drain = StageDriver.handle, StageDriver.tick, StageDriver.drain
        validate = contracts.validate

        def timed_build_stage(name, *args, **kwargs):
            with common.timed() as t:
                stage = build_stage(name, *args, **kwargs)
            clocks[name].load_wall += t.wall
            return stage

        def timed_build_stages(*args, **kwargs):
            with common.timed() as t:
                stages = build_stages(*args, **kwargs)
            self.build_wall += t.wall
            self.build_cpu += t.cpu
            self.rss_after_load = common.peak_rss_mib()
            return stages

        def clocked(fn, kind: str):
            def wrapper(driver, *args):
                name = driver.stage.name
                self._running.stage = name
                try:
                    with common.timed() as t:
                        result = fn(driver, *args)
                finally:
                    self._running.stage = None
                clock = clocks[name]
                clock.wall += t.wall
                clock.cpu += t.cpu
                if kind == "handle":
                    clock.calls += 1
                    clock.records_in += len(args[0])
                    clock.records_out += len(result.emits)
                    clock.dead_letters += len(result.dead_letters)
                else:
                    clock.tick_drain_wall += t.wall
                    clock.records_out += len(result)
                return result
            return wrapper

        def timed_validate(schema_name, record):
            start = time.perf_counter()
            try:
                return validate(schema_name, record)
            finally:
                current = getattr(self._running, "stage", None)
                if current is not None:
                    clocks[current].validate_wall += time.perf_counter() - start

        self._patch(wiring, "build_stage", timed_build_stage)
        self._patch(embedded, "build_stages", timed_build_stages)
        self._patch(StageDriver, "handle", clocked(handle, "handle"))
        self._patch(StageDriver, "tick", clocked(tick, "tick"))
        self._patch(StageDriver, "drain", clocked(drain, "drain"))
        self._patch(contracts, "validate", timed_validate)

    def uninstall(self) -> None:
        while self._saved:
            owner, attr, original = self._saved.pop()
            setattr(owner, attr, original)


def instrumented_run(docs: list[dict]) -> tuple[embedded.RunReport, Instruments]:
    """``embedded.run`` on ``docs`` (written to a temporary input file) with the stage calls instrumented."""
    instruments = Instruments()
    with tempfile.TemporaryDirectory(prefix="anonstream-bench-") as tmp:
        source = Path(tmp) / "input.jsonl"
        source.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
        instruments.install()
        try:
            report = embedded.run(source, Path(tmp) / "out.jsonl", Path(tmp) / "report.json", progress=False)
        finally:
            instruments.uninstall()
    return report, instruments


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="first N documents of the sample (default all 100, quick 10)")
    args = parser.parse_args()
    limit = args.documents or (10 if args.quick else None)
    results = common.Results("pipeline", "Embedded runner, end to end on the demo corpus", args.quick)

    docs = common.read_documents(limit=limit)
    words = sum(len(d["text"].split()) for d in docs)
    chars = sum(len(d["text"]) for d in docs)
    with common.timed() as whole:
        report, instruments = instrumented_run(docs)
    rss_end = common.peak_rss_mib()

    clocks = instruments.clocks
    run_s = report.seconds  # from after the stages were built to the last output written
    stage_total = sum(c.wall for c in clocks.values())
    chunks = clocks["embed"].records_in if "embed" in clocks else 0
    dead = dict(report.dead_letters_by_stage)

    results.add(
        f"`anonstream.runtime.embedded.run` on {'the first ' + str(len(docs)) + ' documents of ' if limit else ''}"
        f"`data/sample/tab-train-100.jsonl`, default settings, one run in one fresh process. "
        "The machine is shared, so absolute numbers are noisy; there is no ratio target here, this "
        "is where the time goes."
    )
    results.add(common.table(["", "value"], [
        ["documents in / out", f"{report.documents_in} / {report.documents_out}"],
        ["chunks (records into embed)", chunks],
        ["words (whitespace-separated) / characters", f"{words} / {chars}"],
        ["run time, models loaded (report.seconds)", f"{run_s:.1f} s"],
        ["**documents/s**", f"**{report.documents_in / run_s:.3f}**"],
        ["**words/s**", f"**{words / run_s:.0f}**"],
        ["chunks/s", f"{chunks / run_s:.2f}"],
        ["model load (building every stage)", f"{instruments.build_wall:.1f} s"],
        ["whole call incl. load", f"{whole.wall:.1f} s wall, {whole.cpu:.1f} s CPU"],
        ["peak RSS after load / at end", f"{instruments.rss_after_load:.0f} / {rss_end:.0f} MiB"],
        ["dead letters", ", ".join(f"{k}: {v}" for k, v in sorted(dead.items())) or "none"],
    ]))

    rows = []
    for name in wiring.STAGE_NAMES:
        c = clocks.get(name)
        if c is None:
            continue
        rows.append([
            name, f"{c.load_wall:.2f}", c.calls, c.records_in, c.records_out, c.dead_letters,
            f"{c.wall:.2f}", f"{100 * c.wall / run_s:.1f} %", f"{c.cpu:.2f}", f"{c.tick_drain_wall:.2f}",
            f"{c.validate_wall:.2f}",
            f"{1000 * c.wall / c.records_in:.2f}" if c.records_in else "–",
        ])
    other = run_s - stage_total
    rows.append(["*between stages*", "", "", "", "", "", f"{other:.2f}", f"{100 * other / run_s:.1f} %",
                 "", "", "", ""])
    results.section("Per stage", "\n\n".join([
        "Time inside each stage's `StageDriver.handle` + `tick` + `drain` (decode, validation, the "
        "stage's work, output validation); *between stages* is the rest of the run: routing, "
        "serializing every output to bytes for the next stage, writing outputs. Validation is "
        "`contracts.validate` on the stage's inputs and outputs.",
        common.table(["stage", "load s", "handle calls", "records in", "records out", "dead letters",
                      "wall s", "share of run", "CPU s", "of which tick/drain s", "of which validation s",
                      "ms per record in"], rows),
    ]))
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
