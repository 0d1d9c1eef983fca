"""``anonstream plan-release``: replay a corpus through candidate releases, draw the risk-utility frontier,
choose one (paper 000 §2.3: max DU s.t. DR <= A with --max-risk, else the frontier point tangent to
DR = c + a·DU with a = --tradeoff-slope).

    anonstream plan-release --input docs.jsonl --candidates candidates.yaml --out DIR
                            [--max-risk A] [--tradeoff-slope a] [--attack-train F --attack-test F]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("plan-release", help="risk-utility frontier of candidate releases, and the choice",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True, help="JSONL: {doc_id, text, metadata} per line")
    p.add_argument("--candidates", required=True,
                   help="YAML/JSON: candidates: [{name, swap: [categories], swap_rate}, ...]")
    p.add_argument("--out", required=True, help="output directory (frontier.json, frontier.png, plan.json)")
    p.add_argument("--max-risk", type=float, help="A: choose max DU subject to DR <= A (eq. 2.6)")
    p.add_argument("--tradeoff-slope", type=float, default=1.0,
                   help="a > 0 of the linear trade-off DR = c + a*DU (eq. 2.8), used without --max-risk "
                        "(default %(default)s)")
    p.add_argument("--attack-train", help="JSONL: the attacker's training corpus (with --attack-test)")
    p.add_argument("--attack-test", help="JSONL: the raw test corpus, paired with the sanitized input by doc_id")
    p.add_argument("--label-key", default="ticker", help="metadata field holding the attack's secret label")
    p.add_argument("--lines-per-chunk", type=int, default=5, help="attack test chunks, in lines")
    p.add_argument("--seed", type=int, default=0, help="seed of the swap pairing")
    p.add_argument("--write-sanitized", action="store_true",
                   help="also write the chosen release's sanitized documents to DIR/optimal.sanitized.jsonl")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_plan_release, _parser=p)


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def cmd_plan_release(args: argparse.Namespace) -> int:
    from .candidates import CandidatesInvalid, load_candidates
    from .plan import plan_release

    parser = args._parser
    if (args.attack_train is None) != (args.attack_test is None):
        parser.error("--attack-train and --attack-test go together")
    if args.max_risk is None and not args.tradeoff_slope > 0:
        parser.error("--tradeoff-slope must be positive")
    if not Path(args.input).is_file():
        parser.error(f"--input {args.input}: no such file")
    try:
        candidates = load_candidates(args.candidates)
    except (CandidatesInvalid, OSError) as exc:
        print(f"plan-release: {args.candidates}: {exc}", file=sys.stderr)
        return 2
    plan = plan_release(args.input, candidates, args.out, max_risk=args.max_risk, slope=args.tradeoff_slope,
                        attack_train=args.attack_train, attack_test=args.attack_test, label_key=args.label_key,
                        lines_per_chunk=args.lines_per_chunk, seed=args.seed, progress=not args.quiet,
                        write_sanitized=args.write_sanitized)
    print(f"{plan['prefix']['documents']} documents, {plan['prefix']['chunks']} chunks, {len(candidates)} candidates "
          f"in {plan['seconds']:.1f} s (prefix {plan['prefix']['seconds']:.1f} s)", file=sys.stderr)
    for row in plan["candidates"]:
        mark = "*" if row["optimal"] else ("f" if row["frontier"] else " ")
        attack = row["attack_accuracy"]
        extra = "" if attack is None else "  attack " + ", ".join(f"{k} {_fmt(v)}" for k, v in attack.items())
        print(f" {mark} {row['name']:<24} DR {_fmt(row['DR'])}  DU {_fmt(row['DU'])}  changed "
              f"{_fmt(row['share_changed'])}{extra}", file=sys.stderr)
    choice = plan["choice"]
    print(f"chosen: {choice['name'] or 'none'} ({choice['reason']})", file=sys.stderr)
    print(f"wrote {plan['outputs']['frontier_json']}, {plan['outputs']['frontier_png']}", file=sys.stderr)
    return 0
