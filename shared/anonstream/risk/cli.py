"""``anonstream risk pitman``: fit the Ewens-Pitman model to class sizes and estimate population
uniques (paper 000 §2.4, eq. 2.10, 2.14, 2.15)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    risk = subparsers.add_parser("risk", help="disclosure-risk models (Ewens-Pitman population uniques)")
    sub = risk.add_subparsers(dest="risk_command", required=True)
    p = sub.add_parser("pitman", help="Ewens-Pitman MLE, population uniques and p_hat from class sizes",
                       description=__doc__)
    p.add_argument("--sizes", required=True, help='JSON file {"sizes": [n_1, n_2, ...]} (one size per distinct tuple)')
    p.add_argument("--population", type=float, default=None,
                   help="superpopulation size N >= n for eq. 2.14-2.15 (the paper uses 1e10-1e30)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of key: value lines")
    p.set_defaults(func=cmd_pitman)


def cmd_pitman(args: argparse.Namespace) -> int:
    from .pitman import fit_pitman

    try:
        data = json.loads(Path(args.sizes).read_text())
        sizes = data["sizes"] if isinstance(data, dict) else None
        if not isinstance(sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
            raise ValueError('expected {"sizes": [n_1, n_2, ...]} with integer sizes')
        fit = fit_pitman(sizes)
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
