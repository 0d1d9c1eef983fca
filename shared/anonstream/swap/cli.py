"""``anonstream swap-corpus``: the paper's batch swapping procedure on a JSONL corpus of chunks
(paper 000 §2.2.1, §3.2.1), for planning a release before running the stream."""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from .. import serde
from ..records import Chunk


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "swap-corpus",
        help="swap named entities on a whole corpus of chunks (the paper's sequential procedure)",
        description=__doc__,
    )
    p.add_argument("--input", required=True, help="JSONL of chunks (chunk.v1 wire form, with entities and cluster)")
    p.add_argument("--release", help="release YAML (schemas/release.v1.json); default: the built-in default")
    p.add_argument("--output", help="JSONL of post-swap chunks (default: <input stem>.swapped.jsonl)")
    p.add_argument("--log", help="JSONL of swap-log records (restricted: holds values before the swap)")
    p.add_argument("--seed", type=int, default=None, help="seed of the pair draws")
    p.add_argument("--protect-rare", action="store_true",
                   help="give rare chunks that got no partner the release's fallback (what the stream does)")
    p.set_defaults(func=cmd_swap_corpus)


def cmd_swap_corpus(args: argparse.Namespace) -> int:
    from .batch import swap_corpus
    from .release import Release
    from .summary import summarize

    release = Release.from_yaml(args.release) if args.release else Release.default()
    source = Path(args.input)
    with source.open("rb") as handle:
        chunks = [Chunk.from_wire(serde.loads(line)) for line in handle if line.strip()]
    swapped, log = swap_corpus(chunks, release, random.Random(args.seed), protect_rare=args.protect_rare)
    output = Path(args.output) if args.output else source.with_name(f"{source.stem}.swapped.jsonl")
    with output.open("wb") as out:
        for chunk in swapped:
            out.write(serde.dumps(chunk.to_wire()) + b"\n")
    if args.log:
        with Path(args.log).open("wb") as out:
            for record in log:
                out.write(serde.dumps(record) + b"\n")
    summary = {"release": release.to_echo(), "output": str(output), **summarize(log, release.rare_k)}
    print(json.dumps(summary, indent=2), file=sys.stderr)
    return 0
