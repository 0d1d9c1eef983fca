"""The ``anonstream`` command line."""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import sys
from pathlib import Path

from .config import Settings

# Modules that contribute sub-commands through ``add_commands(subparsers)``.
COMMAND_MODULES = ("anonstream.pii.cli", "anonstream.mixture.cli", "anonstream.swap.cli", "anonstream.evaluation.cli", "anonstream.risk.cli", "anonstream.attack.cli", "anonstream.planner.cli",
                   "anonstream.api.cli", "anonstream.runtime.clients", "anonstream.detector.cli",
                   "anonstream.plausibility.cli", "anonstream.synthesis.cli",
                   "anonstream.hierarchy.cli", "anonstream.runtime.counts_cli")


def _run(args: argparse.Namespace) -> int:
    from .runtime.embedded import run

    for path in (args.output, args.report):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    if args.counts:
        settings = dataclasses.replace(settings, value_counts=args.counts)
    report = run(Path(args.input), Path(args.output), Path(args.report) if args.report else None,
                 settings=settings, progress=not args.quiet, swap_log_path=Path(args.swap_log) if args.swap_log else None)
    summary = report.as_dict()
    print(f"documents: {summary['documents_in']} in, {summary['documents_out']} out, "
          f"dead letters: {summary['dead_letters_by_stage'] or 0}, "
          f"{summary['documents_per_second']} documents/s", file=sys.stderr)
    print(f"sanitized documents: {args.output}", file=sys.stderr)
    if args.report:
        print(f"report: {args.report}", file=sys.stderr)
    return 0


def _embed(args: argparse.Namespace) -> int:
    """Embed documents' chunks (as the pipeline chunks them) into an n x d float32 .npy file."""
    import numpy as np
    from tqdm import tqdm

    from . import serde
    from .embedding import Embedder
    from .records import Document
    from .stages.ingest import IngestStage

    settings = Settings()
    ingest = IngestStage(settings.chunk_max_chars, settings.chunk_max_sentences)
    with open(args.input, "rb") as handle:
        documents = [Document.from_wire(serde.loads(line)) for line in handle if line.strip()]
    texts = [c.text for d in tqdm(documents, desc="chunking", unit="doc", disable=args.quiet)
             for c in ingest.chunks(d)]
    embedder = Embedder(args.model or settings.embed_model, settings.embed_batch)
    step = max(1, settings.embed_window)
    parts = [embedder.encode(texts[i:i + step])
             for i in tqdm(range(0, len(texts), step), desc="embedding", unit="batch", disable=args.quiet)]
    X = np.concatenate(parts) if parts else np.empty((0, embedder.dim), dtype=np.float32)
    np.save(args.out, X)
    print(f"{X.shape[0]} chunks x {X.shape[1]} dims ({embedder.model_name}) -> {args.out}", file=sys.stderr)
    return 0


def _service(args: argparse.Namespace) -> int:
    from .runtime.service import run_service

    return run_service(args.name, Settings())


def _topics(args: argparse.Namespace) -> int:
    import asyncio

    from .runtime.kafka import create_topics

    asyncio.run(create_topics(Settings()))
    return 0


def build_parser(command_modules: tuple[str, ...] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="anonstream", description=__doc__)
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING (default: ANONSTREAM_LOG_LEVEL)")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run every stage in one process on a JSONL file (no broker, no Redis)")
    run.add_argument("--input", required=True, help="JSONL: {doc_id, text, metadata} per line")
    run.add_argument("--output", required=True, help="JSONL of sanitized documents")
    run.add_argument("--report", help="JSON report (counts, throughput, audit)")
    run.add_argument("--counts", help="identities per value to start from (anonstream counts warm --out); "
                                      "default ANONSTREAM_VALUE_COUNTS, else none: nothing is common until counted")
    run.add_argument("--swap-log", help="also write the swap log (old and new values of every change: keep it "
                                        "as restricted as the input) as JSONL")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_run)

    embed = sub.add_parser("embed", help="embed the chunks of a JSONL of documents into a .npy matrix")
    embed.add_argument("--input", required=True, help="JSONL: {doc_id, text, metadata} per line")
    embed.add_argument("--out", required=True, help="output .npy (n x d float32, unit rows)")
    embed.add_argument("--model", help="sentence-transformers model (default ANONSTREAM_EMBED_MODEL)")
    embed.add_argument("--quiet", action="store_true", help="no progress bars")
    embed.set_defaults(func=_embed)

    from .runtime.wiring import STAGE_NAMES

    service = sub.add_parser("service", help="run one stage as a Kafka service")
    service.add_argument("name", choices=STAGE_NAMES)
    service.set_defaults(func=_service)

    topics_cmd = sub.add_parser("topics", help="create the pipeline's topics")
    topics_cmd.add_argument("action", choices=["create"])
    topics_cmd.set_defaults(func=_topics)

    for module_name in command_modules:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.add_commands(sub)
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line's arguments. ``anonstream service <stage>``, a long-running process, imports none of the
    other commands' modules: some import scipy and scikit-learn (~90 MiB in every service process)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for i, a in enumerate(argv)
                    if not a.startswith("-") and (i == 0 or argv[i - 1] != "--log-level")), None)
    return build_parser(() if command == "service" else COMMAND_MODULES).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    level = args.log_level or Settings().log_level
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
