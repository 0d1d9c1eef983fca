"""``anonstream produce`` and ``anonstream consume``: documents into and sanitized documents out of the
running services (``make up``), with a progress bar.

    anonstream produce --input docs.jsonl               every line validated first, then produced
                                                        (key doc_id, acks=all); nothing is sent if a line is invalid
    anonstream consume --output out.jsonl --count N     N sanitized documents (read_committed, each doc_id once),
                                                        consumer group <prefix>.consume, committed after the file is written
    anonstream consume --count N --highlight            ... and each printed with its surrogates marked
    anonstream highlight --input out.jsonl              the documents of a JSONL (consume's or ``anonstream run``'s)
                                                        printed with their surrogates marked

Both fail with a clear message (exit 1) when the broker is not reachable or the topic does not exist.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any

from .. import contracts, serde, topics
from ..config import Settings
from ..document_changes import ANSI_MARKERS, MARKERS, highlight

log = logging.getLogger(__name__)


class ClientError(RuntimeError):
    """A message for the user; no document text in it."""


def read_documents(path: Path) -> list[dict[str, Any]]:
    """All lines of a JSONL file as documents, each validated against document.v1.json."""
    documents = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                document = serde.loads(line)
                contracts.validate(topics.DOCUMENTS.schema, document)
            except ValueError as exc:  # orjson's JSONDecodeError and RecordInvalid are ValueErrors
                reason = str(exc) if isinstance(exc, contracts.RecordInvalid) else "not JSON"
                raise ClientError(f"{path}:{number}: {reason}") from None
            documents.append(document)
    return documents


async def _check_topic(settings: Settings, topic: str) -> None:
    """A clear ``ClientError`` when the broker is not reachable or ``topic`` does not exist."""
    from aiokafka import AIOKafkaClient
    from aiokafka.errors import KafkaConnectionError

    from .kafka import security_options

    client = AIOKafkaClient(bootstrap_servers=settings.bootstrap, **security_options(settings))
    try:
        try:
            await client.bootstrap()
        except KafkaConnectionError:
            secured = "" if settings.kafka_security_protocol.upper() == "PLAINTEXT" else (
                f" over {settings.kafka_security_protocol} (or refused the ANONSTREAM_KAFKA_* credentials or CA)")
            raise ClientError(f"Kafka is not reachable at {settings.bootstrap} (ANONSTREAM_BOOTSTRAP){secured}; "
                              "start the services with `make up`") from None
        metadata = await client.fetch_all_metadata()
        if topic not in metadata.topics():
            raise ClientError(f"topic {topic} does not exist at {settings.bootstrap}; `make up` creates it "
                              "(or `anonstream topics create`)")
    finally:
        await client.close()


async def produce(settings: Settings, documents: list[dict[str, Any]], progress: bool = True) -> int:
    from tqdm import tqdm

    from .kafka import producer

    topic = topics.name(topics.DOCUMENTS, settings.topic_prefix)
    await _check_topic(settings, topic)
    client = producer(settings)
    await client.start()
    try:
        with tqdm(total=len(documents), desc="produced", unit="doc", disable=not progress) as bar:
            pending = []
            for document in documents:
                future = await client.send(topic, serde.dumps(document), key=document["doc_id"].encode())
                future.add_done_callback(lambda _: bar.update())
                pending.append(future)
            await asyncio.gather(*pending)  # every acknowledgement (acks=all), or the first error
    finally:
        await client.stop()
    return len(documents)


def _sanitized_document(value: bytes | None) -> dict | None:
    """The sanitized document in a record's value, or None when the value is no JSON object with a doc_id."""
    try:
        document = serde.loads(value) if value is not None else None
    except ValueError:
        return None
    return document if isinstance(document, dict) and isinstance(document.get("doc_id"), str) else None


def highlighted(document: dict[str, Any], color: bool) -> str:
    """A sanitized document for a reader: a header with its id and number of changes, then its text with every
    surrogate marked (ANSI colour, else ⟦…⟧). A document without ``changes`` (written before sink@2) is shown
    unmarked and says so."""
    changes = document.get("changes")
    if changes is None:
        header = f"── {document['doc_id']} (no changes recorded: written before sink@2)"
        return f"{header}\n{document['text']}"
    header = f"── {document['doc_id']} ({len(changes)} changes)"
    return f"{header}\n{highlight(document['text'], changes, ANSI_MARKERS if color else MARKERS)}"


async def consume(settings: Settings, output: Path | None, count: int, idle_timeout_s: float,
                  progress: bool = True, show=None) -> int:
    """``show``: called with each new document (``--highlight`` prints it)."""
    import contextlib

    from tqdm import tqdm

    from .kafka import consumer

    topic = topics.name(topics.SANITIZED, settings.topic_prefix)
    await _check_topic(settings, topic)
    client = consumer(settings, [topic], f"{settings.topic_prefix}.consume", isolation_level="read_committed")
    await client.start()
    seen: set[str] = set()
    try:
        with (output.open("ab") if output is not None else contextlib.nullcontext()) as out, \
                tqdm(total=count, desc="consumed", unit="doc", disable=not progress) as bar:
            last_progress = time.monotonic()
            while len(seen) < count:
                if time.monotonic() - last_progress > idle_timeout_s:
                    raise ClientError(f"{len(seen)} of {count} sanitized documents after waiting "
                                      f"{idle_timeout_s:.0f} s for more on {topic}")
                batch = await client.getmany(timeout_ms=1000, max_records=count - len(seen))
                for records in batch.values():
                    for record in records:
                        document = _sanitized_document(record.value)
                        if document is None:  # not written by the sink: said (where, not what), not counted
                            log.warning("skipped a record that is no sanitized document (%s[%d] offset %d)",
                                        record.topic, record.partition, record.offset)
                            continue
                        if document["doc_id"] in seen:  # the sink re-emits after a crash: same document
                            continue
                        seen.add(document["doc_id"])
                        if out is not None:
                            out.write(serde.dumps(document) + b"\n")
                        if show is not None:
                            show(document)
                        bar.update()
                        last_progress = time.monotonic()
                if batch:
                    if out is not None:
                        out.flush()
                    await client.commit()
    finally:
        await client.stop()
    return len(seen)


def cmd_produce(args: argparse.Namespace) -> int:
    try:
        documents = read_documents(Path(args.input))
        n = asyncio.run(produce(Settings(), documents, progress=not args.quiet))
    except ClientError as exc:
        print(f"anonstream produce: {exc}", file=sys.stderr)
        return 1
    print(f"{n} documents produced to {topics.name(topics.DOCUMENTS, Settings().topic_prefix)}", file=sys.stderr)
    return 0


def _color(choice: str) -> bool:
    return choice == "always" or (choice == "auto" and sys.stdout.isatty())


def cmd_consume(args: argparse.Namespace) -> int:
    if args.output is None and not args.highlight:
        print("anonstream consume: give --output, --highlight or both", file=sys.stderr)
        return 2
    output = Path(args.output) if args.output else None
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
    color = _color(args.color)
    show = (lambda document: print(highlighted(document, color), flush=True)) if args.highlight else None
    try:
        n = asyncio.run(consume(Settings(), output, args.count, args.timeout, progress=not args.quiet, show=show))
    except ClientError as exc:
        print(f"anonstream consume: {exc}", file=sys.stderr)
        return 1
    where = f"appended to {output}" if output is not None else "consumed"
    print(f"{n} sanitized documents {where}", file=sys.stderr)
    return 0


def cmd_highlight(args: argparse.Namespace) -> int:
    color = _color(args.color)
    path = Path(args.input)
    if not path.is_file():
        print(f"anonstream highlight: {path}: no such file", file=sys.stderr)
        return 1
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            document = _sanitized_document(line)
            if document is None or not isinstance(document.get("text"), str):
                print(f"anonstream highlight: {path}:{number}: not a sanitized document", file=sys.stderr)
                return 1
            print(highlighted(document, color))
    return 0


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser("produce", help="produce a JSONL of documents to the running services' input topic")
    p.add_argument("--input", required=True, help="JSONL: {doc_id, text, metadata} per line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_produce)

    c = subparsers.add_parser("consume", help="read sanitized documents from the running services into a JSONL file")
    c.add_argument("--output", help="JSONL file the sanitized documents are appended to")
    c.add_argument("--count", required=True, type=int, help="stop after this many distinct documents")
    c.add_argument("--timeout", type=float, default=300.0,
                   help="give up after this many seconds without a new document (default 300)")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.add_argument("--highlight", action="store_true",
                   help="print each document to stdout with its surrogates marked (its changes)")
    c.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="mark surrogates in colour (auto: when stdout is a terminal; otherwise ⟦…⟧)")
    c.set_defaults(func=cmd_consume)

    h = subparsers.add_parser("highlight", help="print sanitized documents (JSONL) with their surrogates marked")
    h.add_argument("--input", required=True, help="JSONL of sanitized documents (anonstream consume or run output)")
    h.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="mark surrogates in colour (auto: when stdout is a terminal; otherwise ⟦…⟧)")
    h.set_defaults(func=cmd_highlight)
