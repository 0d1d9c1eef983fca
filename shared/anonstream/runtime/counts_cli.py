"""``anonstream counts warm``: seed the identities-per-value counts (commonness.py) from a reference corpus.

The documents go through the same ingest and pii stages as the stream (one code path: the pii stage counts each
document's named values for its identity), with the common-value rule off, so only counting happens. The counts go
to a file (``--out``, for ``anonstream run --counts`` / ``ANONSTREAM_VALUE_COUNTS``) or to the services' Redis
(``--redis``: ``ANONSTREAM_REDIS_URL``, keyed with ``ANONSTREAM_PSEUDONYM_KEY`` like the pii service's own counts).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import serde
from ..commonness import CommonRule, InMemoryValueCounts, ValueCounts
from ..config import Settings
from ..records import Document


def warm(input_path: Path, identity_field: str | None, counts: ValueCounts, settings: Settings,
         progress: bool = True) -> int:
    """Count the named values of every document of ``input_path`` into ``counts``; returns the documents read.
    Lines that are not valid documents are skipped and counted on stderr (a reference corpus, not the stream)."""
    from tqdm import tqdm

    from ..stages.ingest import IngestStage
    from .wiring import build_stage, in_memory_stores

    stores = in_memory_stores(settings)
    stores.value_counts = counts
    ingest = IngestStage(settings.chunk_max_chars, settings.chunk_max_sentences)
    pii = build_stage("pii", settings, stores)
    pii.common, pii.identity_field = CommonRule(), identity_field
    done = skipped = 0
    with input_path.open("rb") as handle:
        for line in tqdm(handle, unit="doc", disable=not progress, desc="counting"):
            if not line.strip():
                continue
            try:
                document = Document.from_wire(serde.loads(line))
            except (ValueError, TypeError, KeyError):
                skipped += 1
                continue
            pii.process([(None, chunk) for chunk in ingest.chunks(document)])
            done += 1
    if skipped:
        print(f"skipped {skipped} lines that are not documents", file=sys.stderr)
    return done


def cmd_warm(args: argparse.Namespace) -> int:
    settings = Settings()
    if args.redis:
        from ..pii.keys import KeyRing
        from ..stores.redis_state import connect_settings
        from ..stores.redis_values import RedisValueCounts

        counts: ValueCounts = RedisValueCounts(connect_settings(settings), settings.tenant,
                                               KeyRing.from_env(required=True), ttl_s=settings.value_counts_ttl_s)
    else:
        counts = InMemoryValueCounts.load(args.out) if args.append and Path(args.out).exists() \
            else InMemoryValueCounts()
    n = warm(Path(args.input), args.identity_field, counts, settings, progress=not args.quiet)
    if args.redis:
        print(f"{n} documents counted into Redis ({counts.identities()} identities)", file=sys.stderr)
        return 0
    assert isinstance(counts, InMemoryValueCounts)
    written = counts.save(args.out, args.identity_field)
    print(f"{n} documents, {counts.identities()} identities, {written} values mentioned by 2 or more -> {args.out}",
          file=sys.stderr)
    return 0


def add_commands(subparsers: Any) -> None:
    counts = subparsers.add_parser("counts", help="identities per value (what makes a value common)")
    sub = counts.add_subparsers(dest="counts_command", required=True)
    w = sub.add_parser("warm", help="count the named values of a reference corpus, per identity")
    w.add_argument("--input", required=True, help="JSONL documents {doc_id, text, metadata}")
    w.add_argument("--identity-field", help="metadata field naming the protected identity (default: the document id)")
    where = w.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="write the counts to this JSON file (for anonstream run --counts)")
    where.add_argument("--redis", action="store_true", help="add the counts to the services' Redis")
    w.add_argument("--append", action="store_true", help="add to the counts already in --out")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(func=cmd_warm)
