"""End-to-end latency of the services at a fixed open-loop rate, with variants of one service's settings side by
side (issue 13, item 6: p99 <= 2 s at half the maximum sustained load, swap wait excluded).

``bench_kafka``'s machinery (own broker and Redis through ``deploy/infra.sh``, every stage an ``anonstream
service`` process, a read_committed reader, ``kafka_model.latency_segments``), only its latency phase: the first
``--documents`` TAB train documents (as bench_kafka's latency-docs phase) produced open loop at ``--rate``
documents/s. The variants (``--variant LABEL=STAGE:VAR=VALUE[,VAR=VALUE]``) take turns round by round on the same
services except the variant's stage (``all``: every stage), which is restarted with the variant's environment. Default: the embed
service's longest wait to fill its window, ``ANONSTREAM_EMBED_MAX_WAIT_MS`` 200 (the default until this bench) vs
20: at a low rate a window rarely fills, so each of a long document's pii batches waited the whole time before
embed began on it. (An earlier run compared pii batch sizes: ``--variant pii-100=pii:ANONSTREAM_PII_MAX_BATCH=100``.)
"""
from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import common
import kafka_model
from bench_kafka import (Infra, Reader, Services, create_topics, latency_rows, release_with_wait, run_phase, stop_all,
                         segment_rows, tagged)
from anonstream.config import Settings
from anonstream.runtime import launch
from anonstream.runtime.wiring import STAGE_NAMES


@dataclass(frozen=True)
class Variant:
    label: str
    stage: str
    env: dict[str, str]


def parse_variant(spec: str) -> Variant:
    """``LABEL=STAGE:VAR=VALUE[,VAR=VALUE]`` -> Variant."""
    label, sep, rest = spec.partition("=")
    stage, colon, assignments = rest.partition(":")
    pairs = [a.split("=", 1) for a in assignments.split(",") if a]
    if not (sep and colon and label and stage in (*STAGE_NAMES, "all") and pairs and all(len(p) == 2 for p in pairs)):
        raise ValueError(f"variant {spec!r}: LABEL=STAGE:VAR=VALUE[,VAR=VALUE], STAGE one of {STAGE_NAMES} or all")
    return Variant(label, stage, dict(pairs))


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=0.55, help="documents/s (bench_kafka's half saturation rate)")
    parser.add_argument("--documents", type=int, default=24, help="TAB train documents per round")
    parser.add_argument("--variant", action="append", type=parse_variant, dest="variants",
                        help="LABEL=STAGE:VAR=VALUE[,VAR=VALUE] (repeatable; default: embed max wait 200 vs 20 ms)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--swap-wait-s", type=float, default=2.0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    variants = args.variants or [parse_variant("embed-wait-200ms=embed:ANONSTREAM_EMBED_MAX_WAIT_MS=200"),
                                 parse_variant("embed-wait-20ms=embed:ANONSTREAM_EMBED_MAX_WAIT_MS=20")]
    train = common.read_documents()
    n = 6 if args.quick else args.documents
    infra, tmp = Infra(), Path(tempfile.mkdtemp(prefix="anonstream-bench-latency-"))
    services = reader = None
    phases: dict[str, list] = {v.label: [] for v in variants}
    words: dict[str, int] = {}
    try:
        env = infra.up()
        environment = launch.service_env(env["ANONSTREAM_BOOTSTRAP"], env["ANONSTREAM_REDIS_URL"], "bench", {
            "ANONSTREAM_REFIT_INTERVAL_S": "10", "ANONSTREAM_LOG_LEVEL": "INFO",
            "ANONSTREAM_RELEASE": str(release_with_wait(args.swap_wait_s, tmp))})
        settings = Settings(bootstrap=environment["ANONSTREAM_BOOTSTRAP"],
                            topic_prefix=environment["ANONSTREAM_TOPIC_PREFIX"])
        asyncio.run(create_topics(settings))
        services = Services(environment, tmp)
        for stage in STAGE_NAMES:
            services.start(stage)
        services.wait_ready(list(STAGE_NAMES))
        reader = Reader(settings)
        infra_pids = infra.pids()
        run_phase("warmup", tagged(train[:8], "warm"), settings, services, reader, infra_pids)
        for r in range(args.rounds):
            for i, variant in enumerate(variants if r % 2 == 0 else variants[::-1]):
                stages = list(STAGE_NAMES) if variant.stage == "all" else [variant.stage]
                launch.stop_services([services.processes[stage] for stage in stages])
                services.env = {**environment, **variant.env}
                for stage in stages:
                    log = services.log_path(stage)  # a fresh log, so that readiness is the new process's
                    log.rename(log.with_suffix(f".{r}-{variant.label}.log"))
                    services.start(stage)
                services.wait_ready(stages)
                services.env = environment  # the next variant's stage starts from the common environment
                time.sleep(3)  # the group rebalance after the join
                # a few documents through the restarted services first: their first records pay for the groups'
                # assignment and the models' first calls, which the measured phase must not
                run_phase(f"{variant.label}-warmup", tagged([{**d, "doc_id": f"{d['doc_id']}-w{r}"} for d in train[-4:]],
                                                            f"w{i}r{r}"), settings, services, reader, infra_pids)
                docs = tagged([{**d, "doc_id": f"{d['doc_id']}-{r}"} for d in train[:n]], f"v{i}r{r}")
                words.update((d["doc_id"], len(d["text"].split())) for d in docs)
                phases[variant.label].append(run_phase(variant.label, docs, settings, services, reader,
                                                       infra_pids, rate_per_s=args.rate))
    finally:
        stop_all(reader, services, infra)
    res = common.Results("latency", "Services' latency at a fixed rate: " + " vs ".join(
        f"`{v.label}` ({v.stage}: {', '.join(f'{k}={x}' for k, x in v.env.items())})" for v in variants)
        + " (issue 13)", args.quick)
    res.add(__doc__.split("\n", 1)[1].strip())
    rows, seg = [], []
    for label, ps in phases.items():
        for i, p in enumerate(ps):
            for row in latency_rows(p, reader):
                rows.append([label, i + 1, p.out, f"{p.load_at_end:.1f}"] + row[:1] + row[2:])
            seg += [[label, i + 1] + row[1:] for row in segment_rows(p, reader, words)]
    res.section("End-to-end latency per round", "\n\n".join([
        common.table(["variant", "round", "out", "load avg at end", "measure", "p50 s", "p95 s", "p99 s",
                      "max s"], rows),
        f"{n} documents per round at {args.rate:g} documents/s (open loop), swap wait bound T = "
        f"{args.swap_wait_s:g} s; sizes {sorted(words[d] for d in list(words)[:n])} words.",
    ]))
    res.section("Where the latency goes (per stage segments, `kafka_model.latency_segments`)", common.table(
        ["variant", "round", "segment", "p50 s", "p95 s", "p99 s", "mean in the tail s"], seg))
    res.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
