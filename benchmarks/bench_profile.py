"""Where the time of ``anonstream run`` goes, per stage, with the embedding backend before (torch) and after
(ONNX Runtime int8) the ONNX change (issue 13, item 7).

Each run is ``anonstream.runtime.embedded.run`` on the same documents in a fresh child process (its own
model loads, caches and RSS) with ``ANONSTREAM_EMBED_BACKEND`` set; the stage timers are those of
``bench_pipeline.Instruments`` (time inside each stage's ``StageDriver.handle`` + ``tick`` + ``drain``).
The backends take turns run by run (torch, onnx, onnx, torch, ...), so they share the machine's load;
ratios are taken within a pair of neighbouring runs and the median over pairs is reported.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import common
from bench_pipeline import instrumented_run
from anonstream.runtime import wiring

BACKENDS = ("torch", "onnx")


def child(backend: str, limit: int | None) -> dict:
    """One run in this process (``--child``): stage clocks, run seconds, words, as a dict."""
    os.environ["ANONSTREAM_EMBED_BACKEND"] = backend
    docs = common.read_documents(limit=limit)
    report, instruments = instrumented_run(docs)
    stages = {name: {"wall": c.wall, "cpu": c.cpu, "records_in": c.records_in, "load": c.load_wall}
              for name, c in instruments.clocks.items()}
    return {"backend": backend, "seconds": report.seconds, "documents": report.documents_in,
            "documents_out": report.documents_out, "words": sum(len(d["text"].split()) for d in docs),
            "load": instruments.build_wall, "rss": common.peak_rss_mib(), "stages": stages}


def run_child(backend: str, limit: int | None) -> dict:
    argv = [sys.executable, __file__, "--child", backend] + (["--documents", str(limit)] if limit else [])
    out = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=common.REPO).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="first N documents of the sample (default 40, quick 8)")
    parser.add_argument("--pairs", type=int, help="runs per backend, taking turns (default 3, quick 1)")
    parser.add_argument("--child", choices=BACKENDS, help=argparse_suppress())
    args = parser.parse_args()
    limit = args.documents or (8 if args.quick else 40)
    if args.child:
        print(json.dumps(child(args.child, limit)))
        return 0
    pairs = args.pairs or (1 if args.quick else 3)
    runs: dict[str, list[dict]] = {b: [] for b in BACKENDS}
    for i in range(pairs):
        for backend in (BACKENDS if i % 2 == 0 else BACKENDS[::-1]):
            common.log(f"run {i + 1}/{pairs}: {backend}")
            runs[backend].append(run_child(backend, limit))
            common.log(f"  {runs[backend][-1]['seconds']:.1f} s")
    results = common.Results("profile", "Where the time of `anonstream run` goes: per stage, torch vs ONNX "
                             "embedding (issue 13, item 7)", args.quick)
    first = runs["torch"][0]
    speedup = [t["seconds"] / o["seconds"] for t, o in zip(runs["torch"], runs["onnx"])]
    results.add(
        f"`anonstream.runtime.embedded.run` (what `anonstream run` calls) on the first {first['documents']} "
        f"documents of `data/sample/tab-train-100.jsonl` ({first['words']} words), default settings except "
        f"`ANONSTREAM_EMBED_BACKEND`; {pairs} runs per backend in fresh child processes, taking turns. "
        f"Run time excludes model loading. Whole run, onnx ÷ torch throughput (pairs of neighbouring runs): "
        f"**{common.spread(speedup)}×**."
    )
    summary = []
    for backend in BACKENDS:
        rs = runs[backend]
        summary.append([f"`{backend}`", common.spread([r["seconds"] for r in rs], "{:.1f}"),
                        common.spread([r["documents"] / r["seconds"] for r in rs], "{:.3f}"),
                        common.spread([r["words"] / r["seconds"] for r in rs], "{:.0f}"),
                        common.spread([r["load"] for r in rs], "{:.1f}"),
                        f"{common.median([r['rss'] for r in rs]):.0f}",
                        f"{rs[0]['documents_out']}/{rs[0]['documents']}"])
    results.add(common.table(["embedding backend", "run s", "documents/s", "words/s", "load s", "peak RSS MiB",
                              "documents out/in"], summary))
    rows = []
    for name in wiring.STAGE_NAMES:
        row = [name]
        for backend in BACKENDS:
            rs = [r for r in runs[backend] if name in r["stages"]]
            if not rs:
                row += ["–", "–"]
                continue
            wall = common.median([r["stages"][name]["wall"] for r in rs])
            share = common.median([r["stages"][name]["wall"] / r["seconds"] for r in rs])
            row += [f"{wall:.2f}", f"{100 * share:.1f} %"]
        ratio = [t["stages"][name]["wall"] / o["stages"][name]["wall"]
                 for t, o in zip(runs["torch"], runs["onnx"])
                 if name in t["stages"] and name in o["stages"] and o["stages"][name]["wall"] > 0]
        row.append(common.spread(ratio) if ratio else "–")
        rows.append(row)
    for backend_runs, label in ((runs["torch"], "torch"), (runs["onnx"], "onnx")):
        other = [r["seconds"] - sum(s["wall"] for s in r["stages"].values()) for r in backend_runs]
        common.log(f"{label}: between stages {common.median(other):.2f} s")
    between = [common.median([r["seconds"] - sum(s["wall"] for s in r["stages"].values()) for r in runs[b]])
               for b in BACKENDS]
    rows.append(["*between stages*", f"{between[0]:.2f}", "", f"{between[1]:.2f}", "", ""])
    results.section("Per stage", "\n\n".join([
        "Wall seconds inside each stage's `StageDriver.handle` + `tick` + `drain` (median over runs), its share "
        "of the run, and torch ÷ onnx stage time per pair (> 1: the stage got faster). The audit re-embeds a "
        "sample of the changed chunks (`ANONSTREAM_AUDIT_UTILITY`), so it uses the backend too.",
        common.table(["stage", "torch s", "torch share", "onnx s", "onnx share", "torch ÷ onnx"], rows),
    ]))
    results.write()
    return 0


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
