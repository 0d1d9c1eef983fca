"""CPU per document of the pii stage core (``PiiStage`` on whole documents, as the pii service runs it) on the
unseen TAB dev texts, split into spaCy (tokenizer + NER on the candidate windows, ``PiiEngine.spacy_docs``) and the
rest (recognizers, refinement, vetting, grouping, typing, operators), issue 27.

Each run is a fresh child process: the engine is built (model loading excluded from the times), BLAS is limited to
one thread as in the services (``wiring.blas_limit``), the documents are cut into chunks as the ingest stage cuts
them and every document goes through ``PiiStage._document``; CPU = ``time.process_time`` (all threads). With
``--baseline-code DIR`` a second variant runs the code of another tree (a checkout or ``git archive`` of another
commit: ``PYTHONPATH=DIR/shared:DIR``), the variants taking turns (a, b, b, a, ...), so a change's CPU per document
is set against the code before it on the same machine load; the outputs (sanitized texts and spans of every
chunk) are hashed, so the table also tells whether both trees give the same output, and the spaCy version each
variant imported (its ``PYTHONPATH`` decides) is recorded.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import common

THIS_TREE = "this tree"


def child(limit: int | None) -> dict:
    """One run in this process: CPU seconds in spaCy and in total, documents, words, hash of the outputs."""
    import spacy
    from bench_kafka import dev_documents
    from anonstream.pii.engine import InMemoryPseudonymStore, PiiConfig, PiiEngine
    from anonstream.records import Chunk, Document
    from anonstream.runtime.wiring import blas_limit
    from anonstream.stages.ingest import IngestStage
    from anonstream.stages.pii import PiiStage
    from anonstream.stores.base import InMemoryDocumentState

    blas_limit(1)
    docs = dev_documents(limit)
    ingest = IngestStage()
    wires = [[c.to_wire() for c in ingest.chunks(Document.from_wire(d))] for d in docs]
    engine = PiiEngine.from_config(PiiConfig())
    spacy_cpu = 0.0
    spacy_docs = engine.spacy_docs

    def timed_spacy_docs(*args, **kwargs):
        nonlocal spacy_cpu
        docs_of = iter(spacy_docs(*args, **kwargs))
        while True:
            started = time.process_time()
            try:
                doc = next(docs_of)
            except StopIteration:
                spacy_cpu += time.process_time() - started
                return
            spacy_cpu += time.process_time() - started
            yield doc

    engine.spacy_docs = timed_spacy_docs
    stage = PiiStage(engine, InMemoryPseudonymStore(), InMemoryDocumentState())
    digest = hashlib.sha256()
    started = time.process_time()
    for chunks in wires:
        for emit in stage._document([Chunk.from_wire(w) for w in chunks]):
            digest.update(json.dumps(emit.value, sort_keys=True, default=str).encode())
    total = time.process_time() - started
    return {"cpu": total, "spacy_cpu": spacy_cpu, "documents": len(docs),
            "words": sum(len(d["text"].split()) for d in docs), "output": digest.hexdigest()[:16],
            "spacy": spacy.__version__}


def run_child(code: str | None, limit: int | None) -> dict:
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(code) / "shared"), str(code)])
    argv = [sys.executable, __file__, "--child"] + (["--documents", str(limit)] if limit else [])
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = common.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="TAB dev documents (default all 127, quick 12)")
    parser.add_argument("--repetitions", type=int, help="runs per variant (default 4, quick 2)")
    parser.add_argument("--baseline-code", help="a tree whose pii core runs beside this one's (the baseline)")
    parser.add_argument("--child", action="store_true", help=__import__("argparse").SUPPRESS)
    args = parser.parse_args()
    limit = args.documents or (12 if args.quick else None)
    if args.child:
        print(json.dumps(child(limit)))
        return 0
    reps = args.repetitions or (2 if args.quick else 4)
    variants = ([f"`{common.rel(args.baseline_code)}`"] if args.baseline_code else []) + [THIS_TREE]
    code = {THIS_TREE: None, **({variants[0]: args.baseline_code} if args.baseline_code else {})}
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    for r in range(reps):
        for v in (variants if r % 2 == 0 else variants[::-1]):
            runs[v].append(run_child(code[v], limit))
            got = runs[v][-1]
            common.log(f"{v} #{r + 1}: {1000 * got['cpu'] / got['documents']:.1f} ms/doc")
    results = common.Results("pii_core", "CPU per document of the pii stage core, spaCy and the rest (issue 27)",
                             args.quick)
    first = runs[variants[0]][0]
    results.add(f"`PiiStage._document` on the {first['documents']} unseen TAB dev texts ({first['words']:,} words), "
                "cut into chunks as the ingest stage cuts them, in a fresh child process per run (model loading "
                f"excluded, BLAS limited to one thread as in the services); {reps} runs per variant taking turns. "
                "CPU = `time.process_time` (all threads); spaCy = the tokenizer and the NER on the candidate windows "
                "(`PiiEngine.spacy_docs`), the rest = everything else of the stage core."
                + (f" Baseline: the code in {variants[0]}." if args.baseline_code else ""))
    base = runs[variants[0]]
    rows = []
    for v in variants:
        per_doc = [1000 * x["cpu"] / x["documents"] for x in runs[v]]
        spacy = [1000 * x["spacy_cpu"] / x["documents"] for x in runs[v]]
        rest = [a - b for a, b in zip(per_doc, spacy)]
        ratio = [b["cpu"] / x["cpu"] for b, x in zip(base, runs[v])]
        rows.append([v, ", ".join(sorted({x["spacy"] for x in runs[v]})), f"**{common.spread(per_doc, '{:.1f}')}**",
                     common.spread(spacy, "{:.1f}"),
                     common.spread(rest, "{:.1f}"), f"{common.median([s / t for s, t in zip(spacy, per_doc)]):.0%}",
                     "1 (baseline)" if v == variants[0] else common.spread(ratio),
                     ", ".join(sorted({x["output"] for x in runs[v]}))])
    results.section("CPU ms per document", "\n\n".join([
        common.table(["code", "spaCy", "CPU ms/doc, median (min–max)", "spaCy ms/doc", "rest ms/doc", "spaCy share",
                      "baseline CPU ÷ this CPU (per pair)", "output hash"], rows),
        "Same output hash = the same sanitized texts and spans for every chunk."]))
    results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
