"""``anonstream evaluate-release``: score a sanitized corpus (what ``anonstream run`` writes) from the output text
alone: against TAB-format gold decisions (``--tab``: TAB, the Wikipedia biographies; ``evaluation/release.py``), and
with the checks any domain can use, gold or not (``--input``: the raw corpus; ``evaluation/checks.py``)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate-release",
        help="score sanitized documents: against TAB-format gold, and the checks of what stays true",
        description=__doc__,
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--tab", help="TAB-format gold JSON (e.g. echr_train_first100.json, wikibio/wiki_test.json)")
    source.add_argument("--input", help="JSONL of the raw documents {doc_id, text, ...}: the checks only, no gold")
    p.add_argument("--reference-counts", metavar="COUNTS_JSON",
                   help="identities per value of a reference corpus other than the stream's (anonstream counts warm "
                        "--out): turns on the over-masking check")
    p.add_argument("--common-k", type=float, default=0.05,
                   help="over-masking: a changed value at least this many reference identities mention (a count), "
                        "or this share of them (below 1); default %(default)s")
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


def load_reference(path: str | Path):
    """``commonness.FormCounts`` of a counts file (``anonstream counts warm --out``)."""
    from ..commonness import FormCounts, InMemoryValueCounts

    return FormCounts(InMemoryValueCounts.load(path))


def cmd_evaluate_release(args: argparse.Namespace) -> int:
    from .checks import check_release
    from .release import evaluate_release, spacy_tagger
    from .tab import load_tab

    sanitized = read_sanitized(args.sanitized)
    if args.input:
        raw = dict(read_sanitized(args.input))
        documents = None
    else:
        documents = load_tab(args.tab)
        if args.docs:
            documents, sanitized = select_documents(documents, sanitized, args.docs)
        raw = {d.doc_id: d.text for d in documents}
    nlp = None
    if args.spacy_model:
        from ..pii.spacy_model import load_spacy

        nlp = load_spacy(args.spacy_model, disable=("parser", "lemmatizer", "tagger", "attribute_ruler", "senter"))
    tagger = spacy_tagger(nlp, batch_size=args.batch_size)
    reference = load_reference(args.reference_counts) if args.reference_counts else None
    checks = check_release([(doc_id, raw[doc_id], text) for doc_id, text in sanitized if doc_id in raw],
                           tagger=tagger, reference=reference, common_k=args.common_k)
    if documents is None:
        print(json.dumps(checks.as_dict(), indent=2, ensure_ascii=False) if args.json else checks.to_markdown())
        return 0
    scores = evaluate_release(documents, sanitized, tagger=tagger, annotator=args.annotator,
                              seed=args.seed, examples=args.examples)
    if args.json:
        print(json.dumps({**scores.as_dict(), "checks": checks.as_dict()}, indent=2, ensure_ascii=False))
    else:
        print(scores.to_markdown() + "\n\n" + checks.to_markdown())
    if scores.misaligned_documents or scores.missing_documents:
        print(f"warning: {len(scores.misaligned_documents)} misaligned and {len(scores.missing_documents)} missing "
              f"documents excluded ({scores.excluded_mentions} gold mentions)", file=sys.stderr)
    return 0
