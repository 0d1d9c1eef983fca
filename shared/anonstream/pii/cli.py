"""CLI commands of the pii package: ``eval-pii`` (TAB metrics), ``detect`` (JSONL spans) and ``train-policy``
(the learned masking decision, learned.py).

The main CLI (``anonstream.cli``) calls ``add_commands(subparsers)``. Standalone::

    python -m anonstream.pii.cli eval-pii --tab FILE.json [--tab OTHER.json] [--json]
    python -m anonstream.pii.cli detect --input docs.jsonl --output spans.jsonl
    python -m anonstream.pii.cli train-policy --tab FILE.json --docs 0:50 --out model.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from ..config import Settings

MASKED = ("DIRECT", "QUASI")


def _slice(spec: str | None, n: int) -> slice:
    if not spec:
        return slice(0, n)
    a, _, b = spec.partition(":")
    return slice(int(a) if a else 0, int(b) if b else n)


def _engine(args: argparse.Namespace):
    from .engine import PiiConfig, PiiEngine

    config = PiiConfig.load(args.config) if getattr(args, "config", None) else PiiConfig()
    if getattr(args, "spacy_model", None):
        config.spacy_model = args.spacy_model
    return PiiEngine.from_config(config)


def system_masks(engine, docs, batch_size: int = 8) -> tuple[dict[str, list[list[int]]], float, int]:
    """Run the detector on TAB documents; the mask is every span typed DIRECT or QUASI.
    Returns (masks, seconds, words)."""
    from .engine import DocumentEntities

    texts = [d.text for d in docs]
    registries = [DocumentEntities(d.doc_id) for d in docs]
    t0 = time.perf_counter()
    results = engine.detect_many(texts, registries, batch_size=batch_size)
    elapsed = time.perf_counter() - t0
    words = sum(len(t.split()) for t in texts)
    masks = {
        d.doc_id: [[s.start, s.end] for s in spans if s.identifier_type in MASKED]
        for d, spans in zip(docs, results)
    }
    return masks, elapsed, words


def _eval_file(engine, path: str, args: argparse.Namespace, weighting) -> dict[str, Any]:
    from ..evaluation.tab import TabEvaluator, load_tab

    docs = load_tab(path)
    docs = docs[_slice(args.docs, len(docs))]
    masks, elapsed, words = system_masks(engine, docs)
    evaluator = TabEvaluator(docs, nlp=None)
    scores = evaluator.evaluate(masks, weighting)
    scores["file"] = path
    scores["docs"] = args.docs or ":"
    scores["detector_seconds"] = round(elapsed, 3)
    scores["detector_words_per_s"] = round(words / elapsed, 1) if elapsed else None
    scores["_masks"] = masks
    return scores


def _weighting(choice: str):
    """``auto`` (the default): the unigram information-content weighting when ``wordfreq`` is installed (the
    ``bench`` extra), else no weighted precision (a note on stderr); the other metrics do not need it."""
    import importlib.util

    from ..evaluation.tab import UnigramICWeighting

    if choice == "auto":
        if importlib.util.find_spec("wordfreq") is None:
            print("note: weighted precision skipped (the unigram_ic weighting needs wordfreq: "
                  "pip install -e '.[bench]')", file=sys.stderr)
            return None
        choice = "unigram_ic"
    if choice == "unigram_ic" and importlib.util.find_spec("wordfreq") is None:
        raise SystemExit("eval-pii: --weighting unigram_ic needs the 'wordfreq' package: pip install -e '.[bench]'")
    return UnigramICWeighting() if choice == "unigram_ic" else None


def cmd_eval_pii(args: argparse.Namespace) -> int:
    """Evaluate on one or more TAB-format files (``--tab`` repeated) in one run: the detector and spaCy are
    loaded once. One file: the scores (dict) as before; several: a list of them, in ``--tab`` order."""
    from ..evaluation.tab import format_report

    weighting = _weighting(args.weighting)
    engine = _engine(args)
    paths = args.tab if isinstance(args.tab, list) else [args.tab]
    runs = [_eval_file(engine, path, args, weighting) for path in paths]
    masks = {}
    for scores in runs:
        masks.update(scores.pop("_masks"))
    if args.output_masks:
        with open(args.output_masks, "w", encoding="utf-8") as fh:
            json.dump(masks, fh)
    if args.json:
        json.dump(runs[0] if len(runs) == 1 else runs, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        for i, scores in enumerate(runs):
            if len(runs) > 1:
                print(("\n" if i else "") + f"== {scores['file']} (docs {scores['docs']})")
            print(format_report(scores))
            print(f"Detector: {scores['detector_words_per_s']} words/s ({scores['detector_seconds']:.1f}s)")
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    from .engine import DocumentEntities

    engine = _engine(args)
    inp = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        batch: list[dict[str, Any]] = []

        def flush() -> None:
            regs = [DocumentEntities(str(o["doc_id"])) for o in batch]
            for obj, spans in zip(batch, engine.detect_many([o["text"] for o in batch], regs)):
                row = {
                    "doc_id": obj["doc_id"],
                    "spans": [
                        {
                            "start": s.start,
                            "end": s.end,
                            "type": s.type,
                            "identifier_type": s.identifier_type,
                            "entity_id": s.entity_id,
                            **({"subtype": s.subtype} if s.subtype else {}),
                            **({"trace": s.recognizer} if args.trace else {}),
                        }
                        for s in spans
                    ],
                }
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            batch.clear()

        for line in inp:
            if line.strip():
                batch.append(json.loads(line))
                if len(batch) >= args.batch_size:
                    flush()
        if batch:
            flush()
    finally:
        if inp is not sys.stdin:
            inp.close()
        if out is not sys.stdout:
            out.close()
    return 0


def cmd_train_policy(args: argparse.Namespace) -> int:
    """Fit the learned masking decision on annotated TAB-format documents; use it with the PII config
    ``policy: {kind: learned, model: PATH}``. The detector runs with the rule policy (whose verdict is a feature)."""
    from ..evaluation.tab import load_tab
    from .engine import DocumentEntities
    from .learned import train, training_examples

    engine = _engine(args)
    engine.policy = make_rule_policy(engine.config.policy)
    docs: list = []
    for path in args.tab:
        loaded = load_tab(path)
        docs += loaded[_slice(args.docs, len(loaded))]
    registries = [DocumentEntities(d.doc_id) for d in docs]
    spans = engine.detect_many([d.text for d in docs], registries)
    X, y = training_examples(docs, spans, registries)
    if len(set(y.tolist())) < 2:
        print("train-policy: the documents need both masked and unmasked entities", file=sys.stderr)
        return 2
    described = ", ".join(f"{Path(p).name} docs {args.docs or ':'}" for p in args.tab)
    model = train(X, y, f"{described} ({len(y)} entities)", l2=args.l2, beta=args.beta)
    model.save(args.out)
    print(f"{len(y)} entities ({int(y.sum())} masked by the annotators), threshold {model.threshold:.3f} "
          f"(best F{args.beta:g} on the training entities) -> {args.out}")
    return 0


def make_rule_policy(spec: Any):
    """The rule policy of ``spec`` (its options kept), whatever kind ``spec`` asks for."""
    from .policies import make_policy
    from .policy import RulePolicy

    if isinstance(spec, dict) and spec.get("kind", "rules") == "rules":
        return make_policy(spec)
    return RulePolicy()


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser("eval-pii", help="run the PII detector on a TAB-format file and print TAB metrics")
    p.add_argument("--tab", required=True, action="append",
                   help="TAB-format JSON (echr_*.json, wiki_test.json); repeat to evaluate several files in one run")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.add_argument("--docs", help="document slice START:END (e.g. 0:50)")
    p.add_argument("--config", help="PII config (YAML/JSON)")
    p.add_argument("--spacy-model", help="spaCy model name or path")
    p.add_argument(
        "--weighting", choices=("auto", "none", "unigram_ic"), default="auto",
        help="weighted precision: unigram information content (wordfreq, the bench extra), a stand-in for TAB's "
             "BERT weighting; auto (default): unigram_ic when wordfreq is installed, else none",
    )
    p.add_argument("--output-masks", help="write the system masks {doc_id: [[start, end], ...]} (TAB system format)")
    p.set_defaults(func=cmd_eval_pii)

    d = subparsers.add_parser("detect", help="detect PII spans in a JSONL of {doc_id, text}")
    d.add_argument("--input", required=True, help="JSONL with doc_id and text per line ('-' = stdin)")
    d.add_argument("--output", required=True, help="JSONL: doc_id and spans per line ('-' = stdout)")
    d.add_argument("--config", help="PII config (YAML/JSON)")
    d.add_argument("--spacy-model", help="spaCy model name or path")
    d.add_argument("--batch-size", type=int, default=Settings().pii_max_batch,
                   help="documents per detection batch (default: ANONSTREAM_PII_MAX_BATCH, the pii service's, "
                        "%(default)s)")
    d.add_argument("--trace", action="store_true", help="include the recognizer/rule trace per span")
    d.set_defaults(func=cmd_detect)

    t = subparsers.add_parser("train-policy", help="fit the learned masking decision on annotated TAB-format documents")
    t.add_argument("--tab", required=True, action="append", help="TAB-format JSON with annotations; repeatable")
    t.add_argument("--docs", help="document slice START:END of each file (e.g. 0:50)")
    t.add_argument("--out", required=True, help="where to write the model (JSON)")
    t.add_argument("--beta", type=float, default=1.0, help="the threshold maximises F_beta (>1 favours recall)")
    t.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the logistic regression")
    t.add_argument("--config", help="PII config (YAML/JSON)")
    t.add_argument("--spacy-model", help="spaCy model name or path")
    t.set_defaults(func=cmd_train_policy)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="anonstream")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
