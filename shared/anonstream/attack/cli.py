"""``anonstream attack``: re-identification attack harness (train on one corpus, predict the label of
line chunks of another, before and after sanitization).

    anonstream attack --train A.jsonl --test B.jsonl [--sanitized S.jsonl] [--json [PATH]]
    anonstream attack split --corpus maec.jsonl --out DIR      # DIR/<period>.jsonl per period
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("attack", help="re-identification attack harness (run, or split a corpus by period)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", nargs="?", choices=["run", "split"], default="run",
                   help="run (default) the attack, or split a corpus into one JSONL per period")
    run = p.add_argument_group("run")
    run.add_argument("--train", help="JSONL {doc_id, text, metadata}: the attacker's training corpus")
    run.add_argument("--test", help="JSONL {doc_id, text, metadata}: the raw test corpus")
    run.add_argument("--sanitized", help="JSONL of the sanitized test corpus (without it: only 'before' numbers)")
    run.add_argument("--lines-per-chunk", type=int, default=5)
    run.add_argument("--label-key", default="ticker", help="metadata field holding the secret label")
    run.add_argument("--train-unit", choices=["chunk", "document"], default="chunk")
    run.add_argument("--ngram-max", type=int, default=1, help="largest word n-gram of the TF-IDF features")
    run.add_argument("--json", nargs="?", const="-", metavar="PATH",
                     help="write the full result as JSON to PATH (no PATH: to stdout)")
    run.add_argument("--seed", type=int, default=0)
    split = p.add_argument_group("split")
    split.add_argument("--corpus", help="JSONL with a period per record (metadata or top level)")
    split.add_argument("--out", help="output directory: one <period>.jsonl per period")
    split.add_argument("--key", default="period", help="field to split on")
    p.set_defaults(func=cmd_attack, _parser=p)


def cmd_attack(args: argparse.Namespace) -> int:
    return _split(args) if args.action == "split" else _run(args)


def _split(args: argparse.Namespace) -> int:
    from .. import serde
    from .harness import read_jsonl, split_by

    if not args.corpus or not args.out:
        args._parser.error("attack split needs --corpus and --out")
    groups = split_by(read_jsonl(args.corpus), args.key)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for value, docs in sorted(groups.items()):
        path = out / f"{value}.jsonl"
        with path.open("wb") as handle:
            for doc in docs:
                handle.write(serde.dumps(doc) + b"\n")
        print(f"{len(docs)} documents -> {path}", file=sys.stderr)
    return 0


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _run(args: argparse.Namespace) -> int:
    from .harness import load_documents, run_attack

    if not args.train or not args.test:
        args._parser.error("attack needs --train and --test")
    train = load_documents(args.train, args.label_key)
    test = load_documents(args.test, args.label_key)
    sanitized = load_documents(args.sanitized, args.label_key) if args.sanitized else None
    result = run_attack(train, test, sanitized, lines_per_chunk=args.lines_per_chunk, label_key=args.label_key,
                        train_unit=args.train_unit, ngram_max=args.ngram_max, seed=args.seed)
    summary = result.as_dict()
    print(f"train: {result.train_documents} documents, {result.train_samples} samples, {result.labels} labels; "
          f"test: {result.test_documents} documents, {result.test_chunks} chunks of {result.lines_per_chunk} lines "
          f"({result.test_documents_label_unseen} documents with a label unseen in training)", file=sys.stderr)
    if result.alignment is not None:
        a = summary["alignment"]
        print(f"alignment: {a['paired_documents']} paired, {a['misaligned_documents']} misaligned, "
              f"{a['missing_documents']} missing, {a['extra_documents']} extra, {a['duplicate_documents']} duplicate "
              f"sanitized documents", file=sys.stderr)
    for name, r in result.attackers.items():
        line = f"{name:>11}: accuracy before {_fmt(r.accuracy_before)}"
        if r.mcnemar is not None:
            line += (f", on {r.paired_chunks} paired chunks {_fmt(r.accuracy_before_paired)} -> "
                     f"{_fmt(r.accuracy_after)} (relative drop {_fmt(r.relative_drop)}; McNemar b={r.mcnemar.b} "
                     f"c={r.mcnemar.c} p={r.mcnemar.p_value:.3g})")
        print(line, file=sys.stderr)
    if result.alignment is not None:
        print(f"tokens unchanged: {_fmt(result.tokens_unchanged_share)} of {result.tokens_raw}; placeholders "
              f"introduced: {result.placeholders_introduced} for {result.proper_nouns} proper nouns "
              f"({_fmt(result.placeholders_per_proper_noun)} per proper noun)", file=sys.stderr)
        for name, t in summary["targets"].items():
            print(f"target {name} {t['op']} {t['threshold']}: {_fmt(t['value'])} "
                  f"({'met' if t['met'] else 'not met' if t['met'] is not None else 'n/a'})", file=sys.stderr)
    if args.json:
        text = json.dumps(summary, indent=2)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(text + "\n")
    return 0
