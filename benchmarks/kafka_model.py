"""Pure helpers of ``bench_kafka.py``: latency percentiles, the open-loop send schedule, the swap stage's
partner wait per document, the queue in front of a stage, CPU and peak RSS from ``/proc``, and the scaling model
of issue 13 item 8.

The scaling model. Each stage s costs C_s CPU seconds per document and the broker and Redis together
C_infra (measured at saturation on this machine). With c cores, P partitions per topic and w_s worker
processes of stage s (a consumer group gives each partition to one member, so at most P of them work),
each worker using at most one core::

    X(c, P, w) = min( c / (C_infra + sum_s C_s) ,  min_s min(w_s, P) / C_s )      documents per second

The first term: all cores busy on the whole pipeline's work; the second: a stage whose workers are all
busy. Nothing here models contention (memory bandwidth, the GIL across a process's threads, the broker's
disk): ``efficiency`` is the measured rate over the model's rate on this machine, and predictions for
larger machines are given both raw and times that efficiency.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

PERCENTILES = (50, 95, 99)


def percentiles(values: Sequence[float], qs: Sequence[float] = PERCENTILES) -> dict[float, float]:
    """{q: q-th percentile} (numpy's linear interpolation); NaN for no values."""
    if len(values) == 0:
        return {q: float("nan") for q in qs}
    return dict(zip(qs, (float(x) for x in np.percentile(np.asarray(values, dtype=float), qs))))


def send_schedule(n: int, rate_per_s: float, start: float = 0.0) -> list[float]:
    """Open-loop send times: the i-th record is due at ``start + i / rate``, whatever the system's speed
    (a closed-loop producer would slow down with the system and hide its queueing)."""
    if rate_per_s <= 0:
        raise ValueError(f"rate must be positive, got {rate_per_s}")
    return [start + i / rate_per_s for i in range(n)]


def swap_wait(swap_in: Sequence[float], swap_out: Sequence[float]) -> float:
    """The time one document spent waiting in the swap stage beyond the arrival of its last chunk:
    (last chunk out of swap) - (last chunk into swap), at least 0. Subtracted from the document's
    end-to-end latency, it leaves the latency it would have had if swap released every chunk on arrival."""
    if not swap_in or not swap_out:
        raise ValueError("a document needs its chunks' times into and out of swap")
    return max(0.0, max(swap_out) - max(swap_in))


LATENCY_SEGMENTS = ("ingest", "pii", "embed", "cluster", "swap minus partner wait", "sink and read")


def latency_segments(sent: float, read: float, last_out: Mapping[str, float], wait: float) -> dict[str, float]:
    """One document's end-to-end latency minus the swap partner wait, cut at the times its last chunk left each
    stage (``last_out``: stage -> the largest record timestamp of its chunks on ingest's, pii's, embed's,
    cluster's and swap's output topics; ``wait``: ``swap_wait``). Each segment is the time from the previous
    stage's last chunk out to this stage's last chunk out (queueing, batching and work); the segments add up to
    ``read - sent - wait``. Producer timestamps and the reader's clock are the same machine's."""
    marks = [sent] + [last_out[s] for s in ("ingest", "pii", "embed", "cluster", "swap")] + [read]
    out = dict(zip(LATENCY_SEGMENTS, np.diff(marks).tolist()))
    out["swap minus partner wait"] -= wait
    return out


def queue(arrivals: Sequence[float], departures: Sequence[float], start: float, end: float) -> tuple[float, int]:
    """(time-averaged, largest) number of items waiting in front of a stage over ``[start, end]``: items whose
    arrival (their record on the stage's input topic) is at or before t and whose departure (their record on its
    output topic) is not yet, in any order. Departures at the same instant as arrivals count first; items that
    arrived before ``start`` count from ``start``. In a pipeline fed all at once, the items pile up in front of
    the stage that limits the rate."""
    if end <= start:
        raise ValueError(f"empty interval [{start}, {end}]")
    events = sorted([(t, -1) for t in departures] + [(t, 1) for t in arrivals])
    waiting, peak, area, last = 0, 0, 0.0, start
    for t, step in events:
        if t > end:
            break
        if t > start:
            area += waiting * (t - last)
            last = t
        waiting += step
        peak = max(peak, waiting)
    area += waiting * (end - last)
    return area / (end - start), peak


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(stat: str) -> float:
    """User + system CPU seconds of a process (all its threads) from the text of ``/proc/<pid>/stat``."""
    fields = stat[stat.rindex(")") + 2:].split()  # the command name may hold spaces; fields after it
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime: fields 14 and 15 of stat(5)


def peak_rss_mib(status: str) -> float:
    """Peak resident set size (``VmHWM``) in MiB from the text of ``/proc/<pid>/status``."""
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise ValueError("no VmHWM line")


@dataclass(frozen=True)
class ScalingModel:
    """The model of the module docstring; ``cpu_per_doc``: {stage: C_s CPU seconds per document};
    ``infra_cpu_per_doc``: C_infra (broker and Redis: in the cores bound only)."""

    cpu_per_doc: Mapping[str, float]
    infra_cpu_per_doc: float = 0.0

    def throughput(self, cores: float, partitions: int, workers: Mapping[str, int] | None = None,
                   default_workers: int = 1) -> float:
        """X(c, P, w) in documents per second; stages not in ``workers`` have ``default_workers``."""
        workers = workers or {}
        total = self.infra_cpu_per_doc + sum(self.cpu_per_doc.values())
        bounds = [cores / total] if total > 0 else []
        bounds += [min(workers.get(s, default_workers), partitions) / c for s, c in self.cpu_per_doc.items() if c > 0]
        return min(bounds) if bounds else float("inf")

    def bottleneck(self, partitions: int, workers: Mapping[str, int] | None = None, default_workers: int = 1) -> str:
        """The stage whose workers saturate first (largest C_s / min(w_s, P))."""
        workers = workers or {}
        return max(self.cpu_per_doc, key=lambda s: self.cpu_per_doc[s] / min(workers.get(s, default_workers), partitions))

    def workers_for(self, cores: int) -> dict[str, int]:
        """Worker processes per stage so that no stage's workers cap X below the ``cores`` bound:
        w_s = ceil(C_s / (C_infra + sum C) * cores), at least 1 (the CPU split in proportion to each cost)."""
        total = self.infra_cpu_per_doc + sum(self.cpu_per_doc.values())
        return {s: max(1, int(np.ceil(c / total * cores - 1e-9))) for s, c in self.cpu_per_doc.items()}
