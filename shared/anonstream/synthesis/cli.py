"""``anonstream synth`` and ``anonstream synth-calibrate``: partially synthetic categorical metadata
(paper 003) for a JSONL of documents ``{doc_id, text, metadata}``; the fields are read from ``metadata``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .calibrate import calibrate, lambda_path, synthesize


def _load(path: str, fields: list[str]) -> tuple[list[dict], list[str], dict[str, list[str]]]:
    with open(path, encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle if line.strip()]
    for f in fields:
        missing = sum(1 for d in docs if (d.get("metadata") or {}).get(f) is None)
        if missing:
            raise SystemExit(f"field {f!r} is missing from the metadata of {missing} of {len(docs)} documents")
    values = {f: [str(d["metadata"][f]) for d in docs] for f in fields}
    return docs, [d["text"] for d in docs], values


def _surface_forms(path: str | None) -> dict | None:
    return json.loads(Path(path).read_text(encoding="utf-8")) if path else None


def _write_json(path: str, obj: dict) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _synth(args: argparse.Namespace) -> int:
    fields = [f for f in args.fields.split(",") if f]
    docs, texts, values = _load(args.input, fields)
    run = synthesize(texts, values, fields, args.lambda_ratio, seed=args.seed, copies=args.copies,
                     projections=args.projections, surface_forms=_surface_forms(args.surface_forms),
                     consistent=not args.no_consistency)
    release = run.copies[0]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        for i, doc in enumerate(docs):
            metadata = {**doc.get("metadata", {}), **{f: release[f][i] for f in fields}, "synthetic_fields": fields}
            handle.write(json.dumps({**doc, "metadata": metadata}, ensure_ascii=False) + "\n")
    report = run.report()
    _write_json(args.report, report)
    print(f"{len(docs)} documents, R={args.lambda_ratio}: pMSE ratio {report['pmse_ratio']:.3f}, agreement "
          + ", ".join(f"{f} {a:.3f} (marginal {report['marginal_agreement'][f]:.3f})"
                      for f, a in report["agreement"].items()) + f" -> {args.out}, {args.report}", file=sys.stderr)
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    fields = [f for f in args.fields.split(",") if f]
    _, texts, values = _load(args.input, fields)
    result = calibrate(texts, values, fields, lambda_path(args.points, args.min_ratio), seed=args.seed,
                       copies=args.copies, projections=args.projections,
                       surface_forms=_surface_forms(args.surface_forms), consistent=not args.no_consistency)
    out = result.as_dict()
    _write_json(args.report, out)
    chosen = out["chosen"]
    print(f"chosen R={chosen['lambda_ratio']:.4g} (pMSE ratio {chosen['pmse_ratio']:.3f}"
          + (", below 1: over-fit" if out["overfit_warning"] else "") + f") -> {args.report}", file=sys.stderr)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", required=True, help="JSONL: {doc_id, text, metadata} per line")
    p.add_argument("--fields", required=True, help="comma-separated metadata fields, in synthesis order")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--projections", type=int, default=20, help="random projections of the text for the pMSE")
    p.add_argument("--surface-forms", help='JSON {field: {level: [words that name it in the text]}}')
    p.add_argument("--no-consistency", action="store_true",
                   help="draw freely even when the text names a level (see synthesis/consistency.py)")


def add_commands(subparsers) -> None:
    synth = subparsers.add_parser("synth", help="replace categorical metadata fields by sequential L1-logit "
                                                "draws (paper 003); R = λ/λ_max, R >= 1: marginal distribution")
    _common(synth)
    synth.add_argument("--lambda-ratio", type=float, required=True, help="R = λ / λ_max (> 0)")
    synth.add_argument("--copies", type=int, default=5, help="M copies for the pMSE and agreement; the first is written")
    synth.add_argument("--out", required=True, help="JSONL, the documents with the fields replaced")
    synth.add_argument("--report", required=True, help="JSON: lambda, lambda_max, pmse_ratio, agreement per field")
    synth.set_defaults(func=_synth)
    cal = subparsers.add_parser("synth-calibrate", help="pick R on a λ path with the pMSE ratio closest to 1")
    _common(cal)
    cal.add_argument("--points", type=int, default=12, help="R values from 1 down to --min-ratio, log-spaced")
    cal.add_argument("--min-ratio", type=float, default=1e-3)
    cal.add_argument("--copies", type=int, default=5, help="M copies per R")
    cal.add_argument("--report", required=True, help="JSON: the path and the chosen R")
    cal.set_defaults(func=_calibrate)
