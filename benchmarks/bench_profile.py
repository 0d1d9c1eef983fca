"""Where the time of ``anonstream run`` goes, per stage, in variants of the run side by side (issue 13, item 7):
``torch`` / ``onnx`` (one stage at a time, torch or ONNX Runtime int8 embedding) and
``onnx-overlap`` / ``onnx-overlap-1t`` (embed on a worker thread overlapping the other stages,
``ANONSTREAM_RUN_OVERLAP=1`` (the default), with ONNX Runtime's default threads or one); ``onnx-blas-default``: numpy's BLAS
with OpenBLAS's own thread count instead of ``ANONSTREAM_BLAS_THREADS=1``.

Each run is ``anonstream.runtime.embedded.run`` on the same documents in a fresh child process (its own
model loads, caches and RSS) with the variant's environment; the stage timers are those of
``bench_pipeline.Instruments`` (time inside each stage's ``StageDriver.handle`` + ``tick`` + ``drain``; with
the overlap, embed's time runs beside the other stages', so the shares add up to more than the run).
The variants take turns run by run (a, b, b, a, ...), so they share the machine's load;
ratios to the first variant are taken within a pair of neighbouring runs and the median over pairs is reported.

With ``--presidio``, Presidio analyze+anonymize (``bench_kafka.PresidioAnonymize``: same spaCy model, per
document) runs in this process on the same documents once per pair, between the variants' runs, and the run's
words/s and words per CPU-second are set against Presidio's within the pair (issue 13's run/Presidio target).
Words per CPU-second is the fair figure on a shared machine: Presidio runs on one thread, ``anonstream run``
on several (ONNX Runtime, numpy), and a loaded machine takes more wall time from the one that waits on
threads. ``--source dev`` runs on the unseen TAB dev texts (``bench_kafka.dev_documents``), as bench_kafka does.
``--cprofile N`` adds one more run of the first variant under cProfile and lists its N functions with the most
own time: where the Python time goes inside the stages.
"""
from __future__ import annotations

import cProfile
import json
import os
import pstats
import subprocess
import sys
import time

import common
from bench_pipeline import instrumented_run
from anonstream.runtime import embedded, wiring

VARIANTS = {
    "torch": {"ANONSTREAM_EMBED_BACKEND": "torch", "ANONSTREAM_RUN_OVERLAP": "0"},
    "onnx": {"ANONSTREAM_EMBED_BACKEND": "onnx", "ANONSTREAM_RUN_OVERLAP": "0"},
    "onnx-blas-default": {"ANONSTREAM_EMBED_BACKEND": "onnx", "ANONSTREAM_RUN_OVERLAP": "0",
                          "ANONSTREAM_BLAS_THREADS": "0"},
    "onnx-overlap": {"ANONSTREAM_EMBED_BACKEND": "onnx", "ANONSTREAM_RUN_OVERLAP": "1", "ANONSTREAM_EMBED_THREADS": "0"},
    "onnx-overlap-1t": {"ANONSTREAM_EMBED_BACKEND": "onnx", "ANONSTREAM_RUN_OVERLAP": "1",
                        "ANONSTREAM_EMBED_THREADS": "1"},
}
SOURCES = ("train", "dev")


def documents(source: str, limit: int | None) -> list[dict]:
    """``train``: the first ``limit`` documents of the sample; ``dev``: of the unseen TAB dev texts."""
    if source == "dev":
        from bench_kafka import dev_documents

        return dev_documents(limit)
    return common.read_documents(limit=limit)


def child(variant: str, source: str, limit: int | None, cprofile_top: int = 0) -> dict:
    """One run in this process (``--child``): stage clocks, run seconds and CPU seconds (all threads, model
    loading excluded), words, as a dict; with ``cprofile_top``, the run under cProfile (its times are then not
    comparable) and its top functions by own time."""
    os.environ.update(VARIANTS[variant])
    docs = documents(source, limit)
    profiler = cProfile.Profile() if cprofile_top else None
    if profiler:  # from the stages built (model loading excluded, as from the run time) to the end of the run
        build_stages = embedded.build_stages

        def build_then_profile(*args, **kwargs):
            stages = build_stages(*args, **kwargs)
            profiler.enable()
            return stages

        embedded.build_stages = build_then_profile
    cpu = time.process_time()
    report, instruments = instrumented_run(docs)
    if profiler:
        profiler.disable()
        embedded.build_stages = build_stages
    cpu = time.process_time() - cpu - instruments.build_cpu
    stages = {name: {"wall": c.wall, "cpu": c.cpu, "records_in": c.records_in, "load": c.load_wall}
              for name, c in instruments.clocks.items()}
    return {"variant": variant, "seconds": report.seconds, "cpu": cpu, "documents": report.documents_in,
            "documents_out": report.documents_out, "words": sum(len(d["text"].split()) for d in docs),
            "load": instruments.build_wall, "rss": common.peak_rss_mib(), "stages": stages,
            "functions": top_functions(profiler, cprofile_top) if profiler else []}


def top_functions(profiler: cProfile.Profile, top: int) -> list[list]:
    """[function, calls, own s, cumulative s] of the ``top`` functions by own time (the main thread's: cProfile
    does not follow the overlap's worker thread)."""
    stats = pstats.Stats(profiler).stats
    rows = sorted(stats.items(), key=lambda item: -item[1][2])[:top]
    return [[f"{_short(path)}:{line}({name})", calls, own, cumulative]
            for (path, line, name), (_, calls, own, cumulative, _) in rows]


def _short(path: str) -> str:
    for marker in ("site-packages/", "shared/", "lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def run_child(variant: str, source: str, limit: int | None, cprofile_top: int = 0) -> dict:
    argv = [sys.executable, __file__, "--child", variant, "--source", source, "--documents", str(limit),
            "--cprofile", str(cprofile_top)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=common.REPO).stdout
    return json.loads(out.strip().splitlines()[-1])


def presidio_run(presidio, docs: list[dict]) -> dict:
    """Presidio analyze+anonymize on ``docs`` in this process: seconds and CPU seconds."""
    with common.timed() as t:
        presidio.run(docs)
    return {"seconds": t.wall, "cpu": t.cpu}


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="first N documents of the sample (default 40, quick 8)")
    parser.add_argument("--pairs", type=int, help="runs per variant, taking turns (default 3, quick 1)")
    parser.add_argument("--source", choices=SOURCES, default="train",
                        help="train: data/sample/tab-train-100.jsonl (default); dev: the unseen TAB dev texts")
    parser.add_argument("--presidio", action="store_true",
                        help="Presidio analyze+anonymize on the same documents once per pair, ratios within the pair")
    parser.add_argument("--variants", default="onnx-blas-default,onnx",
                        help=f"comma-separated, the first is the baseline of the ratios (of {', '.join(VARIANTS)})")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="one more run of the first variant under cProfile: its top N functions by own time")
    parser.add_argument("--child", choices=VARIANTS, help=argparse_suppress())
    args = parser.parse_args()
    limit = args.documents or (8 if args.quick else 40)
    if args.child:
        print(json.dumps(child(args.child, args.source, limit, args.cprofile)))
        return 0
    pairs = args.pairs or (1 if args.quick else 3)
    variants = tuple(args.variants.split(","))
    if len(variants) < 2 or not set(variants) <= set(VARIANTS):
        parser.error(f"--variants: two or more of {', '.join(VARIANTS)}")
    base = variants[0]
    docs = documents(args.source, limit)
    presidio = None
    if args.presidio:
        from bench_kafka import PresidioAnonymize

        presidio = PresidioAnonymize()
        presidio.run(docs[:2])  # first-call costs out of the timing
    systems = variants + (("presidio",) if presidio else ())
    runs: dict[str, list[dict]] = {b: [] for b in systems}
    for i in range(pairs):
        for system in (systems if i % 2 == 0 else systems[::-1]):
            common.log(f"run {i + 1}/{pairs}: {system}")
            runs[system].append(presidio_run(presidio, docs) if system == "presidio"
                                else run_child(system, args.source, limit))
            common.log(f"  {runs[system][-1]['seconds']:.1f} s")
    results = common.Results("profile", "Where the time of `anonstream run` goes: per stage, "
                             f"{' vs '.join(variants)} (issue 13, item 7)", args.quick)
    first = runs[base][0]
    corpus = ("the unseen TAB dev texts (`bench_kafka.dev_documents`)" if args.source == "dev"
              else "`data/sample/tab-train-100.jsonl`")
    results.add(
        f"`anonstream.runtime.embedded.run` (what `anonstream run` calls) on the first {first['documents']} "
        f"documents of {corpus} ({first['words']} words), default settings except the variant's environment "
        f"({'; '.join(f'`{v}`: ' + ' '.join(f'{k}={x}' for k, x in VARIANTS[v].items()) for v in variants)}); "
        f"{pairs} runs per variant in fresh child processes, taking turns. Run time excludes model loading. "
        "Whole run throughput ÷ the first variant's (pairs of neighbouring runs): " + ", ".join(
            f"`{v}` **{common.spread([b['seconds'] / o['seconds'] for b, o in zip(runs[base], runs[v])])}×**"
            for v in variants[1:]) + "."
    )
    summary = []
    for variant in variants:
        rs = runs[variant]
        summary.append([f"`{variant}`", common.spread([r["seconds"] for r in rs], "{:.1f}"),
                        common.spread([r["documents"] / r["seconds"] for r in rs], "{:.3f}"),
                        common.spread([r["words"] / r["seconds"] for r in rs], "{:.0f}"),
                        common.spread([r["load"] for r in rs], "{:.1f}"),
                        f"{common.median([r['rss'] for r in rs]):.0f}",
                        f"{rs[0]['documents_out']}/{rs[0]['documents']}"])
    results.add(common.table(["variant", "run s", "documents/s", "words/s", "load s", "peak RSS MiB",
                              "documents out/in"], summary))
    if presidio:
        results.section("Side by side: `anonstream run` and Presidio analyze+anonymize", presidio_section(
            runs, variants, first["words"], presidio.model))
    rows = []
    for name in wiring.STAGE_NAMES:
        row = [name]
        for variant in variants:
            rs = [r for r in runs[variant] if name in r["stages"]]
            if not rs:
                row += ["–", "–"]
                continue
            wall = common.median([r["stages"][name]["wall"] for r in rs])
            share = common.median([r["stages"][name]["wall"] / r["seconds"] for r in rs])
            row += [f"{wall:.2f}", f"{100 * share:.1f} %"]
        for variant in variants[1:]:
            ratio = [b["stages"][name]["wall"] / o["stages"][name]["wall"]
                     for b, o in zip(runs[base], runs[variant])
                     if name in b["stages"] and name in o["stages"] and o["stages"][name]["wall"] > 0]
            row.append(common.spread(ratio) if ratio else "–")
        rows.append(row)
    between = [common.median([r["seconds"] - sum(s["wall"] for s in r["stages"].values()) for r in runs[v]])
               for v in variants]
    rows.append(["*run − sum of stages*"] + [x for b in between for x in (f"{b:.2f}", "")] + [""] * (len(variants) - 1))
    results.section("Per stage", "\n\n".join([
        "Wall seconds inside each stage's `StageDriver.handle` + `tick` + `drain` (median over runs), its share "
        f"of the run, and `{base}` ÷ variant stage time per pair (> 1: the stage got faster). The audit re-embeds a "
        "sample of the changed chunks (`ANONSTREAM_AUDIT_UTILITY`), so it uses the backend too. With the overlap "
        "(`onnx-overlap*`) embed runs on a worker thread beside the other stages: the stages' seconds add up to more than "
        "the run (run − sum of stages < 0), and a stage's wall time includes sharing the cores with embed.",
        common.table(["stage"] + [x for v in variants for x in (f"{v} s", f"{v} share")]
                     + [f"{base} ÷ {v}" for v in variants[1:]], rows),
    ]))
    if args.cprofile:
        common.log(f"cProfile run: {base}")
        profiled = run_child(base, args.source, limit, args.cprofile)
        results.section("Python functions by own time (cProfile)", "\n\n".join([
            f"One more run of `{base}` under cProfile (not one of the timed runs: the profiler slows Python code "
            f"down), from the stages built to the end of the run, the {args.cprofile} functions with the most own time "
            f"(of the main thread). Run "
            f"{profiled['seconds']:.1f} s under the profiler.",
            common.table(["function", "calls", "own s", "cumulative s"],
                         [[f"`{f}`", c, f"{own:.2f}", f"{cum:.2f}"] for f, c, own, cum in profiled["functions"]]),
        ]))
    results.write()
    return 0


def presidio_section(runs: dict[str, list[dict]], variants: tuple[str, ...], words: int, model: str) -> str:
    """words/s (wall) and words per CPU-second (all threads) of each system, and each variant's run ÷ Presidio
    within a pair (> 1: faster than Presidio)."""
    rows = []
    for system in (*variants, "presidio"):
        rs = runs[system]
        label = f"`anonstream run`, `{system}`" if system != "presidio" else "Presidio analyze+anonymize"
        row = [label, common.spread([words / r["seconds"] for r in rs], "{:.0f}"),
               common.spread([words / r["cpu"] for r in rs], "{:.0f}")]
        if system == "presidio":
            row += ["1", "1"]
        else:
            row += [f"**{common.spread([p['seconds'] / r['seconds'] for r, p in zip(rs, runs['presidio'])])}**",
                    f"**{common.spread([p['cpu'] / r['cpu'] for r, p in zip(rs, runs['presidio'])])}**"]
        rows.append(row)
    return "\n\n".join([
        f"Same documents, same spaCy model (`{model}`), Presidio in this process once per pair between the "
        "variants' runs (default recognizers, per document, default operator). Words/s is wall time (load "
        "excluded); words per CPU-second counts every thread's CPU time, the fair figure on a shared machine "
        "(Presidio runs on one thread, `anonstream run` on several). Issue 13's target: run ÷ Presidio ≥ 1.0 "
        "while doing embedding, clustering, swapping and audit too.",
        common.table(["system", "words/s (wall)", "words per CPU-second", "÷ Presidio, wall (per pair)",
                      "÷ Presidio, CPU (per pair)"], rows),
        embed_budget(runs, variants),
    ])


def embed_budget(runs: dict[str, list[dict]], variants: tuple[str, ...]) -> str:
    """What run ÷ Presidio = 1.0 asks of the embed stage with every other stage as it is, per pair: budget =
    Presidio's seconds − the run's seconds outside embed (its ``handle``/``tick``/``drain`` wall time); the
    embed stage's seconds ÷ that budget = how many times faster embed would have to be (none: the rest alone is
    slower than Presidio)."""
    rows = []
    for variant in variants:
        pairs = [(r, p) for r, p in zip(runs[variant], runs["presidio"]) if "embed" in r["stages"]]
        if not pairs:
            continue
        embed = [r["stages"]["embed"]["wall"] for r, _ in pairs]
        rest = [r["seconds"] - e for (r, _), e in zip(pairs, embed)]
        budget = [p["seconds"] - x for (_, p), x in zip(pairs, rest)]
        needed = [e / b if b > 0 else float("inf") for e, b in zip(embed, budget)]
        rows.append([f"`{variant}`", common.spread([p["seconds"] for _, p in pairs], "{:.1f}"),
                     common.spread(rest, "{:.1f}"), common.spread(embed, "{:.1f}"),
                     common.spread(budget, "{:.1f}"),
                     "**" + ("none (the rest alone is slower)" if min(budget) <= 0
                             else common.spread(needed, "{:.1f}") + "×") + "**"])
    return ("What the target asks of embed: with every other stage as it is, run ÷ Presidio = 1.0 leaves embed "
            "Presidio's seconds minus the run's seconds outside embed (per pair).\n\n" + common.table(
                ["variant", "Presidio s", "run outside embed s", "embed s", "embed budget s",
                 "embed would have to be"], rows))


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
