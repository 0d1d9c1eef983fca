"""Shared helpers of the benchmark scripts (``benchmarks/bench_*.py``).

Conventions every ``bench_<name>.py`` follows (``run_all.py`` relies on them):

* it is run from the repository root as ``.venv/bin/python benchmarks/bench_<name>.py [--quick]``;
  ``--quick`` (also signalled by ``ANONSTREAM_BENCH_QUICK=1``) means small sizes for a smoke run;
* it writes ``benchmarks/results/<name>.md``, starting with a ``## `` title, then the exact command
  that produced it (``Results.write`` does both, plus the date and the commit);
* results hold counts, timings and ratios only, never input text;
* speed targets are ratios of variants measured side by side in one run (``interleaved_steps``), because
  the machine is shared and absolute numbers are noisy.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import orjson

REPO = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO / "benchmarks"
RESULTS_DIR = BENCH_DIR / "results"
SAMPLE = REPO / "data" / "sample" / "tab-train-100.jsonl"
QUICK_ENV = "ANONSTREAM_BENCH_QUICK"


# --- command line -----------------------------------------------------------------------------

def rel(path: str | Path) -> str:
    """A path relative to the repository root when it lies inside it (``.venv/bin/python``)."""
    p = Path(path)
    try:
        return str(p.absolute().relative_to(REPO))
    except ValueError:
        return str(p)


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that is running, as typed from the repository root."""
    argv = list(sys.argv if argv is None else argv)
    return shlex.join([rel(sys.executable), rel(argv[0]), *argv[1:]])


def arg_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        default=os.environ.get(QUICK_ENV, "") not in ("", "0"),
                        help=f"small sizes, for a smoke run (also: {QUICK_ENV}=1)")
    return parser


# --- machine ----------------------------------------------------------------------------------

def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def git_state() -> str:
    """Short commit, plus how many files under shared/ differ from it (the editable install runs
    the working tree, so uncommitted changes of others are part of what was measured)."""
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = [line for line in _git("status", "--porcelain", "--", "shared").splitlines() if line.strip()]
    return f"{commit}" + (f" (+{len(dirty)} uncommitted paths under shared/)" if dirty else "")


def commit_line(ref: str) -> str:
    """``short hash, date, subject`` of ``ref``."""
    return _git("log", "-1", "--format=%h %ad %s", "--date=iso", ref)


@contextmanager
def worktree(ref: str, directory: Path) -> Iterator[Path]:
    """A detached git worktree of the repository at ``ref`` in ``directory`` (a baseline's code to run beside
    today's), removed afterwards."""
    subprocess.run(["git", "worktree", "add", "--detach", str(directory), ref], cwd=REPO, check=True,
                   capture_output=True)
    try:
        yield directory
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(directory)], cwd=REPO, capture_output=True)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def machine_info() -> dict[str, str]:
    ram = ram_gib()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": cpu_model(),
        "ram": f"{ram:.1f} GiB" if ram else "?",
        "python": platform.python_version(),
        "torch": _version("torch"),
        "sentence-transformers": _version("sentence-transformers"),
        "spacy": _version("spacy"),
        "date": now_utc(),
        "commit": git_state(),
        "load average at start (1/5/15 min)": load,
    }


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- timing -----------------------------------------------------------------------------------

@dataclass
class Timing:
    wall: float = 0.0
    cpu: float = 0.0  # process CPU time (all threads)


@contextmanager
def timed() -> Iterator[Timing]:
    """``with timed() as t: ...`` then ``t.wall`` / ``t.cpu`` in seconds."""
    t = Timing()
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        yield t
    finally:
        t.wall = time.perf_counter() - w0
        t.cpu = time.process_time() - c0


def interleaved_steps(variants: dict[str, list[Callable[[], Any]]], rounds: int,
                      log: Callable[[str], None] | None = None) -> list[dict[str, Timing]]:
    """Side by side: each variant is a list of steps (e.g. one batch each) and the variants take
    turns step by step, so they share the machine's load on the scale of a step
    rather than of a whole pass. Turns are proportional: the next step is always taken by the
    variant that has done the smallest fraction of its steps (ties: an order rotated every round),
    so variants with fewer, bigger steps are spread over the round too. Returns, per round,
    {name: Timing} summed over that variant's steps (wall and process CPU time)."""
    names = list(variants)
    out: list[dict[str, Timing]] = []
    for r in range(rounds):
        rank = {name: (i - r) % len(names) for i, name in enumerate(names)}
        done = dict.fromkeys(names, 0)
        totals = {name: Timing() for name in names}
        while True:
            waiting = [n for n in names if done[n] < len(variants[n])]
            if not waiting:
                break
            name = min(waiting, key=lambda n: (done[n] / len(variants[n]), rank[n]))
            with timed() as t:
                variants[name][done[name]]()
            done[name] += 1
            totals[name].wall += t.wall
            totals[name].cpu += t.cpu
            rank[name] = max(rank.values()) + 1  # among equals, whoever just ran goes last
        if log:
            log(f"  round {r + 1}/{rounds}: " + ", ".join(f"{k} {v.wall:.1f} s" for k, v in totals.items()))
        out.append(totals)
    return out


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """``median (min–max)`` of a few measurements."""
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


# --- data -------------------------------------------------------------------------------------

def read_documents(path: Path = SAMPLE, limit: int | None = None) -> list[dict[str, Any]]:
    """The wire dicts of a JSONL file of documents (first ``limit`` non-empty lines)."""
    docs: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                docs.append(orjson.loads(line))
                if limit is not None and len(docs) >= limit:
                    break
    return docs


def log(message: str) -> None:
    """Progress on stderr (never input text)."""
    print(message, file=sys.stderr, flush=True)


# --- results ----------------------------------------------------------------------------------

def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass
class Results:
    """A results file ``benchmarks/results/<name>.md``: title, command, run info, then sections."""

    name: str
    title: str
    quick: bool = False
    parts: list[str] = field(default_factory=list)
    started: str = field(default_factory=now_utc)

    def add(self, text: str) -> None:
        self.parts.append(text.strip("\n"))

    def section(self, heading: str, text: str = "") -> None:
        self.add(f"### {heading}" + (f"\n\n{text.strip()}" if text.strip() else ""))

    @property
    def path(self) -> Path:
        return RESULTS_DIR / f"{self.name}.md"

    def write(self) -> Path:
        head = [
            f"## {self.title}",
            f"Command: `{command_line()}`  ",
            f"Run: {self.started}, commit {git_state()}, nproc {len(os.sched_getaffinity(0))}"
            + (" — **quick (smoke) sizes, not for quoting**" if self.quick else ""),
        ]
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(head) + "\n\n" + "\n\n".join(self.parts) + "\n")
        log(f"wrote {rel(self.path)}")
        return self.path
