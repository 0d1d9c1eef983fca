"""``anonstream plan-release``: replay a corpus through candidate releases, draw the risk-utility frontier,
choose one (paper 000 §2.3: max DU s.t. DR <= A with --max-risk, else the frontier point tangent to
DR = c + a·DU with a = --tradeoff-slope).

    anonstream plan-release --input docs.jsonl --candidates candidates.yaml --out DIR [--risk dr|uniques|attack]
                            [--max-risk A] [--tradeoff-slope a] [--attack-train F --attack-test F]

--risk names the measure the choice is made on (with DU): dr (eq. 2.16), uniques (the share of sample-unique
tuples left as they were) or attack (the attacker's accuracy, with the attack corpora). The command says when
the candidates' values do not differ beyond noise (2 binomial standard errors, planner/measures.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .measures import RISK_MEASURES


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("plan-release", help="risk-utility frontier of candidate releases, and the choice",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True, help="JSONL: {doc_id, text, metadata} per line")
    p.add_argument("--candidates", required=True,
                   help="YAML/JSON: candidates: [{name, swap: [categories], swap_rate}, ...]")
    p.add_argument("--out", required=True, help="output directory (frontier.json, frontier.png, plan.json)")
    p.add_argument("--risk", choices=RISK_MEASURES, default="dr",
                   help="the risk measure to choose on: dr, uniques or attack (default %(default)s)")
    p.add_argument("--max-risk", type=float, help="A: choose max DU subject to risk <= A (eq. 2.6)")
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


def _fmt(x, decimals: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{decimals}f}"


def _describe(row: dict, decimals: int) -> str:
    """One candidate: DR and what it is made of, the direct measures, DU (flagged above 1)."""
    r = row["risk"]
    parts = [f"DR {_fmt(row['DR'], decimals)} = 1 - {_fmt(r['swapped_unique_share'], 3)} x p_hat "
             f"{'n/a' if r['p_hat'] is None else format(r['p_hat'], '.3g')}",
             f"uniques kept {_fmt(r['uniques_kept_share'], 3)} of {r['sample_uniques_before']}",
             f"k {'n/a' if r['k'] is None else r['k']}"]
    if row["attack_accuracy"] is not None:
        parts.append("attack " + ", ".join(f"{k} {_fmt(v)}" for k, v in row["attack_accuracy"].items()))
    parts.append(f"DU {_fmt(row['DU'])}{' (!)' if row['DU_note'] else ''}")
    parts.append(f"changed {_fmt(row['share_changed'], 3)}")
    return "  ".join(parts)


def cmd_plan_release(args: argparse.Namespace) -> int:
    from .candidates import CandidatesInvalid, load_candidates
    from .measures import LABELS, separating_decimals
    from .plan import plan_release

    parser = args._parser
    if (args.attack_train is None) != (args.attack_test is None):
        parser.error("--attack-train and --attack-test go together")
    if args.risk == "attack" and args.attack_train is None:
        parser.error("--risk attack needs --attack-train and --attack-test")
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
                        write_sanitized=args.write_sanitized, risk=args.risk)
    rows = plan["candidates"]
    print(f"{plan['prefix']['documents']} documents, {plan['prefix']['chunks']} chunks, {len(candidates)} candidates "
          f"in {plan['seconds']:.1f} s (prefix {plan['prefix']['seconds']:.1f} s)", file=sys.stderr)
    populations = {r["risk"]["population"] for r in rows if r["risk"]["population"] is not None}
    if populations:
        print(f"population N = {', '.join(f'{n:.3g}' for n in sorted(populations))} (release superpopulation_size)",
              file=sys.stderr)
    decimals = separating_decimals([r["DR"] for r in rows])
    width = max(len(r["name"]) for r in rows)
    for row in rows:
        mark = "*" if row["optimal"] else ("f" if row["frontier"] else " ")
        m = row["risk_measure"]
        measure = f"  [{LABELS[args.risk]} {_fmt(m['value'], decimals if args.risk == 'dr' else 4)} ± " \
                  f"{'n/a' if m['se'] is None else format(m['se'], '.2g')}]"
        print(f" {mark} {row['name']:<{width}}  {_describe(row, decimals)}{measure}", file=sys.stderr)
    for note in sorted({r["DU_note"] for r in rows if r["DU_note"]}):
        print(f"(!) {note}", file=sys.stderr)
    choice = plan["choice"]
    print(f"risk measure {LABELS[args.risk]}: {choice['noise']['statement']}", file=sys.stderr)
    print(f"chosen: {choice['name'] or 'none'} ({choice['reason']})", file=sys.stderr)
    print(f"wrote {plan['outputs']['frontier_json']}, {plan['outputs']['frontier_png']}", file=sys.stderr)
    return 0
