"""``anonstream generalize-terms``: a t audit for text (paper 002) — each term's t-plausible WordNet
generalization and the achieved t, for t given in bits per term."""
from __future__ import annotations

import argparse
import json
import sys


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("generalize-terms", help="t-plausible WordNet generalization of terms (paper 002)",
                              description=__doc__)
    p.add_argument("--terms", required=True, help='comma-separated nouns, e.g. "diabetes,leukemia,flu"')
    p.add_argument("--t", type=float, required=True, dest="bits",
                   help="bits per term: the terms together must have t = 2^(BITS x m) plausible originals")
    p.add_argument("--min-term-bits", type=float, default=0.0,
                   help="floor per term: each shown synset stands for at least 2^X concepts (default 0: only the "
                        "set's t counts, so a term may stay as it is)")
    p.add_argument("--alpha", type=float, default=0.5, help="eq. 1: weight of the global term (default 0.5)")
    p.add_argument("--algorithm", choices=("greedy", "lub", "exact"), default="greedy",
                   help="greedy: LUB + top-down greedy (Alg. 4 + 6, default); lub: Alg. 4 alone; exact: Alg. 3")
    p.add_argument("--senses", choices=("first", "embedding", "common"), default="embedding",
                   help="sense choice: embedding (gloss nearest the context; ambiguous: Alg. 2, default), "
                        "first (most frequent sense), common (Alg. 2 for every polysemous term)")
    p.add_argument("--context", default=None, help="text the terms come from, for --senses embedding "
                                                   "(default: the terms themselves)")
    p.add_argument("--model", default=None, help="embedding model (default: ANONSTREAM_EMBED_MODEL)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_generalize_terms)


def cmd_generalize_terms(args: argparse.Namespace) -> int:
    from .generalizer import generalize_terms, lazy_encoder

    terms = [t.strip() for t in args.terms.split(",") if t.strip()]
    if not terms or args.bits < 0 or args.min_term_bits < 0 or not 0 <= args.alpha <= 1:
        print("anonstream generalize-terms: need terms, --t >= 0, --min-term-bits >= 0 and 0 <= --alpha <= 1",
              file=sys.stderr)
        return 2
    encode = lazy_encoder(args.model) if args.senses == "embedding" else None
    try:
        result = generalize_terms(terms, args.bits, alpha=args.alpha, algorithm=args.algorithm,
                                  senses=args.senses, encode=encode, context=args.context,
                                  min_term_bits=args.min_term_bits)
    except FileNotFoundError as exc:
        print(f"anonstream generalize-terms: {exc}", file=sys.stderr)
        return 2
    summary = result.as_dict()
    if args.json:
        print(json.dumps(summary))
        return 0 if result.satisfied else 1
    for t in summary["terms"]:
        shown = f"{t['synset']} ({t['lemma']})" if t["synset"] else ("suppressed" if t["sense"] is None else "unchanged")
        print(f"{t['term']}: {shown}, {t['bits']} bits [{t['sense_method']}]")
    print(f"t: {summary['t_achieved_bits']} bits achieved of {summary['t_requested_bits']} requested "
          f"({summary['plausible_texts']} plausible texts), cost {summary['cost']['total']}")
    return 0 if result.satisfied else 1
