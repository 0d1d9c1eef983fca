"""Embed only what needs it (issue 27, item 1): ``anonstream run`` with every chunk embedded
(``ANONSTREAM_EMBED_OTHERS=1``, what embed@1 did) against the default (``stages.embed.needs_vector``: chunks with
swappable values, a 10 % hash sample of the others, the audit's DU sample), on the same documents, in fresh child
processes taking turns (all, needs, needs, all, ...).

Per run: run seconds (model loading excluded), words/s, the share of chunks embedded, DU, and per chunk the swap
log's (action, reason, tuple after). The swap stage's draws are seeded (``random.Random(0)``), so two runs of one
variant differ only where the mixture fit does; chunks are compared across variants and, as the noise floor,
across the two runs of the first variant.

    .venv/bin/python benchmarks/bench_embed_needs.py --documents 20 --pairs 2
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import common
from bench_pipeline import instrumented_run
from anonstream.runtime import embedded

VARIANTS = {"all": {"ANONSTREAM_EMBED_OTHERS": "1"}, "needs": {}}


def child(variant: str, limit: int) -> dict:
    os.environ.update(VARIANTS[variant])
    docs = common.read_documents(limit=limit)
    built: list = []
    build_stages = embedded.build_stages

    def seeded(*args, **kwargs):
        stages = build_stages(*args, **kwargs)
        next(s for s in stages if s.name == "swap").processor.rng = random.Random(0)
        built.extend(stages)
        return stages

    embedded.build_stages = seeded
    report, _ = instrumented_run(docs)
    embed = next(s for s in built if s.name == "embed").metrics()
    chunks = {f"{r['doc_id']}|{r['chunk_index']}": [r["action"], r["reason"], r["tuple_after"]]
              for r in report.swap_log}
    utility = next(iter(report.audit.get("risk", {}).values()), {}).get("utility", {})
    return {"variant": variant, "seconds": report.seconds, "words": sum(len(d["text"].split()) for d in docs),
            "documents": report.documents_in, "embedded": embed["embedded"], "skipped": embed["skipped"],
            "du": utility.get("du"), "utility_unscored": report.audit.get("utility_unscored", 0), "chunks": chunks}


def run_child(variant: str, limit: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", variant, "--documents", str(limit)], check=True,
                         capture_output=True, text=True, cwd=common.REPO).stdout
    return json.loads(out.strip().splitlines()[-1])


def agreement(a: dict, b: dict, keys: list[str]) -> str:
    same = sum(a["chunks"][k] == b["chunks"].get(k) for k in keys)
    return f"{same}/{len(keys)}"


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--child", choices=VARIANTS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.documents)))
        return 0
    runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    order = list(VARIANTS)
    for i in range(args.pairs):
        for variant in (order if i % 2 == 0 else order[::-1]):
            runs[variant].append(run_child(variant, args.documents))
            common.log(f"run {i + 1}: {variant} {runs[variant][-1]['seconds']:.1f} s")
    results = common.Results("embed_needs", "Embed only what needs it: every chunk embedded vs needs_vector",
                             args.quick)
    first = runs["all"][0]
    rows = []
    for variant, rs in runs.items():
        total = rs[0]["embedded"] + rs[0]["skipped"]
        rows.append([f"`{variant}`", f"{rs[0]['embedded']}/{total} ({100 * rs[0]['embedded'] / total:.0f} %)",
                     common.spread([r["seconds"] for r in rs], "{:.1f}"),
                     common.spread([r["words"] / r["seconds"] for r in rs], "{:.0f}"),
                     common.spread([r["du"] for r in rs if r["du"] is not None], "{:.3f}")
                     if any(r["du"] is not None for r in rs) else "–",
                     f"{rs[0]['utility_unscored']}"])
    results.add(f"`anonstream.runtime.embedded.run` on the first {first['documents']} documents of "
                f"`data/sample/tab-train-100.jsonl` ({first['words']} words), {args.pairs} runs per variant in fresh "
                "child processes taking turns; `all`: ANONSTREAM_EMBED_OTHERS=1; `needs`: the defaults. Speed-up "
                "(pairs of neighbouring runs): **" + common.spread(
                    [a["seconds"] / n["seconds"] for a, n in zip(runs["all"], runs["needs"])]) + "×**.")
    results.add(common.table(["variant", "chunks embedded", "run s", "words/s", "DU", "DU unscored"], rows))
    keys = sorted(first["chunks"])
    no_values = [k for k in keys if first["chunks"][k][1] == "no_values"]
    others = [k for k in keys if k not in no_values]
    table = [["`all` run 1 vs `needs` run 1", agreement(first, runs["needs"][0], no_values),
              agreement(first, runs["needs"][0], others)]]
    if args.pairs > 1:
        table.append(["`all` run 1 vs `all` run 2 (noise floor)", agreement(first, runs["all"][1], no_values),
                      agreement(first, runs["all"][1], others)])
    results.add("Chunks with the same swap log (action, reason, tuple after), by the first run's reason:")
    results.add(common.table(["runs", "no_values chunks", "other chunks"], table))
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
