"""``anonstream risk pitman``: fit the Ewens-Pitman model to class sizes and estimate population
uniques (paper 000 §2.4, eq. 2.10, 2.14, 2.15). ``anonstream risk uniqueness``: the population uniques of the
Pitman, Zayatz and SNB models and the one Dankar et al.'s rule picks (``risk.uniqueness``)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    risk = subparsers.add_parser("risk", help="disclosure-risk models (Ewens-Pitman population uniques)")
    sub = risk.add_subparsers(dest="risk_command", required=True)
    _sizes_command(sub, "pitman", "Ewens-Pitman MLE, population uniques and p_hat from class sizes",
                   "superpopulation size N >= n for eq. 2.14-2.15 (the paper uses 1e10-1e30)", cmd_pitman)
    _sizes_command(sub, "uniqueness", "population uniques by Pitman, Zayatz and SNB, and Dankar's choice",
                   "population size N >= n (the sampling fraction n / N decides Dankar's rule)", cmd_uniqueness)


def _sizes_command(sub, name: str, help_text: str, population_help: str, func) -> None:
    """A sub-command that reads class sizes and takes N, by default the audit's (the shipped release's)."""
    from ..swap.release import DEFAULT_RELEASE

    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--sizes", required=True, help='JSON file {"sizes": [n_1, n_2, ...]} (one size per distinct tuple)')
    p.add_argument("--population", type=float, default=DEFAULT_RELEASE["superpopulation_size"],
                   help=f"{population_help}; default %(default)g, the shipped release's superpopulation_size")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=func)


def _read_sizes(path: str) -> list[int]:
    data = json.loads(Path(path).read_text())
    sizes = data["sizes"] if isinstance(data, dict) else None
    if not isinstance(sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
        raise ValueError('expected {"sizes": [n_1, n_2, ...]} with integer sizes')
    return sizes


def cmd_pitman(args: argparse.Namespace) -> int:
    from .pitman import fit_pitman

    try:
        fit = fit_pitman(_read_sizes(args.sizes))
        summary = fit.as_dict(args.population)
    except (OSError, ValueError, KeyError) as exc:
        print(f"anonstream risk pitman: {args.sizes}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary, allow_nan=False))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")
    return 0


def cmd_uniqueness(args: argparse.Namespace) -> int:
    from .uniqueness import MODELS, estimate_population_uniqueness

    try:
        est = estimate_population_uniqueness(_read_sizes(args.sizes), args.population)
    except (OSError, ValueError, KeyError) as exc:
        print(f"anonstream risk uniqueness: {args.sizes}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(est.as_dict(), allow_nan=False))
        return 0
    print(f"n {est.n}, sample uniques {est.sample_uniques}, N {est.population:.4g}, "
          f"sampling fraction {est.sampling_fraction:.4g}")
    print(f"{'model':<8} {'population uniques':>20} {'share of N':>12} {'p_hat':>12}")
    for name in MODELS:
        m = est.models[name]
        cells = ["n/a" if v is None else f"{v:.6g}" for v in (m.uniques, m.share, m.p_hat)]
        mark = "  <- Dankar's rule" if name == est.dankar else ""
        print(f"{name:<8} {cells[0]:>20} {cells[1]:>12} {cells[2]:>12}{mark}")
    return 0
