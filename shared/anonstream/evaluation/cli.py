"""``anonstream evaluate-release``: score a sanitized TAB corpus (what ``anonstream run`` writes) against
TAB's gold decisions, from the output text alone (``evaluation/release.py``)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate-release",
        help="score sanitized TAB documents against the gold: survival per identifier type, kind kept",
        description=__doc__,
    )
    p.add_argument("--tab", required=True, help="TAB-format gold JSON (e.g. echr_train_first100.json)")
    p.add_argument("--sanitized", required=True, help="JSONL of sanitized documents {doc_id, text, ...}")
    p.add_argument("--annotator", help="gold annotator to use (default: each document's first)")
    p.add_argument("--docs", metavar="A:B", help="only gold documents A..B-1 in file order (e.g. 50:100, a held-out "
                                                  "half); the other output documents are not scored")
    p.add_argument("--examples", type=int, default=0, metavar="N",
                   help="print N random replaced QUASI mentions side by side")
    p.add_argument("--seed", type=int, default=0, help="seed of the baseline draws and of the examples (default 0)")
    p.add_argument("--spacy-model", help="spaCy model for the kind judgement (default: the project's loader)")
    p.add_argument("--batch-size", type=int, default=64, help="nlp.pipe batch size (default 64)")
    p.add_argument("--json", action="store_true", help="print the scores as JSON instead of markdown")
    p.set_defaults(func=cmd_evaluate_release)


def read_sanitized(path: str | Path) -> list[tuple[str, str]]:
    """``(doc_id, text)`` per line of a JSONL of sanitized documents, in file order (duplicates kept)."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            if "doc_id" not in record or "text" not in record:
                raise ValueError(f"{path}:{number}: a sanitized document needs doc_id and text")
            out.append((str(record["doc_id"]), record["text"]))
    return out


def select_documents(documents: list, sanitized: list[tuple[str, str]], docs: str) -> tuple[list, list]:
    """Gold documents ``A:B`` (file order) and only their sanitized versions."""
    a, _, b = docs.partition(":")
    documents = documents[int(a or 0):int(b) if b else None]
    wanted = {d.doc_id for d in documents}
    return documents, [(doc_id, text) for doc_id, text in sanitized if doc_id in wanted]


def cmd_evaluate_release(args: argparse.Namespace) -> int:
    from .release import evaluate_release, spacy_tagger
    from .tab import load_tab

    documents = load_tab(args.tab)
    sanitized = read_sanitized(args.sanitized)
    if args.docs:
        documents, sanitized = select_documents(documents, sanitized, args.docs)
    nlp = None
    if args.spacy_model:
        from ..pii.spacy_model import load_spacy

        nlp = load_spacy(args.spacy_model, disable=("parser", "lemmatizer", "tagger", "attribute_ruler", "senter"))
    tagger = spacy_tagger(nlp, batch_size=args.batch_size)
    scores = evaluate_release(documents, sanitized, tagger=tagger, annotator=args.annotator,
                              seed=args.seed, examples=args.examples)
    if args.json:
        print(json.dumps(scores.as_dict(), indent=2, ensure_ascii=False))
    else:
        print(scores.to_markdown())
    if scores.misaligned_documents or scores.missing_documents:
        print(f"warning: {len(scores.misaligned_documents)} misaligned and {len(scores.missing_documents)} missing "
              f"documents excluded ({scores.excluded_mentions} gold mentions)", file=sys.stderr)
    return 0
